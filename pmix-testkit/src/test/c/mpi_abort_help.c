/*
 * An Open MPI program for PmixRunLogIT: rank 1 calls MPI_Abort after a barrier. Open MPI 5
 * prints its "MPI_ABORT was invoked" help message through PMIx_Log_nb (pmix.log.stderr),
 * printing it itself only when the log fails.
 */
#include <mpi.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (1 == rank) {
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
