/* Error codes. An error is decided where it happens: the code returned is an MPI error code of
 * the right class whose MPI_Error_string names the problem (file, offset, errno text). */
#ifndef AMP_ERR_H
#define AMP_ERR_H

#include <mpi.h>
#include <stddef.h>

#define AMP_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* A new error code of class `cls` carrying a formatted message. */
int amp_err(int cls, const char *fmt, ...) AMP_PRINTF(2, 3);

/* A new error code for a failed system call: the class follows `errnum` (ENOSPC gives
 * MPI_ERR_NO_SPACE, EACCES MPI_ERR_ACCESS, ...) and strerror(errnum) ends the message. */
int amp_err_errno(int errnum, const char *fmt, ...) AMP_PRINTF(2, 3);

/* The MPI error class that describes `errnum`. */
int amp_err_class_of_errno(int errnum);

/* On a thread that must not call MPI (ampio's I/O threads): from now on errors made on this
 * thread are written to `msg` (the last one wins) and returned as their bare class, with no
 * MPI call; NULL ends that. The owner of the work makes the real code later, on its thread. */
void amp_err_capture(char *msg, size_t len);

/* The class of an MPI error code (MPI_SUCCESS for MPI_SUCCESS). */
int amp_err_class(int code);

/* The symbolic name of an error class, e.g. "MPI_ERR_IO". */
const char *amp_err_class_name(int cls);

/* Returns a code of the same class as `code` whose message also names the rank that decided
 * it; used when an error is agreed on across ranks. */
int amp_err_from_rank(int cls, int rank, const char *what);

#endif
