/* File error handlers: MPI_ERRORS_RETURN by default, the handler of MPI_FILE_NULL for opens and
 * as the default of new files, user handlers called once per error with the file and the code,
 * MPI_File_call_errhandler, and handlers that outlive MPI_Errhandler_free. */
#include "errtest.h"

static int calls;
static MPI_File last_file;
static int last_code;

static void counting_handler(MPI_File *fh, int *code, ...)
{
    calls++;
    last_file = *fh;
    last_code = *code;
}

static void comm_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
}

static void reset(void)
{
    calls = 0;
    last_file = (MPI_File)&calls;
    last_code = MPI_SUCCESS;
}

/* The handler ran exactly once for `fh` with the code `rc` (of class `cls`) returned. */
static void called_once(MPI_File fh, int rc, int cls, const char *what)
{
    amptest_class(rc, cls, what);
    amptest_check(calls == 1, "%s: the handler ran %d times", what, calls);
    if (calls != 1)
        return;
    amptest_check(last_file == fh, "%s: the handler got another file", what);
    int got = MPI_SUCCESS;
    MPI_Error_class(last_code, &got);
    amptest_check(got == cls && last_code == rc, "%s: the handler got code %d of class %d", what,
                  last_code, got);
}

/* MPI_File_get_errhandler returns a new reference that the caller frees, as for communicators;
 * the file keeps its own. */
