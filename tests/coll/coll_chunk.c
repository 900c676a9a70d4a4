/* Writes on shared cores: where a node runs more of the file's ranks than it has cores, ampio
 * cuts every write system call to 256 KiB; elsewhere a rank's contiguous 1 MiB block is one
 * call. The expectation comes from this run's layout (ranks sharing this node, online cores),
 * the calls from ampio's trace (hint ampio_trace), the bytes from the file. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "amptest.h"

#define BLOCK (1 << 20)
#define CUT   (256 << 10)
#define CALLS 3

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    const int P = amptest_size, me = amptest_rank;
    MPI_Comm node;
    int here = 1;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &here);
    MPI_Comm_free(&node);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const long long limit = cores > 0 && here > cores ? CUT : BLOCK;

    char trace[4096];
    snprintf(trace, sizeof(trace), "%s", amptest_path("chunk-trace"));
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "ampio_trace", trace);
    MPI_File fh;
    amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path("chunk.dat"),
                             MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
               "open");
    unsigned char *buf = malloc(BLOCK);
    for (int c = 0; c < CALLS; c++) {
        long long first = ((long long)c * P + me) * BLOCK;
        for (long long i = 0; i < BLOCK; i++)
            buf[i] = amptest_byte(me, first + i);
        amptest_ok(MPI_File_write_at_all(fh, first, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE),
                   "write_at_all");
    }
    amptest_ok(MPI_File_close(&fh), "close");
    MPI_Info_free(&info);

    if (amptest_under_ampio()) { /* the native run leaves no trace */
        char name[4200];
        snprintf(name, sizeof(name), "%s.%d", trace, me);
        FILE *t = fopen(name, "r");
        long long call, off, len, largest = 0, bytes = 0;
        char op;
        while (t && fscanf(t, "%lld %c %lld %lld", &call, &op, &off, &len) == 4)
            if (op == 'w' && call >= 0) {
                largest = len > largest ? len : largest;
                bytes += len;
            }
        if (t)
            fclose(t);
        unlink(name);
        amptest_check(bytes == (long long)CALLS * BLOCK, "rank %d wrote %lld bytes, expected %lld",
                      me, bytes, (long long)CALLS * BLOCK);
        amptest_check(largest == limit,
                      "rank %d: largest write call %lld bytes, expected %lld (%d ranks on this "
                      "node, %ld cores)",
                      me, largest, limit, here, cores);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        size_t total = (size_t)CALLS * P * BLOCK;
        unsigned char *want = malloc(total);
        for (int c = 0; c < CALLS; c++)
            for (int r = 0; r < P; r++) {
                long long first = ((long long)c * P + r) * BLOCK;
                for (long long i = 0; i < BLOCK; i++)
                    want[first + i] = amptest_byte(r, first + i);
            }
        amptest_compare_file("chunk.dat", want, total);
        free(want);
    }
    free(buf);
    return amptest_finish();
}
