/* File error handlers. A file error handler is a host MPI_Errhandler object (so that
 * MPI_Errhandler_free works) whose function ampio remembers and calls itself. */
#ifndef AMP_ERRH_H
#define AMP_ERRH_H

#include "io/file.h"

int amp_errh_create(MPI_File_errhandler_function *fn, MPI_Errhandler *out);

/* Whether `eh` may be attached to a file: predefined, or made by MPI_File_create_errhandler. */
int amp_errh_valid(MPI_Errhandler eh);

/* The handler new files get: the one set on MPI_FILE_NULL (MPI_ERRORS_RETURN at first). */
MPI_Errhandler amp_errh_default(void);
int amp_errh_set_default(MPI_Errhandler eh);
int amp_errh_get_default(MPI_Errhandler *out);

/* A handler stays alive while a file or MPI_FILE_NULL uses it: the host counts one reference
 * per communicator a handler is set on, so each user holds its handler on a private duplicate
 * of MPI_COMM_SELF (`*holder`, created on first need), and get returns a new reference that
 * the caller frees, as the standard says. */
int amp_errh_attach(MPI_Comm *holder, MPI_Errhandler eh);
int amp_errh_get(MPI_Comm holder, MPI_Errhandler eh, MPI_Errhandler *out);
void amp_errh_detach(MPI_Comm *holder);

/* Raises `code` on file `f` (NULL: on MPI_FILE_NULL) from `routine`; returns `code` when the
 * handler returns. */
int amp_errh_raise(amp_file_t *f, int code, const char *routine);

void amp_errh_finalize(void);

#endif
