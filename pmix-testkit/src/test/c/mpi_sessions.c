/*
 * MPI-4 sessions under a PMIx server (issue #16): MPI_Session_init, MPI_Group_from_session_pset
 * ("mpi://WORLD"), MPI_Comm_create_from_group (Open MPI 5 asks the PMIx server for a context id
 * through PMIx_Group_construct), an MPI_Allreduce and a ring on the new communicator, then
 * MPI_Session_finalize. Each step prints one line per rank; a failure prints FAILED and exits 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void check(int rc, const char *what, int rank) {
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        printf("rank %d %s FAILED: %s\n", rank, what, msg);
        fflush(stdout);
        exit(1);
    }
}

int main(int argc, char **argv) {
    MPI_Session session;
    MPI_Group group;
    MPI_Comm comm;
    int rank = -1, size = 0, sum = 0, got = -1;
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    (void) argv;

    check(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session), "MPI_Session_init", rank);
    check(MPI_Group_from_session_pset(session, "mpi://WORLD", &group),
          "MPI_Group_from_session_pset", rank);
    MPI_Group_rank(group, &rank);
    MPI_Group_size(group, &size);
    printf("rank %d of %d in mpi://WORLD\n", rank, size);
    for (int i = 0; i < rounds; i++) {
        check(MPI_Comm_create_from_group(group, "io.pmix.test.sessions", MPI_INFO_NULL,
                                         MPI_ERRORS_RETURN, &comm),
              "MPI_Comm_create_from_group", rank);
        int crank = -1, csize = 0;
        MPI_Comm_rank(comm, &crank);
        MPI_Comm_size(comm, &csize);
        int one = crank + 1;
        check(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm), "MPI_Allreduce", rank);
        int next = (crank + 1) % csize, prev = (crank + csize - 1) % csize;
        check(MPI_Sendrecv(&crank, 1, MPI_INT, next, 7, &got, 1, MPI_INT, prev, 7, comm,
                           MPI_STATUS_IGNORE),
              "MPI_Sendrecv", rank);
        printf("rank %d comm %d of %d allreduce sum %d ring got %d\n", rank, crank, csize, sum,
               got);
        check(MPI_Comm_free(&comm), "MPI_Comm_free", rank);
    }
    MPI_Group_free(&group);
    check(MPI_Session_finalize(&session), "MPI_Session_finalize", rank);
    printf("rank %d done\n", rank);
    return 0;
}
