/* MPI_Init and MPI_Init_thread, interposed for one reason: MPI_Finalize deletes the attributes
 * of MPI_COMM_SELF last set first, and libraries such as HDF5 close their files from such an
 * attribute. Set right after MPI's own initialisation, ampio's clean-up attribute is the first
 * one, so its delete callback (which reaps the files still open) runs after every other and
 * the files those callbacks close are still ampio's. Without this interposition (MPI
 * initialised past it) the attribute is set at the first MPI_File call, as before. */
#include "api/api.h"

#pragma GCC visibility push(default)

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        amp_init(); /* a failure leaves the attribute to the first MPI_File call */
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        amp_init();
    return rc;
}

#pragma GCC visibility pop
