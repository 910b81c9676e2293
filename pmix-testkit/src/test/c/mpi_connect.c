/*
 * mpi_connect.c -- MPI_Comm_accept/MPI_Comm_connect through the name service (OpenMpi5IT):
 *
 *   mpi_connect N   the parent job's rank 0 opens a port and publishes it as the service
 *                   "pmix-java-mpi-connect" (MPI_Publish_name, MPI_INFO_NULL); the parent job
 *                   spawns N children (MPI_Comm_spawn) and accepts on the port, while the
 *                   children's rank 0 looks the service up (MPI_Lookup_name, MPI_INFO_NULL) and
 *                   the children connect to it. Over the new intercommunicator each side sums
 *                   rank+1 of the other side (MPI_Allreduce) and disconnects; the parents also
 *                   disconnect the spawn's intercommunicator, and rank 0 unpublishes and closes
 *                   the port.
 *
 * Lines (deterministic, no port names): "parent R accept ok remote=N sum=S",
 * "child R connect ok remote=P sum=S", "rank 0 unpublished" (parent), "parent R done",
 * "child R done"; "FAILED ..." on a wrong result or error (errors are returned, not fatal).
 * Build: mpicc -O1 -o mpi_connect mpi_connect.c
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SERVICE "pmix-java-mpi-connect"

static int failed(const char *side, int rank, const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    printf("FAILED %s %d %s: %s\n", side, rank, what, msg);
    fflush(stdout);
    return 1;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2;
    int rank, size, remote, sum = 0, mine, rc;
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm parent, spawned, conn;
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_get_parent(&parent);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mine = rank + 1;
    if (MPI_COMM_NULL == parent) {
        if (0 == rank) {
            if (MPI_SUCCESS != (rc = MPI_Open_port(MPI_INFO_NULL, port))) {
                return failed("parent", rank, "MPI_Open_port", rc);
            }
            if (MPI_SUCCESS != (rc = MPI_Publish_name(SERVICE, MPI_INFO_NULL, port))) {
                return failed("parent", rank, "MPI_Publish_name", rc);
            }
        }
        /* Published before any child can look. */
        char *cargv[2] = {argv[1], NULL};
        int errs[64];
        if (MPI_SUCCESS != (rc = MPI_Comm_spawn(argv[0], cargv, n, MPI_INFO_NULL, 0,
                                                MPI_COMM_WORLD, &spawned, errs))) {
            return failed("parent", rank, "MPI_Comm_spawn", rc);
        }
        if (MPI_SUCCESS != (rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &conn))) {
            return failed("parent", rank, "MPI_Comm_accept", rc);
        }
        MPI_Comm_remote_size(conn, &remote);
        MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, conn);
        if (remote != n || sum != n * (n + 1) / 2) {
            printf("FAILED parent %d remote=%d sum=%d\n", rank, remote, sum);
        } else {
            printf("parent %d accept ok remote=%d sum=%d\n", rank, remote, sum);
        }
        fflush(stdout);
        MPI_Comm_disconnect(&conn);
        MPI_Comm_disconnect(&spawned);
        if (0 == rank) {
            if (MPI_SUCCESS != (rc = MPI_Unpublish_name(SERVICE, MPI_INFO_NULL, port))) {
                failed("parent", rank, "MPI_Unpublish_name", rc);
            } else {
                printf("rank 0 unpublished\n");
            }
            MPI_Close_port(port);
        }
        printf("parent %d done\n", rank);
    } else {
        if (0 == rank) {
            if (MPI_SUCCESS != (rc = MPI_Lookup_name(SERVICE, MPI_INFO_NULL, port))) {
                return failed("child", rank, "MPI_Lookup_name", rc);
            }
        }
        if (MPI_SUCCESS != (rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &conn))) {
            return failed("child", rank, "MPI_Comm_connect", rc);
        }
        MPI_Comm_remote_size(conn, &remote);
        MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, conn);
        if (size != n || sum != remote * (remote + 1) / 2) {
            printf("FAILED child %d size=%d remote=%d sum=%d\n", rank, size, remote, sum);
        } else {
            printf("child %d connect ok remote=%d sum=%d\n", rank, remote, sum);
        }
        fflush(stdout);
        MPI_Comm_disconnect(&conn);
        MPI_Comm_disconnect(&parent);
        printf("child %d done\n", rank);
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
