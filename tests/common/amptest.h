/* Support for the MPI test programs. Every program is run twice by tests/run/diff.sh: once on
 * the host MPI's own MPI-IO and once under ampio, each time writing its files into the
 * directory given as its first argument; the two sets of files are then compared byte for byte.
 *
 * A program also checks what it reads back against its own model of the expected bytes. Under
 * ampio a mismatch fails the test; on the native MPI-IO it is recorded as a native defect (the
 * file is then left out of the comparison), because the model is the final judge. */
#ifndef AMPTEST_H
#define AMPTEST_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

extern int amptest_rank, amptest_size;

/* Initialises MPI, reads the output directory from argv[1]. */
void amptest_init(int *argc, char ***argv);

/* The same with MPI_Init_thread; `*provided` is the level granted. */
void amptest_init_thread(int *argc, char ***argv, int required, int *provided);

/* Finalises; returns the exit status (0 when no rank failed). */
int amptest_finish(void);

/* Whether ampio is the MPI-IO in this process. */
int amptest_under_ampio(void);

/* "<outdir>/<name>", in a static buffer per call site's needs (copy it if kept). */
const char *amptest_path(const char *name);

/* Records a failure on this rank with a message. */
void amptest_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Checks a condition; on failure records the message. Returns the condition. */
int amptest_check(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Checks an MPI return code. */
int amptest_ok(int rc, const char *what);

/* Checks that `rc` is an error of class `cls` (not MPI_SUCCESS). */
int amptest_class(int rc, int cls, const char *what);

/* Reports that the bytes of file `name` differ from the model: a failure under ampio, a
 * native defect otherwise (recorded in <outdir>/native-defects.txt by the reporting rank). */
void amptest_model_mismatch(const char *name, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Compares the whole file `name` (POSIX read) with `expected` of `len` bytes; reports a model
 * mismatch with the first differing offset. Call on one rank after the file is closed. */
int amptest_compare_file(const char *name, const void *expected, size_t len);

/* Deterministic byte pattern for rank, index. */
static inline unsigned char amptest_byte(int rank, long long i)
{
    uint64_t x =
        (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(rank + 1) * 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 29;
    return (unsigned char)(x ^ (x >> 17));
}

#endif
