/* Helpers of the MPI entry points: every PMPI_File_x is defined here with MPI_File_x a weak
 * alias, so that a profiling tool preloaded before ampio still intercepts MPI_File_x and its
 * PMPI_File_x call lands in ampio. */
#ifndef AMP_API_H
#define AMP_API_H

#include <mpi.h>

#include "core/err.h"
#include "file/errh.h"
#include "file/fileops.h"
#include "file/handle.h"
#include "file/init.h"
#include "op/op.h"

#define AMP_WEAK(name) AMP_ALIAS(MPI_File_##name, PMPI_File_##name)
/* MPI_x as a weak, exported alias of PMPI_x. */
#define AMP_ALIAS(mpi_name, pmpi_name)                                                             \
    extern __typeof__(pmpi_name) mpi_name                                                          \
        __attribute__((weak, alias(#pmpi_name), visibility("default")));

/* Looks up the file behind `fh`; on failure returns the raised error. */
static inline int amp_api_file(MPI_File fh, const char *routine, amp_file_t **f)
{
    int rc = amp_init();
    if (rc != MPI_SUCCESS)
        return rc;
    amp_op_progress(); /* every call advances the nonblocking accesses in progress */
    *f = amp_handle_get(fh);
    if (*f)
        return MPI_SUCCESS;
    rc = amp_err(MPI_ERR_FILE, "%s: %s is not an open file", routine,
                 fh == MPI_FILE_NULL ? "MPI_FILE_NULL" : "the handle");
    return amp_errh_raise(NULL, rc, routine);
}

/* The common body of routines that take a file and raise their error on it. */
#define AMP_API_ON_FILE(fh, routine, call)                                                         \
    do {                                                                                           \
        amp_file_t *f_;                                                                            \
        int rc_ = amp_api_file(fh, routine, &f_);                                                  \
        if (rc_ != MPI_SUCCESS)                                                                    \
            return rc_;                                                                            \
        amp_file_t *f = f_;                                                                        \
        rc_ = (call);                                                                              \
        return amp_errh_raise(f, rc_, routine);                                                    \
    } while (0)

/* Checks a pointer argument. */
#define AMP_API_NEED(ptr, routine, what)                                                           \
    ((ptr) ? MPI_SUCCESS : amp_err(MPI_ERR_ARG, "%s: the %s argument is NULL", routine, what))

#endif
