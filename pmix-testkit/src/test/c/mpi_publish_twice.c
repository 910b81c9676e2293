/*
 * mpi_publish_twice.c -- MPI_Publish_name's collision as an MPI program meets
 * it (DataServiceIT): rank 0 publishes the service "pmix-java-svc-twice",
 * then, after a barrier, rank 1 publishes the same service name with its own
 * port; then every rank looks the name up. Errors are returned, not fatal.
 *
 * Output, one line each:
 *   PUBLISH <rank> <MPI error class> <MPI error string>
 *   LOOKUP <rank> <MPI error class> <port found, or ->
 * Exit status 0 (the test judges the lines).
 *
 * Build: mpicc -o mpi_publish_twice mpi_publish_twice.c
 */
#include <mpi.h>
#include <stdio.h>

#define SERVICE "pmix-java-svc-twice"

static int error_class(int rc)
{
    int cls = rc;
    if (MPI_SUCCESS != rc) MPI_Error_class(rc, &cls);
    return cls;
}

int main(int argc, char **argv)
{
    int rank, rc, len;
    char port[MPI_MAX_PORT_NAME], found[MPI_MAX_PORT_NAME], msg[MPI_MAX_ERROR_STRING];
    MPI_Init(&argc, &argv);
    /* The name service reports its errors on MPI_COMM_WORLD (some
     * implementations on MPI_COMM_SELF): return them on both. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(port, sizeof(port), "port-of-rank-%d", rank);
    for (int turn = 0; turn < 2; turn++) {
        if (turn == rank) {
            rc = MPI_Publish_name(SERVICE, MPI_INFO_NULL, port);
            MPI_Error_string(rc, msg, &len);
            printf("PUBLISH %d %d %s\n", rank, error_class(rc), msg);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    rc = MPI_Lookup_name(SERVICE, MPI_INFO_NULL, found);
    printf("LOOKUP %d %d %s\n", rank, error_class(rc), MPI_SUCCESS == rc ? found : "-");
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == rank) MPI_Unpublish_name(SERVICE, MPI_INFO_NULL, port);
    MPI_Finalize();
    return 0;
}
