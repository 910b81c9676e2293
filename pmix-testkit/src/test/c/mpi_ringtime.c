/*
 * mpi_ringtime.c -- how long L trips of a token around a ring of all ranks take (Open MPI),
 * and L barriers: the latency that busy-polling ranks ruin when a node runs more ranks than it
 * has processors and Open MPI is not told to yield.
 *
 *   mpi_ringtime [L]     (default 1000)
 *
 * Rank 0 prints "ring L trips S s" and "barrier L S s"; every rank "rank R done".
 * Build: mpicc -O1 -o mpi_ringtime mpi_ringtime.c
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int loops = argc > 1 ? atoi(argv[1]) : 1000;
    int rank, size, token = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < loops; i++) {
        if (0 == rank) {
            token++;
            MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
        }
    }
    double t1 = MPI_Wtime();
    for (int i = 0; i < loops; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double t2 = MPI_Wtime();
    if (0 == rank) {
        if (token != loops) {
            printf("FAILED token %d after %d trips\n", token, loops);
        }
        printf("ring %d trips %.4f s\nbarrier %d %.4f s\n", loops, t1 - t0, loops, t2 - t1);
    }
    printf("rank %d done\n", rank);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
