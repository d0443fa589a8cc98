/* hang_finalize.c - a test shim, loaded with LD_PRELOAD into tunefarm's ranks,
 * for the finalize timeout (main.c, finalize_bounded): the rank named by
 * TF_TEST_HANG_RANK never gets through MPI_Finalize (it sleeps there), as a
 * rank does whose closing barrier was lost; every other rank finalizes for
 * real. Built by tests/integration/run.sh with mpicc -shared. */
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

int MPI_Finalize(void)
{
    const char *hang = getenv("TF_TEST_HANG_RANK");
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (hang != NULL && atoi(hang) == rank)
        for (;;)
            pause(); /* until a signal handler ends the process */
    return PMPI_Finalize();
}
