/* Checks shared by the error tests: the text of an error code, agreement of every rank on an
 * error, and small file fixtures written with POSIX calls (independent of the MPI-IO tested). */
#ifndef ERRTEST_H
#define ERRTEST_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amptest.h"

/* The text of `rc` contains `needle`. Only ampio promises what its messages name. */
static inline int errtest_text_has(int rc, const char *needle, const char *what)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (!amptest_check(MPI_Error_string(rc, text, &len) == MPI_SUCCESS,
                       "%s: MPI_Error_string failed", what))
        return 0;
    if (!amptest_check(len > 0 && (size_t)len == strlen(text), "%s: error string of length %d",
                       what, len))
        return 0;
    if (!amptest_under_ampio())
        return 1;
    return amptest_check(strstr(text, needle) != NULL, "%s: error string \"%s\" does not name %s",
                         what, text, needle);
}

/* `rc` has class `cls` on this rank, and no rank got MPI_SUCCESS: collective errors are
 * reported everywhere. */
static inline int errtest_class_all(MPI_Comm comm, int rc, int cls, const char *what)
{
    int ok = amptest_class(rc, cls, what);
    int failed = rc != MPI_SUCCESS, all = 0;
    MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_LAND, comm);
    if (amptest_rank == 0)
        amptest_check(all, "%s: some rank got MPI_SUCCESS", what);
    return ok && all;
}

/* Writes `len` bytes of the pattern of `seed` into `path` (POSIX), replacing the file. */
static inline int errtest_make_file(const char *path, int seed, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return amptest_check(0, "cannot create %s", path);
    unsigned char *buf = malloc(len ? len : 1);
    for (size_t i = 0; i < len; i++)
        buf[i] = amptest_byte(seed, (long long)i);
    ssize_t n = write(fd, buf, len);
    free(buf);
    close(fd);
    return amptest_check(n == (ssize_t)len, "cannot write %s", path);
}

/* Whether `path` exists. */
static inline int errtest_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* The file `path` holds exactly the pattern of `seed` over `len` bytes. */
static inline int errtest_file_is(const char *path, int seed, size_t len, const char *what)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return amptest_check(0, "%s: cannot open %s", what, path);
    unsigned char *buf = malloc(len + 1);
    ssize_t n = read(fd, buf, len + 1);
    close(fd);
    int ok = n == (ssize_t)len;
    for (size_t i = 0; ok && i < len; i++)
        ok = buf[i] == amptest_byte(seed, (long long)i);
    free(buf);
    return amptest_check(ok, "%s: %s does not hold its %zu bytes (read %zd)", what, path, len, n);
}

/* One part of a test program, run when named on the command line (or when none is named). */
typedef struct {
    const char *name;
    void (*run)(void);
} errtest_part_t;

/* Runs the parts named in argv[2..] (argv[1] is the output directory), or all of them. */
static inline void errtest_run_parts(int argc, char **argv, const errtest_part_t *parts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int chosen = argc <= 2;
        for (int a = 2; a < argc; a++)
            chosen |= strcmp(argv[a], parts[i].name) == 0;
        if (chosen)
            parts[i].run();
    }
}

#endif
