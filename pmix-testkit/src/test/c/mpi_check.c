/* An MPI program for pmixrun that checks what it gets back (exit status 1 on a wrong result).
 *
 *   mpi_check            every rank prints "rank R of N", then MPI_Barrier, MPI_Allreduce (sum
 *                        of rank+1, expected N(N+1)/2) and a point-to-point ring (each rank sends
 *                        its rank to rank+1 and receives rank-1's), printing one "ok" line per
 *                        check: "rank R barrier ok", "rank R allreduce ok sum S",
 *                        "rank R ring ok got P".
 *   mpi_check --publish  (2 or more ranks) also: rank 0 opens a port (MPI_Open_port) and
 *                        publishes it as the service "pmix-java-mpi-check" (MPI_Publish_name,
 *                        served by the launcher's PMIx data server); after a barrier rank 1
 *                        looks it up (MPI_Lookup_name) and compares it with the string rank 0
 *                        sent it point-to-point; after a second barrier rank 0 unpublishes it
 *                        and closes the port. Lines: "rank 0 published <port>",
 *                        "rank 1 lookup ok <port>", "rank 0 unpublished".
 * Every failure prints "rank R FAILED: ..." on stderr. The last line of every rank that passed
 * is "rank R done". */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define SERVICE "pmix-java-mpi-check"

static int rank = -1;

static int fail(const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, msg, &len);
    }
    fprintf(stderr, "rank %d FAILED: %s%s%s\n", rank, what, rc != MPI_SUCCESS ? ": " : "", msg);
    fflush(stderr);
    return 1;
}

int main(int argc, char **argv)
{
    int size, rc, publish = argc > 1 && strcmp(argv[1], "--publish") == 0;
    MPI_Init(&argc, &argv);
    /* Errors come back as return codes, so the program can say which call failed. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("rank %d of %d\n", rank, size);
    fflush(stdout);

    if ((rc = MPI_Barrier(MPI_COMM_WORLD)) != MPI_SUCCESS) {
        return fail("MPI_Barrier", rc);
    }
    printf("rank %d barrier ok\n", rank);

    int mine = rank + 1, sum = 0, expected = size * (size + 1) / 2;
    if ((rc = MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD)) != MPI_SUCCESS) {
        return fail("MPI_Allreduce", rc);
    }
    if (sum != expected) {
        fprintf(stderr, "rank %d FAILED: MPI_Allreduce sum %d, expected %d\n", rank, sum, expected);
        return 1;
    }
    printf("rank %d allreduce ok sum %d\n", rank, sum);

    int next = (rank + 1) % size, prev = (rank + size - 1) % size, got = -1;
    if ((rc = MPI_Sendrecv(&rank, 1, MPI_INT, next, 7, &got, 1, MPI_INT, prev, 7, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE)) != MPI_SUCCESS) {
        return fail("MPI_Sendrecv (ring)", rc);
    }
    if (got != prev) {
        fprintf(stderr, "rank %d FAILED: ring received %d, expected %d\n", rank, got, prev);
        return 1;
    }
    printf("rank %d ring ok got %d\n", rank, got);
    fflush(stdout);

    if (publish) {
        char port[MPI_MAX_PORT_NAME] = "", sent[MPI_MAX_PORT_NAME] = "", found[MPI_MAX_PORT_NAME] = "";
        if (size < 2) {
            return fail("--publish needs 2 or more ranks", MPI_SUCCESS);
        }
        if (rank == 0) {
            if ((rc = MPI_Open_port(MPI_INFO_NULL, port)) != MPI_SUCCESS) {
                return fail("MPI_Open_port", rc);
            }
            if ((rc = MPI_Publish_name(SERVICE, MPI_INFO_NULL, port)) != MPI_SUCCESS) {
                return fail("MPI_Publish_name", rc);
            }
            printf("rank 0 published %s\n", port);
            fflush(stdout);
            MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 1, 8, MPI_COMM_WORLD);
        } else if (rank == 1) {
            MPI_Recv(sent, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        MPI_Barrier(MPI_COMM_WORLD); /* published before anyone looks */
        int bad = 0;
        if (rank == 1) {
            if ((rc = MPI_Lookup_name(SERVICE, MPI_INFO_NULL, found)) != MPI_SUCCESS) {
                fail("MPI_Lookup_name", rc);
                bad = 1;
            } else if (strcmp(found, sent) != 0) {
                fprintf(stderr, "rank 1 FAILED: MPI_Lookup_name found \"%s\", rank 0 published \"%s\"\n",
                        found, sent);
                bad = 1;
            } else {
                printf("rank 1 lookup ok %s\n", found);
                fflush(stdout);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD); /* looked up before it goes away */
        if (rank == 0) {
            if ((rc = MPI_Unpublish_name(SERVICE, MPI_INFO_NULL, port)) != MPI_SUCCESS) {
                fail("MPI_Unpublish_name", rc);
                bad = 1;
            } else {
                printf("rank 0 unpublished\n");
            }
            MPI_Close_port(port);
        }
        if (bad) {
            MPI_Finalize();
            return 1;
        }
    }

    printf("rank %d done\n", rank);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
