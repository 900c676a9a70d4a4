/* The C side of f_mpiio: MPI_File handles crossing between Fortran and C. */
#include <dlfcn.h>
#include <mpi.h>
#include <stddef.h>

int c_write_through(MPI_Fint fint, int rank, int n);
MPI_Fint c_open(const char *path, MPI_Fint comm);
int c_under_ampio(void);

static int value(int i, int j)
{
    return j * 10007 + i * 31 - 5;
}

/* Writes rank's block of n integers at rank*n through the Fortran handle `fint`, and returns
 * the handle converted back to Fortran (which must be `fint` again). */
int c_write_through(MPI_Fint fint, int rank, int n)
{
    MPI_File fh = MPI_File_f2c(fint);
    int buf[64];
    for (int k = 0; k < n && k < 64; k++)
        buf[k] = value(k + 1, 3000 + rank);
    if (MPI_File_write_at_all(fh, (MPI_Offset)rank * n * 4, buf, n, MPI_INT, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS)
        return -2;
    return MPI_File_c2f(fh);
}

/* Opens `path` from C and gives the handle to Fortran. */
MPI_Fint c_open(const char *path, MPI_Fint comm)
{
    MPI_File fh;
    if (MPI_File_open(MPI_Comm_f2c(comm), path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                      &fh) != MPI_SUCCESS)
        return -1;
    return MPI_File_c2f(fh);
}

/* Whether ampio is the MPI-IO of this process (the native MPI-IO's own defects are notes). */
int c_under_ampio(void)
{
    return dlsym(RTLD_DEFAULT, "ampio_version") != NULL;
}
