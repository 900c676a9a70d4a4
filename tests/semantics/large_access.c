/* Accesses of more than 2 GiB: one rank writes and reads 2.25 GiB in one independent call with
 * a count of derived elements, then all ranks write and read more than 2 GiB together in one
 * collective call. The data are checked at every 4 KiB page against a position-based pattern. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "amptest.h"

#define CHUNK ((MPI_Offset)1 << 20) /* one element: 1 MiB */

static void fill(unsigned char *p, MPI_Offset file_off, MPI_Offset len)
{
    for (MPI_Offset i = 0; i < len; i += 4096) {
        uint64_t tag = (uint64_t)(file_off + i) * 2654435761u + 17;
        memcpy(p + i, &tag, sizeof(tag));
    }
}

static int check(const unsigned char *p, MPI_Offset file_off, MPI_Offset len, const char *what)
{
    for (MPI_Offset i = 0; i < len; i += 4096) {
        uint64_t tag = (uint64_t)(file_off + i) * 2654435761u + 17, got;
        memcpy(&got, p + i, sizeof(got));
        if (got != tag)
            return amptest_check(0, "%s: wrong data at byte %lld", what, (long long)(file_off + i));
    }
    return 1;
}

static void one(const char *name, int collective, MPI_Offset per_rank)
{
    int r = amptest_rank;
    MPI_Datatype mib;
    MPI_Type_contiguous((int)CHUNK, MPI_BYTE, &mib);
    MPI_Type_commit(&mib);
    int count = (int)(per_rank / CHUNK);
    unsigned char *buf = malloc((size_t)per_rank);
    if (!amptest_check(buf != NULL, "no memory for %lld bytes", (long long)per_rank)) {
        MPI_Type_free(&mib);
        return;
    }
    memset(buf, 0, (size_t)per_rank);
    MPI_Offset off = (MPI_Offset)r * per_rank;
    fill(buf, off, per_rank);
    MPI_File fh;
    MPI_Status st;
    int got = -1;
    if (amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name),
                                 MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                                 MPI_INFO_NULL, &fh),
                   name)) {
        if (collective || r == 0) {
            int rc = collective ? MPI_File_write_at_all(fh, off, buf, count, mib, &st)
                                : MPI_File_write_at(fh, off, buf, count, mib, &st);
            if (amptest_ok(rc, "large write")) {
                MPI_Get_count(&st, mib, &got);
                amptest_check(got == count, "large write count %d, expected %d", got, count);
            }
            memset(buf, 0, (size_t)per_rank);
            rc = collective ? MPI_File_read_at_all(fh, off, buf, count, mib, &st)
                            : MPI_File_read_at(fh, off, buf, count, mib, &st);
            if (amptest_ok(rc, "large read")) {
                MPI_Get_count(&st, mib, &got);
                amptest_check(got == count, "large read count %d, expected %d", got, count);
                check(buf, off, per_rank, name);
            }
        }
        MPI_Offset size = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        amptest_ok(MPI_File_get_size(fh, &size), "get_size");
        MPI_Offset want = collective ? per_rank * amptest_size : per_rank;
        amptest_check(size == want, "%s: size %lld, expected %lld", name, (long long)size,
                      (long long)want);
        amptest_ok(MPI_File_close(&fh), "close");
    }
    free(buf);
    MPI_Type_free(&mib);
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    one("large_independent.dat", 0, (MPI_Offset)2304 * CHUNK);
    /* together more than 2 GiB, each rank at offsets past 2^31 except the first */
    MPI_Offset per_rank = ((MPI_Offset)2200 / amptest_size + 1) * CHUNK;
    one("large_collective.dat", 1, per_rank);
    return amptest_finish();
}
