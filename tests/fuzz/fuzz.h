/* Shared by the libFuzzer targets: MPI started once per process (a singleton or one rank),
 * a reader of the fuzzer's bytes, and a check that stops the run with a message. */
#ifndef AMPIO_FUZZ_H
#define AMPIO_FUZZ_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_finalize(void)
{
    int done = 0;
    MPI_Finalized(&done);
    if (!done)
        MPI_Finalize();
}

/* libFuzzer ends by exit(): MPI is finalized then, so that no launcher reports a rank that
 * left without MPI_Finalize. */
static inline void fuzz_mpi_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    atexit(fuzz_finalize);
}

/* What the current input builds, printed with a failed check. */
static char fuzz_what[2048];

static inline void fuzz_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void fuzz_note(const char *fmt, ...)
{
    size_t at = strlen(fuzz_what);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fuzz_what + at, sizeof(fuzz_what) - at, fmt, ap);
    va_end(ap);
}

#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\ninput: %s\n", fuzz_what);                                           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Consumes the input; past its end every read gives 0. */
typedef struct {
    const uint8_t *p;
    size_t n;
} fuzz_in_t;

static inline unsigned fuzz_byte(fuzz_in_t *in)
{
    if (in->n == 0)
        return 0;
    in->n--;
    return *in->p++;
}

/* A value in [lo, hi]. */
static inline long fuzz_range(fuzz_in_t *in, long lo, long hi)
{
    unsigned long span = (unsigned long)(hi - lo) + 1, v = fuzz_byte(in);
    if (span > 256)
        v = v << 8 | fuzz_byte(in);
    return lo + (long)(v % span);
}

#endif
