#include "core/err.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define AMP_ERR_MSG_MAX 512

/* MPICH keeps error messages in its own error stack; dynamic codes added with
 * MPI_Add_error_code for predefined classes lose their strings there. Its exported
 * MPIR_Err_create_code makes a genuine MPICH error code instead. */
typedef int (*amp_mpich_create_fn)(int, int, const char *, int, int, const char *, const char *,
                                   ...);

/* Open MPI (and the portable fallback): a small ring of dynamic codes per class whose strings
 * are replaced as they are reused. */
#define AMP_ERR_RING      32
#define AMP_ERR_MAX_CLASS 128

static pthread_mutex_t amp_err_lock = PTHREAD_MUTEX_INITIALIZER;
static int amp_err_ring_codes[AMP_ERR_MAX_CLASS][AMP_ERR_RING];
static int amp_err_ring_next[AMP_ERR_MAX_CLASS];
static amp_mpich_create_fn amp_err_mpich;
static int amp_err_probed;

static const struct {
    int cls;
    const char *name;
} amp_err_names[] = {
    {MPI_SUCCESS, "MPI_SUCCESS"},
    {MPI_ERR_ARG, "MPI_ERR_ARG"},
    {MPI_ERR_COUNT, "MPI_ERR_COUNT"},
    {MPI_ERR_TYPE, "MPI_ERR_TYPE"},
    {MPI_ERR_COMM, "MPI_ERR_COMM"},
    {MPI_ERR_INFO, "MPI_ERR_INFO"},
    {MPI_ERR_OTHER, "MPI_ERR_OTHER"},
    {MPI_ERR_INTERN, "MPI_ERR_INTERN"},
    {MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM"},
    {MPI_ERR_REQUEST, "MPI_ERR_REQUEST"},
    {MPI_ERR_NOT_SAME, "MPI_ERR_NOT_SAME"},
    {MPI_ERR_FILE, "MPI_ERR_FILE"},
    {MPI_ERR_AMODE, "MPI_ERR_AMODE"},
    {MPI_ERR_ACCESS, "MPI_ERR_ACCESS"},
    {MPI_ERR_BAD_FILE, "MPI_ERR_BAD_FILE"},
    {MPI_ERR_NO_SUCH_FILE, "MPI_ERR_NO_SUCH_FILE"},
    {MPI_ERR_FILE_EXISTS, "MPI_ERR_FILE_EXISTS"},
    {MPI_ERR_FILE_IN_USE, "MPI_ERR_FILE_IN_USE"},
    {MPI_ERR_READ_ONLY, "MPI_ERR_READ_ONLY"},
    {MPI_ERR_NO_SPACE, "MPI_ERR_NO_SPACE"},
    {MPI_ERR_QUOTA, "MPI_ERR_QUOTA"},
    {MPI_ERR_IO, "MPI_ERR_IO"},
    {MPI_ERR_CONVERSION, "MPI_ERR_CONVERSION"},
    {MPI_ERR_DUP_DATAREP, "MPI_ERR_DUP_DATAREP"},
    {MPI_ERR_UNSUPPORTED_DATAREP, "MPI_ERR_UNSUPPORTED_DATAREP"},
    {MPI_ERR_UNSUPPORTED_OPERATION, "MPI_ERR_UNSUPPORTED_OPERATION"},
};

const char *amp_err_class_name(int cls)
{
    for (size_t i = 0; i < sizeof(amp_err_names) / sizeof(amp_err_names[0]); i++)
        if (amp_err_names[i].cls == cls)
            return amp_err_names[i].name;
    return "MPI_ERR_UNKNOWN";
}

static int amp_err_is_io_class(int cls)
{
    return cls == MPI_ERR_IO || cls == MPI_ERR_NO_SPACE || cls == MPI_ERR_QUOTA ||
           cls == MPI_ERR_READ_ONLY || cls == MPI_ERR_ACCESS || cls == MPI_ERR_NO_SUCH_FILE ||
           cls == MPI_ERR_FILE_EXISTS || cls == MPI_ERR_BAD_FILE || cls == MPI_ERR_FILE_IN_USE;
}

static void amp_err_probe(void)
{
    if (amp_err_probed)
        return;
    amp_err_probed = 1;
#ifdef MPICH_VERSION
    void *sym = dlsym(RTLD_DEFAULT, "MPIR_Err_create_code");
    memcpy(&amp_err_mpich, &sym, sizeof(sym)); /* object to function pointer, as POSIX allows */
#endif
}

/* A dynamic code from the per-class ring, with its string replaced. */
static int amp_err_ring_code(int cls, const char *msg)
{
    if (cls < 0 || cls >= AMP_ERR_MAX_CLASS)
        return cls;
    int slot = amp_err_ring_next[cls];
    int *code = &amp_err_ring_codes[cls][slot];
    if (*code == 0 && PMPI_Add_error_code(cls, code) != MPI_SUCCESS) {
        *code = 0;
        return cls;
    }
    amp_err_ring_next[cls] = (slot + 1) % AMP_ERR_RING;
    /* MPI caps error strings (Open MPI fails the call, fatally, past the cap): keep the start,
     * which names the operation and file, and the end, which gives the system error */
    char fit[MPI_MAX_ERROR_STRING];
    size_t len = strlen(msg), keep_end = MPI_MAX_ERROR_STRING / 3;
    if (len >= sizeof(fit)) {
        size_t keep_start = sizeof(fit) - 1 - keep_end - 3;
        memcpy(fit, msg, keep_start);
        memcpy(fit + keep_start, "...", 3);
        memcpy(fit + keep_start + 3, msg + len - keep_end, keep_end);
        fit[sizeof(fit) - 1] = '\0';
        msg = fit;
    }
    if (PMPI_Add_error_string(*code, msg) != MPI_SUCCESS)
        return cls;
    return *code;
}

/* Where errors of this thread go when it must not call MPI (amp_err_capture). */
static __thread char *amp_err_captured;
static __thread size_t amp_err_captured_len;

void amp_err_capture(char *msg, size_t len)
{
    amp_err_captured = msg;
    amp_err_captured_len = len;
}

static int amp_err_make(int cls, const char *msg)
{
    if (amp_err_captured) {
        snprintf(amp_err_captured, amp_err_captured_len, "%s", msg);
        return cls;
    }
    int initialized = 0, finalized = 0;
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (!initialized || finalized)
        return cls;

    pthread_mutex_lock(&amp_err_lock);
    amp_err_probe();
    int code;
    if (amp_err_mpich) {
        /* MPICH's error stack turns a message of many bytes outside ASCII (a UTF-8 file name of
         * a hundred characters) into a code of no predefined class: such bytes become '?' */
        char ascii[AMP_ERR_MSG_MAX];
        size_t i = 0;
        for (; msg[i] && i + 1 < sizeof(ascii); i++)
            ascii[i] = (unsigned char)msg[i] < 0x20 || (unsigned char)msg[i] > 0x7e ? '?' : msg[i];
        ascii[i] = '\0';
        code = amp_err_mpich(MPI_SUCCESS, 0, "ampio", 0, cls,
                             amp_err_is_io_class(cls) ? "**io" : "**arg",
                             amp_err_is_io_class(cls) ? "**io %s" : "**arg %s", ascii);
    } else {
        char full[AMP_ERR_MSG_MAX + 64];
        snprintf(full, sizeof(full), "%s: ampio: %s", amp_err_class_name(cls), msg);
        code = amp_err_ring_code(cls, full);
    }
    pthread_mutex_unlock(&amp_err_lock);
    return code;
}

int amp_err(int cls, const char *fmt, ...)
{
    char msg[AMP_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return amp_err_make(cls, msg);
}

int amp_err_class_of_errno(int errnum)
{
    switch (errnum) {
    case ENOSPC:
        return MPI_ERR_NO_SPACE;
    case EDQUOT:
        return MPI_ERR_QUOTA;
    case EACCES:
    case EPERM:
        return MPI_ERR_ACCESS;
    case EROFS:
        return MPI_ERR_READ_ONLY;
    case ENOENT:
        return MPI_ERR_NO_SUCH_FILE;
    case EEXIST:
        return MPI_ERR_FILE_EXISTS;
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
        return MPI_ERR_BAD_FILE;
    case ETXTBSY:
    case EBUSY:
        return MPI_ERR_FILE_IN_USE;
    case ENOMEM:
        return MPI_ERR_NO_MEM;
    default:
        return MPI_ERR_IO;
    }
}

int amp_err_errno(int errnum, const char *fmt, ...)
{
    char msg[AMP_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof(msg))
        snprintf(msg + n, sizeof(msg) - (size_t)n, ": %s", strerror(errnum));
    return amp_err_make(amp_err_class_of_errno(errnum), msg);
}

int amp_err_class(int code)
{
    if (code == MPI_SUCCESS || amp_err_captured) /* captured codes are bare classes */
        return code;
    int cls = MPI_ERR_OTHER;
    if (PMPI_Error_class(code, &cls) != MPI_SUCCESS)
        return MPI_ERR_OTHER;
    return cls;
}

int amp_err_from_rank(int cls, int rank, const char *what)
{
    return amp_err(cls, "%s failed on rank %d (%s)", what, rank, amp_err_class_name(cls));
}
