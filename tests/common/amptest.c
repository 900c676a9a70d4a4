#include "amptest.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int amptest_rank, amptest_size;
static const char *amptest_outdir = ".";
static int amptest_failures;

void amptest_init(int *argc, char ***argv)
{
    int provided;
    amptest_init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
}

void amptest_init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (required == MPI_THREAD_SINGLE)
        MPI_Init(argc, argv);
    else
        MPI_Init_thread(argc, argv, required, provided);
    MPI_Query_thread(provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &amptest_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &amptest_size);
    if (*argc > 1)
        amptest_outdir = (*argv)[1];
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
}

int amptest_under_ampio(void)
{
    return dlsym(RTLD_DEFAULT, "ampio_version") != NULL;
}

const char *amptest_path(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof(path), "%s/%s", amptest_outdir, name);
    return path;
}

void amptest_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL [rank %d, %s]: ", amptest_rank,
            amptest_under_ampio() ? "ampio" : "native");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    amptest_failures++;
}

int amptest_check(int cond, const char *fmt, ...)
{
    if (cond)
        return 1;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    amptest_fail("%s", msg);
    return 0;
}

static void amptest_error_text(int rc, char *text)
{
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, MPI_MAX_ERROR_STRING, "error code %d", rc);
}

int amptest_ok(int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return 1;
    char text[MPI_MAX_ERROR_STRING];
    amptest_error_text(rc, text);
    amptest_fail("%s failed: %s", what, text);
    return 0;
}

int amptest_class(int rc, int cls, const char *what)
{
    int got = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &got);
    if (got == cls)
        return 1;
    char text[MPI_MAX_ERROR_STRING] = "success";
    if (rc != MPI_SUCCESS)
        amptest_error_text(rc, text);
    amptest_fail("%s: expected error class %d, got class %d (%s)", what, cls, got, text);
    return 0;
}

void amptest_model_mismatch(const char *name, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (amptest_under_ampio()) {
        amptest_fail("%s: %s", name, msg);
        return;
    }
    fprintf(stderr, "NATIVE-DEFECT [rank %d] %s: %s\n", amptest_rank, name, msg);
    FILE *f = fopen(amptest_path("native-defects.txt"), "a");
    if (f) {
        fprintf(f, "%s\n", name);
        fclose(f);
    }
}

int amptest_compare_file(const char *name, const void *expected, size_t len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s", amptest_path(name));
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        amptest_fail("cannot open %s: %s", path, strerror(errno));
        return 0;
    }
    unsigned char *got = malloc(len + 1);
    size_t have = 0;
    ssize_t r;
    while (have < len + 1 && (r = read(fd, got + have, len + 1 - have)) > 0)
        have += (size_t)r;
    close(fd);
    int ok = 1;
    if (have != len) {
        amptest_model_mismatch(name, "file has %s%zu bytes, model %zu", have > len ? ">" : "", have,
                               len);
        ok = 0;
    } else {
        for (size_t i = 0; i < len; i++) {
            if (got[i] != ((const unsigned char *)expected)[i]) {
                amptest_model_mismatch(name, "byte %zu is %#x, model %#x", i, got[i],
                                       ((const unsigned char *)expected)[i]);
                ok = 0;
                break;
            }
        }
    }
    free(got);
    return ok;
}

int amptest_finish(void)
{
    int total = 0;
    MPI_Allreduce(&amptest_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (amptest_rank == 0 && total)
        fprintf(stderr, "%d failure(s)\n", total);
    /* every rank got here: a launcher that hangs in MPI_Finalize (MPICH's UCX over TCP on the
     * emulated cluster) cannot hide the outcome */
    if (amptest_rank == 0 && !total) {
        printf("amptest: every check passed on %d rank(s)\n", amptest_size);
        fflush(stdout);
    }
    MPI_Finalize();
    return total ? 1 : 0;
}
