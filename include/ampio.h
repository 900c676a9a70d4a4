/* ampio: adaptive MPI-IO over any MPI.
 *
 * Applications use the standard MPI_File_* interface; this header only adds the few ampio_
 * routines that describe the library itself. */
#ifndef AMPIO_H
#define AMPIO_H

#include <mpi.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the library, e.g. "0.1.0". */
const char *ampio_version(void);

/* MPI family the library was built against: "openmpi", "mpich" or "other". */
const char *ampio_mpi_family(void);

/* Prints every ampio parameter with the value in effect for a file opened with `hints`
 * (MPI_INFO_NULL for none) and where that value came from. Returns an MPI error code. */
int ampio_print_config(FILE *out, MPI_Info hints);

/* The same for a file at `path`: the values its file system gets (config file keys
 * "name@mount point", such as the k ampio-calibrate --save keeps per file system), then the
 * file system, its provider and the file's layout (striping unit and count). */
int ampio_print_file_config(FILE *out, const char *path, MPI_Info hints);

#ifdef __cplusplus
}
#endif

#endif
