/* Entry points for file error handlers. */
#include "api/api.h"

#pragma GCC visibility push(default)

int PMPI_File_create_errhandler(MPI_File_errhandler_function *function, MPI_Errhandler *errhandler)
{
    const char *routine = "MPI_File_create_errhandler";
    int rc = amp_init();
    if (rc != MPI_SUCCESS)
        return rc;
    rc = AMP_API_NEED(errhandler, routine, "errhandler");
    if (rc == MPI_SUCCESS)
        rc = amp_errh_create(function, errhandler);
    return amp_errh_raise(NULL, rc, routine);
}
AMP_WEAK(create_errhandler)

int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    const char *routine = "MPI_File_set_errhandler";
    int rc = amp_init();
    if (rc != MPI_SUCCESS)
        return rc;
    amp_file_t *f = NULL;
    if (file != MPI_FILE_NULL && !(f = amp_handle_get(file)))
        return amp_errh_raise(NULL, amp_err(MPI_ERR_FILE, "%s: not an open file", routine),
                              routine);
    if (!amp_errh_valid(errhandler))
        return amp_errh_raise(f, amp_err(MPI_ERR_ARG, "%s: not a file error handler", routine),
                              routine);
    if (f) {
        rc = amp_errh_attach(&f->errh_holder, errhandler);
        if (rc == MPI_SUCCESS)
            f->errhandler = errhandler;
    } else {
        rc = amp_errh_set_default(errhandler);
    }
    return amp_errh_raise(f, rc, routine);
}
AMP_WEAK(set_errhandler)

int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    const char *routine = "MPI_File_get_errhandler";
    int rc = amp_init();
    if (rc != MPI_SUCCESS)
        return rc;
    amp_file_t *f = NULL;
    if (file != MPI_FILE_NULL && !(f = amp_handle_get(file)))
        return amp_errh_raise(NULL, amp_err(MPI_ERR_FILE, "%s: not an open file", routine),
                              routine);
    rc = AMP_API_NEED(errhandler, routine, "errhandler");
    if (rc != MPI_SUCCESS)
        return amp_errh_raise(f, rc, routine);
    rc = f ? amp_errh_get(f->errh_holder, f->errhandler, errhandler)
           : amp_errh_get_default(errhandler);
    return amp_errh_raise(f, rc, routine);
}
AMP_WEAK(get_errhandler)

int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    const char *routine = "MPI_File_call_errhandler";
    int rc = amp_init();
    if (rc != MPI_SUCCESS)
        return rc;
    amp_file_t *f = NULL;
    if (fh != MPI_FILE_NULL && !(f = amp_handle_get(fh)))
        return amp_errh_raise(NULL, amp_err(MPI_ERR_FILE, "%s: not an open file", routine),
                              routine);
    amp_errh_raise(f, errorcode, routine);
    return MPI_SUCCESS;
}
AMP_WEAK(call_errhandler)

#pragma GCC visibility pop