static void references(MPI_File fh)
{
    MPI_Errhandler user, got;
    amptest_ok(MPI_File_create_errhandler(counting_handler, &user), "create_errhandler");
    amptest_ok(MPI_File_set_errhandler(fh, user), "set_errhandler");
    for (int i = 0; i < 3; i++) {
        amptest_ok(MPI_File_get_errhandler(fh, &got), "get_errhandler");
        amptest_check(got == user, "get_errhandler returned another handler");
        amptest_ok(MPI_Errhandler_free(&got), "Errhandler_free of what get_errhandler returned");
    }
    amptest_ok(MPI_Errhandler_free(&user), "Errhandler_free of the handler");
    reset();
    char c = 'x';
    int rc = MPI_File_write_at(fh, 0, &c, 1, MPI_CHAR, MPI_STATUS_IGNORE);
    called_once(fh, rc, MPI_ERR_READ_ONLY, "write_at after every reference was freed");
    amptest_ok(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN), "set_errhandler");
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv); /* sets MPI_ERRORS_RETURN on MPI_FILE_NULL, the default anyway */
    char path[4608], missing[4608];
    snprintf(path, sizeof(path), "%s", amptest_path("handled.dat"));
    snprintf(missing, sizeof(missing), "%s", amptest_path("missing.dat"));
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL, user;

    amptest_ok(MPI_File_get_errhandler(MPI_FILE_NULL, &eh), "get_errhandler(MPI_FILE_NULL)");
    amptest_check(eh == MPI_ERRORS_RETURN, "MPI_FILE_NULL's handler is not MPI_ERRORS_RETURN");
    MPI_File fh;
    amptest_ok(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
        "open");
    amptest_ok(MPI_File_get_errhandler(fh, &eh), "get_errhandler");
    amptest_check(eh == MPI_ERRORS_RETURN, "a new file's handler is not MPI_ERRORS_RETURN");
    amptest_ok(MPI_File_close(&fh), "close");

    amptest_ok(MPI_File_create_errhandler(counting_handler, &user), "create_errhandler");
    amptest_class(MPI_File_create_errhandler(NULL, &eh), MPI_ERR_ARG, "create_errhandler of NULL");

    /* on MPI_FILE_NULL: called for failed opens, with MPI_FILE_NULL; inherited by new files */
    amptest_ok(MPI_File_set_errhandler(MPI_FILE_NULL, user), "set_errhandler(MPI_FILE_NULL)");
    amptest_ok(MPI_File_get_errhandler(MPI_FILE_NULL, &eh), "get_errhandler(MPI_FILE_NULL)");
    amptest_check(eh == user, "MPI_FILE_NULL's handler is not the one set");
    reset();
    int rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    called_once(MPI_FILE_NULL, rc, MPI_ERR_NO_SUCH_FILE, "failed open");
    reset();
    rc = MPI_File_delete(missing, MPI_INFO_NULL);
    called_once(MPI_FILE_NULL, rc, MPI_ERR_NO_SUCH_FILE, "failed delete");
    reset();
    rc = MPI_File_read_at(MPI_FILE_NULL, 0, path, 1, MPI_BYTE, MPI_STATUS_IGNORE);
    called_once(MPI_FILE_NULL, rc, MPI_ERR_FILE, "read_at on MPI_FILE_NULL");

    reset();
    if (!amptest_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                    "open"))
        return amptest_finish();
    amptest_check(calls == 0, "a successful open ran the handler");
    amptest_ok(MPI_File_get_errhandler(fh, &eh), "get_errhandler");
    amptest_check(eh == user, "a new file did not get MPI_FILE_NULL's handler");
    /* the file keeps its handler when MPI_FILE_NULL's changes */
    amptest_ok(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN), "set_errhandler");
    reset();
    char c = 'x';
    rc = MPI_File_write_at(fh, 0, &c, 1, MPI_CHAR, MPI_STATUS_IGNORE);
    called_once(fh, rc, MPI_ERR_READ_ONLY, "write_at on a RDONLY file");
    reset();
    rc = MPI_File_read_at(fh, -1, &c, 1, MPI_CHAR, MPI_STATUS_IGNORE);
    called_once(fh, rc, MPI_ERR_ARG, "read_at at -1");
    reset();
    rc = MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "nonesuch", MPI_INFO_NULL);
    called_once(fh, rc, MPI_ERR_UNSUPPORTED_DATAREP, "collective set_view");
    reset();
    amptest_ok(MPI_File_read_at(fh, 0, &c, 1, MPI_CHAR, MPI_STATUS_IGNORE), "read_at");
    amptest_check(calls == 0, "a successful read ran the handler");

    /* MPI_File_call_errhandler runs the file's handler with the code given */
    int code = MPI_ERR_OTHER;
    MPI_Add_error_code(MPI_ERR_IO, &code);
    reset();
    amptest_ok(MPI_File_call_errhandler(fh, code), "call_errhandler");
    called_once(fh, code, MPI_ERR_IO, "call_errhandler");
    reset();
    amptest_ok(MPI_File_call_errhandler(MPI_FILE_NULL, MPI_ERR_ARG), "call_errhandler");
    amptest_check(calls == 0, "call_errhandler on MPI_FILE_NULL ran the file's handler");

    /* freeing the handler does not detach it */
    amptest_ok(MPI_Errhandler_free(&user), "Errhandler_free");
    amptest_check(user == MPI_ERRHANDLER_NULL, "Errhandler_free did not reset the handle");
    reset();
    rc = MPI_File_write_at(fh, 0, &c, 1, MPI_CHAR, MPI_STATUS_IGNORE);
    called_once(fh, rc, MPI_ERR_READ_ONLY, "write_at after Errhandler_free");

    /* back to returning codes */
    amptest_ok(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN), "set_errhandler");
    reset();
    rc = MPI_File_write_at(fh, 0, &c, 1, MPI_CHAR, MPI_STATUS_IGNORE);
    amptest_class(rc, MPI_ERR_READ_ONLY, "write_at with MPI_ERRORS_RETURN");
    amptest_check(calls == 0, "MPI_ERRORS_RETURN ran the user handler");

    /* only file handlers may be attached to files */
    if (amptest_under_ampio()) { /* a native MPI-IO may not check */
        MPI_Errhandler foreign;
        MPI_Comm_create_errhandler(comm_handler, &foreign);
        amptest_class(MPI_File_set_errhandler(fh, foreign), MPI_ERR_ARG,
                      "set_errhandler of a communicator handler");
        MPI_Errhandler_free(&foreign);
        amptest_class(MPI_File_set_errhandler((MPI_File)&calls, MPI_ERRORS_RETURN), MPI_ERR_FILE,
                      "set_errhandler on a handle that is no file");
    }
    references(fh);
    amptest_ok(MPI_File_close(&fh), "close");
    return amptest_finish();
}
