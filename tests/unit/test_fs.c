/* The file system layer: vectored writes cut into system calls of at most max_write bytes land
 * every byte where it belongs, whatever the cut crosses (buffer edges, empty buffers, windows
 * of IOV_MAX buffers). */
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/fs.h"
#include "unit.h"

enum { NBUF = IOV_MAX + 37, MAXLEN = 700 };

/* Writes NBUF buffers of pseudo-random lengths (some empty) at `off` with the given limit and
 * checks the file, the system calls (from the trace) and the bytes. */
static void check_cut(const char *dir, size_t max_write, unsigned seed)
{
    char path[4096], trace[4200];
    /* the process id too: build trees side by side run this test at once */
    snprintf(path, sizeof(path), "%s/ampio-test-fs.%ld.%u", dir, (long)getpid(), seed);
    snprintf(trace, sizeof(trace), "%s/ampio-test-fs-trace.%ld.%u", dir, (long)getpid(), seed);
    static unsigned char data[NBUF * MAXLEN];
    struct iovec iov[NBUF];
    size_t total = 0;
    srand(seed);
    for (int i = 0; i < NBUF; i++) {
        size_t len = (size_t)(rand() % 5 == 0 ? 0 : rand() % MAXLEN);
        for (size_t k = 0; k < len; k++)
            data[total + k] = (unsigned char)rand();
        iov[i] = (struct iovec){data + total, len};
        total += len;
    }
    amp_fs_t fs = {0};
    UNIT_EQ(amp_fs_open(&fs, path, O_RDWR | O_CREAT | O_TRUNC, 0644), MPI_SUCCESS);
    UNIT_EQ(amp_fs_trace_open(&fs, trace, 0), MPI_SUCCESS);
    fs.max_write = max_write;
    const MPI_Offset off = 12345;
    UNIT_EQ(amp_fs_writev(&fs, iov, NBUF, off), MPI_SUCCESS);
    MPI_Offset size = 0;
    UNIT_EQ(amp_fs_size(&fs, &size), MPI_SUCCESS);
    UNIT_EQ(size, off + (MPI_Offset)total);

    unsigned char *back = malloc(total);
    size_t got = 0;
    struct iovec one = {back, total};
    UNIT_EQ(amp_fs_readv(&fs, &one, 1, off, &got), MPI_SUCCESS);
    UNIT_EQ(got, total);
    UNIT_CHECK(memcmp(back, data, total) == 0);
    free(back);
    amp_fs_close(&fs);

    /* every write system call within the limit, in order and without gaps */
    char name[4300];
    snprintf(name, sizeof(name), "%s.0", trace);
    FILE *t = fopen(name, "r");
    UNIT_CHECK(t != NULL);
    long long call, at, n, next = off, calls = 0;
    char op;
    while (t && fscanf(t, "%lld %c %lld %lld", &call, &op, &at, &n) == 4) {
        if (op != 'w')
            continue;
        UNIT_EQ(at, next);
        UNIT_CHECK(max_write == 0 || (size_t)n <= max_write);
        next = at + n;
        calls++;
    }
    UNIT_EQ(next, off + (MPI_Offset)total);
    UNIT_CHECK(calls > 0);
    if (t)
        fclose(t);
    unlink(name);
    unlink(path);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    check_cut(dir, 0, 1);       /* no limit: windows of IOV_MAX buffers only */
    check_cut(dir, 1, 2);       /* a byte per call */
    check_cut(dir, 3000, 3);    /* cuts inside buffers */
    check_cut(dir, 4096, 4);    /* a page */
    check_cut(dir, 1 << 20, 5); /* larger than the whole write */
    MPI_Finalize();
    return unit_report("test_fs");
}
