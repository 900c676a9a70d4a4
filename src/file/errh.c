#include "file/errh.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/err.h"
#include "core/fault.h"

typedef struct {
    MPI_Errhandler eh;
    MPI_File_errhandler_function *fn;
} amp_errh_entry_t;

static amp_errh_entry_t *amp_errh_table;
static size_t amp_errh_n, amp_errh_cap;
static pthread_mutex_t amp_errh_lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_Errhandler amp_errh_null = MPI_ERRORS_RETURN;
static MPI_Comm amp_errh_null_holder = MPI_COMM_NULL;

static int amp_errh_is_predefined(MPI_Errhandler eh)
{
    return eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ARE_FATAL
#ifdef MPI_ERRORS_ABORT
           || eh == MPI_ERRORS_ABORT
#endif
        ;
}

/* Never called: the host needs a function for its object, ampio calls the file function. */
static void amp_errh_placeholder(MPI_Comm *comm, int *code, ...) {}

int amp_errh_create(MPI_File_errhandler_function *fn, MPI_Errhandler *out)
{
    if (!fn)
        return amp_err(MPI_ERR_ARG, "the error handler function is NULL");
    MPI_Errhandler eh;
    int rc = PMPI_Comm_create_errhandler(amp_errh_placeholder, &eh);
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&amp_errh_lock);
    size_t i = 0;
    while (i < amp_errh_n && amp_errh_table[i].eh != eh)
        i++;
    if (i == amp_errh_n) {
        if (amp_errh_n == amp_errh_cap) {
            size_t cap = amp_errh_cap ? 2 * amp_errh_cap : 16;
            amp_errh_entry_t *t = amp_realloc(amp_errh_table, cap * sizeof(*t));
            if (!t) {
                pthread_mutex_unlock(&amp_errh_lock);
                PMPI_Errhandler_free(&eh);
                return amp_err(MPI_ERR_NO_MEM, "out of memory creating an error handler");
            }
            amp_errh_table = t;
            amp_errh_cap = cap;
        }
        amp_errh_n++;
    }
    /* a handle value the host reused after MPI_Errhandler_free gets the new function */
    amp_errh_table[i].eh = eh;
    amp_errh_table[i].fn = fn;
    pthread_mutex_unlock(&amp_errh_lock);
    *out = eh;
    return MPI_SUCCESS;
}

static MPI_File_errhandler_function *amp_errh_function(MPI_Errhandler eh)
{
    MPI_File_errhandler_function *fn = NULL;
    pthread_mutex_lock(&amp_errh_lock);
    for (size_t i = 0; i < amp_errh_n; i++)
        if (amp_errh_table[i].eh == eh)
            fn = amp_errh_table[i].fn;
    pthread_mutex_unlock(&amp_errh_lock);
    return fn;
}

int amp_errh_valid(MPI_Errhandler eh)
{
    return amp_errh_is_predefined(eh) || amp_errh_function(eh) != NULL;
}

MPI_Errhandler amp_errh_default(void)
{
    return amp_errh_null;
}

int amp_errh_attach(MPI_Comm *holder, MPI_Errhandler eh)
{
    int rc = MPI_SUCCESS;
    if (*holder == MPI_COMM_NULL && amp_errh_is_predefined(eh))
        return MPI_SUCCESS; /* predefined handlers need no reference */
    if (*holder == MPI_COMM_NULL)
        rc = PMPI_Comm_dup(MPI_COMM_SELF, holder);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_set_errhandler(*holder, eh);
    return rc;
}

int amp_errh_get(MPI_Comm holder, MPI_Errhandler eh, MPI_Errhandler *out)
{
    if (holder == MPI_COMM_NULL) {
        *out = eh;
        return MPI_SUCCESS;
    }
    return PMPI_Comm_get_errhandler(holder, out);
}

void amp_errh_detach(MPI_Comm *holder)
{
    if (*holder != MPI_COMM_NULL)
        PMPI_Comm_free(holder);
    *holder = MPI_COMM_NULL;
}

int amp_errh_set_default(MPI_Errhandler eh)
{
    int rc = amp_errh_attach(&amp_errh_null_holder, eh);
    if (rc == MPI_SUCCESS)
        amp_errh_null = eh;
    return rc;
}

int amp_errh_get_default(MPI_Errhandler *out)
{
    return amp_errh_get(amp_errh_null_holder, amp_errh_null, out);
}

int amp_errh_raise(amp_file_t *f, int code, const char *routine)
{
    if (code == MPI_SUCCESS)
        return code;
    MPI_Errhandler eh = f ? f->errhandler : amp_errh_null;
    if (eh == MPI_ERRORS_RETURN)
        return code;
    if (amp_errh_is_predefined(eh)) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        if (PMPI_Error_string(code, text, &len) != MPI_SUCCESS)
            snprintf(text, sizeof(text), "error code %d", code);
        fprintf(stderr, "ampio: %s%s%s: %s\n", routine, f ? " on " : "", f ? f->path : "", text);
        fflush(stderr);
#ifdef MPI_ERRORS_ABORT
        if (eh == MPI_ERRORS_ABORT)
            PMPI_Abort(f ? f->comm : MPI_COMM_SELF, code);
#endif
        PMPI_Abort(MPI_COMM_WORLD, code);
        return code;
    }
    MPI_File_errhandler_function *fn = amp_errh_function(eh);
    if (fn) {
        MPI_File fh = f ? amp_file_handle(f) : MPI_FILE_NULL;
        fn(&fh, &code, routine);
    }
    return code;
}

void amp_errh_finalize(void)
{
    amp_errh_detach(&amp_errh_null_holder);
    amp_errh_null = MPI_ERRORS_RETURN;
    pthread_mutex_lock(&amp_errh_lock);
    free(amp_errh_table);
    amp_errh_table = NULL;
    amp_errh_n = amp_errh_cap = 0;
    pthread_mutex_unlock(&amp_errh_lock);
}
