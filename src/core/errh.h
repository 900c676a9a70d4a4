/* File error handlers. A file error handler is a host MPI_Errhandler object (so that
 * MPI_Errhandler_free works) whose function ampio remembers and calls itself. */
#ifndef AMP_ERRH_H
#define AMP_ERRH_H

#include "core/file.h"

int amp_errh_create(MPI_File_errhandler_function *fn, MPI_Errhandler *out);

/* Whether `eh` may be attached to a file: predefined, or made by MPI_File_create_errhandler. */
int amp_errh_valid(MPI_Errhandler eh);

/* The handler new files get: the one set on MPI_FILE_NULL (MPI_ERRORS_RETURN at first). */
MPI_Errhandler amp_errh_default(void);
void amp_errh_set_default(MPI_Errhandler eh);

/* Raises `code` on file `f` (NULL: on MPI_FILE_NULL) from `routine`; returns `code` when the
 * handler returns. */
int amp_errh_raise(amp_file_t *f, int code, const char *routine);

void amp_errh_finalize(void);

#endif
