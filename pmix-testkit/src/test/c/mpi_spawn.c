/*
 * mpi_spawn.c -- MPI_Comm_spawn under a launcher (Open MPI 4.1):
 *
 *   mpi_spawn N            every rank of the parent job spawns N children together
 *                          (MPI_Comm_spawn, root 0); parent and children each check the size
 *                          of the other side, exchange ranks over the intercommunicator
 *                          (MPI_Allreduce of rank+1 across it) and disconnect
 *   mpi_spawn N --fail C   the same, but each child exits with status C before MPI_Init: the
 *                          launcher must end the parents, not leave them waiting in the spawn
 *
 * Prints "parent R ok children=N sum=S" and "child R ok parents=P sum=S" lines, "FAILED ..."
 * on a wrong result.
 * Build: mpicc -O1 -o mpi_spawn mpi_spawn.c
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2;
    if (argc > 3 && 0 == strcmp(argv[2], "--child-fail")) {
        return atoi(argv[3]);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm parent, inter;
    int rank, size, remote, sum, mine;
    MPI_Comm_get_parent(&parent);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (MPI_COMM_NULL == parent) {
        char *cargv[4] = {argv[1], NULL, NULL, NULL};
        if (argc > 3 && 0 == strcmp(argv[2], "--fail")) {
            cargv[1] = "--child-fail";
            cargv[2] = argv[3];
        }
        int errs[64];
        MPI_Comm_spawn(argv[0], cargv, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
        MPI_Comm_remote_size(inter, &remote);
        mine = rank + 1;
        /* Across an intercommunicator each side gets the other side's sum. */
        MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter);
        if (remote != n || sum != n * (n + 1) / 2) {
            printf("FAILED parent %d children=%d sum=%d\n", rank, remote, sum);
        } else {
            printf("parent %d ok children=%d sum=%d\n", rank, remote, sum);
        }
        MPI_Comm_disconnect(&inter);
    } else {
        MPI_Comm_remote_size(parent, &remote);
        mine = rank + 1;
        MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, parent);
        if (size != n || sum != remote * (remote + 1) / 2) {
            printf("FAILED child %d size=%d parents=%d sum=%d\n", rank, size, remote, sum);
        } else {
            printf("child %d ok parents=%d sum=%d\n", rank, remote, sum);
        }
        MPI_Comm_disconnect(&parent);
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
