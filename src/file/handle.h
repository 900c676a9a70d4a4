/* The table of live files: validates MPI_File handles and numbers them for Fortran. */
#ifndef AMP_HANDLE_H
#define AMP_HANDLE_H

#include "io/file.h"

/* Registers `f` and sets f->fint. */
int amp_handle_add(amp_file_t *f);
void amp_handle_remove(amp_file_t *f);

/* The live file behind `fh`, or NULL if `fh` is not one. */
amp_file_t *amp_handle_get(MPI_File fh);

MPI_File amp_handle_from_fint(MPI_Fint fint);

/* The first live file for which `match` returns nonzero, or NULL. */
amp_file_t *amp_handle_find(int (*match)(amp_file_t *, void *), void *ctx);

/* Calls `fn` on every live file (used at MPI_Finalize). */
void amp_handle_foreach(void (*fn)(amp_file_t *));

#endif
