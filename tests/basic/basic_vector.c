/* Interleaved vector views written collectively, read back past the end of file. */
#include <stdlib.h>
#include <string.h>

#include "amptest.h"

#define BLOCK  4 /* ints per block */
#define BLOCKS 3

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    int P = amptest_size, r = amptest_rank;
    const char *name = "vector.dat";
    MPI_File fh;
    if (!amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name),
                                  MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                    "open"))
        return amptest_finish();
    MPI_Datatype ft;
    MPI_Type_vector(BLOCKS, BLOCK, BLOCK * P, MPI_INT, &ft);
    MPI_Type_commit(&ft);
    amptest_ok(MPI_File_set_view(fh, (MPI_Offset)r * BLOCK * sizeof(int), MPI_INT, ft, "native",
                                 MPI_INFO_NULL),
               "set_view");
    int data[BLOCK * BLOCKS];
    for (int i = 0; i < BLOCK * BLOCKS; i++)
        data[i] = r * 1000 + i;
    MPI_Status st;
    int count = -1;
    amptest_ok(MPI_File_write_all(fh, data, BLOCK * BLOCKS, MPI_INT, &st), "write_all");
    MPI_Get_count(&st, MPI_INT, &count);
    amptest_check(count == BLOCK * BLOCKS, "write_all count %d", count);

    /* read more than there is: the count says what was read, the rest stays untouched */
    int back[BLOCK * BLOCKS + 5];
    memset(back, 0x5a, sizeof(back));
    amptest_ok(MPI_File_seek(fh, 0, MPI_SEEK_SET), "seek");
    amptest_ok(MPI_File_read_all(fh, back, BLOCK * BLOCKS + 5, MPI_INT, &st), "read_all");
    MPI_Get_count(&st, MPI_INT, &count);
    int last = r == P - 1;
    /* only the last rank's tail lies beyond the end of file */
    int expect = BLOCK * BLOCKS + (last ? 0 : 5 < BLOCK ? 5 : BLOCK);
    if (!last && count != expect)
        amptest_check(count == expect, "read_all count %d, expected %d", count, expect);
    if (last && count != BLOCK * BLOCKS)
        amptest_model_mismatch(name, "rank %d read %d ints past the end of file, expected %d", r,
                               count, BLOCK * BLOCKS);
    amptest_check(memcmp(back, data, sizeof(data)) == 0, "read back differs");
    if (last) {
        unsigned char untouched[5 * sizeof(int)];
        memset(untouched, 0x5a, sizeof(untouched));
        if (memcmp(back + BLOCK * BLOCKS, untouched, sizeof(untouched)) != 0)
            amptest_model_mismatch(name, "read past the end of file wrote into the buffer");
    }
    amptest_ok(MPI_File_close(&fh), "close");
    MPI_Type_free(&ft);

    if (r == 0) {
        size_t n = (size_t)P * BLOCK * BLOCKS;
        int *model = malloc(n * sizeof(int));
        for (int q = 0; q < P; q++)
            for (int b = 0; b < BLOCKS; b++)
                for (int i = 0; i < BLOCK; i++)
                    model[(size_t)b * BLOCK * P + (size_t)q * BLOCK + i] = q * 1000 + b * BLOCK + i;
        amptest_compare_file(name, model, n * sizeof(int));
        free(model);
    }
    return amptest_finish();
}
