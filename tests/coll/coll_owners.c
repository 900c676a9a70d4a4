/* Collective calls made by the owners of the data, one after another on one file: after a
 * call the owners made, ranks whose data are contiguous in the file access them before the
 * call is described. The sequence mixes such ranks with ranks whose data have holes (these take
 * the full path), ranks without data, a layout that stops being the owners' (ranks in reverse
 * order: the next call is aggregated), a failing rank, reads that run past the end of the
 * file, and the first reads of an open (owners of large contiguous parts first). Every count is
 * checked against the model, the file against the model and the native run, and under ampio
 * MPI_File_get_info must name the algorithm each call used. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amptest.h"

#define B 8192 /* bytes per rank and call */

static MPI_File fh;
static unsigned char *model; /* the expected file */
static long long model_len;

/* Under ampio, the algorithm the last call used must be `want` ("aggregated": any but
 * individual). */
static void used(const char *want, const char *what)
{
    if (!amptest_under_ampio() || amptest_size == 1)
        return;
    MPI_Info info;
    char value[MPI_MAX_INFO_VAL + 1] = "?";
    int flag = 0;
    MPI_File_get_info(fh, &info);
    MPI_Info_get(info, "ampio_fcoll", MPI_MAX_INFO_VAL, value, &flag);
    MPI_Info_free(&info);
    int agg = strcmp(want, "aggregated") == 0;
    amptest_check(agg ? strcmp(value, "individual") != 0 && strcmp(value, "?") != 0
                      : strcmp(value, want) == 0,
                  "%s: ampio_fcoll is %s, expected %s", what, value, want);
}

/* Rank `r`'s bytes of step `step`, placed in the model at `off`. */
static unsigned char *data_of(int r, int step, long long n)
{
    unsigned char *d = malloc((size_t)n + 1);
    for (long long i = 0; i < n; i++)
        d[i] = amptest_byte(r + 16 * step, i);
    return d;
}

static void model_put(long long off, const unsigned char *d, long long n)
{
    memcpy(model + off, d, (size_t)n);
    if (off + n > model_len)
        model_len = off + n;
}

/* Every rank writes B contiguous bytes at `base` + slot(r) * B; slot -1 writes nothing. */
static void write_slots(int step, long long base, int reverse, int skip_rank, const char *what)
{
    for (int r = 0; r < amptest_size; r++) {
        if (r == skip_rank)
            continue;
        int slot = reverse ? amptest_size - 1 - r : r;
        unsigned char *d = data_of(r, step, B);
        model_put(base + (long long)slot * B, d, B);
        free(d);
    }
    int r = amptest_rank, slot = reverse ? amptest_size - 1 - r : r;
    int n = r == skip_rank ? 0 : B;
    unsigned char *mine = data_of(r, step, B);
    MPI_Status st;
    amptest_ok(MPI_File_write_at_all(fh, base + (MPI_Offset)slot * B, mine, n, MPI_BYTE, &st),
               what);
    int got = -1;
    MPI_Get_count(&st, MPI_BYTE, &got);
    amptest_check(got == n, "%s: wrote %d bytes, expected %d", what, got, n);
    free(mine);
}

/* Odd ranks see their region through a view with holes (512 bytes of every 1024), even ranks
 * as plain bytes. Writes or reads B / 2 bytes per rank at region `base`. */
static void holes_view(long long base)
{
    MPI_Datatype holes;
    MPI_Type_vector(B / 1024, 512, 1024, MPI_BYTE, &holes);
    MPI_Type_commit(&holes);
    int odd = amptest_rank % 2;
    amptest_ok(MPI_File_set_view(fh, base + (MPI_Offset)amptest_rank * B, MPI_BYTE,
                                 odd ? holes : MPI_BYTE, "native", MPI_INFO_NULL),
               "set_view with holes on odd ranks");
    MPI_Type_free(&holes);
}

static void write_mixed(int step, long long base)
{
    for (int r = 0; r < amptest_size; r++) {
        unsigned char *d = data_of(r, step, B / 2);
        long long at = base + (long long)r * B;
        if (r % 2 == 0)
            model_put(at, d, B / 2);
        else
            for (int k = 0; k < B / 1024; k++)
                model_put(at + 1024LL * k, d + 512 * k, 512);
        free(d);
    }
    holes_view(base);
    unsigned char *mine = data_of(amptest_rank, step, B / 2);
    amptest_ok(MPI_File_write_all(fh, mine, B / 2, MPI_BYTE, MPI_STATUS_IGNORE),
               "write_all, holes on odd ranks");
    free(mine);
    amptest_ok(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL),
               "set_view back to bytes");
}

/* Reads B bytes per rank at `base` + r * B; the last rank's read starts B / 2 before the end
 * of the file when `past_end`. Checks counts and bytes against the model. */
static void read_slots(long long base, int past_end, const char *what)
{
    long long at = base + (long long)amptest_rank * B;
    if (past_end && amptest_rank == amptest_size - 1)
        at = model_len - B / 2;
    unsigned char *got = malloc(B);
    memset(got, 0xEE, B);
    MPI_Status st;
    amptest_ok(MPI_File_read_at_all(fh, at, got, B, MPI_BYTE, &st), what);
    int n = -1;
    MPI_Get_count(&st, MPI_BYTE, &n);
    long long want = at + B <= model_len ? B : model_len - at;
    amptest_check(n == want, "%s: read %d bytes, expected %lld", what, n, want);
    amptest_check(n >= 0 && memcmp(got, model + at, (size_t)(n > 0 ? n : 0)) == 0,
                  "%s: the bytes read differ from the model", what);
    free(got);
}

static void read_mixed(long long base)
{
    holes_view(base);
    unsigned char *got = malloc(B / 2);
    MPI_Status st;
    amptest_ok(MPI_File_read_all(fh, got, B / 2, MPI_BYTE, &st), "read_all, holes on odd ranks");
    long long at = base + (long long)amptest_rank * B;
    int same = 1;
    for (int i = 0; i < B / 2 && same; i++) {
        long long off = amptest_rank % 2 ? at + 1024LL * (i / 512) + i % 512 : at + i;
        same = got[i] == model[off];
    }
    amptest_check(same, "read_all, holes on odd ranks: the bytes differ from the model");
    free(got);
    amptest_ok(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL),
               "set_view back to bytes");
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    long long region = (long long)amptest_size * B;
    model = calloc((size_t)(8 * region), 1);
    amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path("owners.dat"),
                             MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
               "open");

    write_slots(0, 0, 0, -1, "write_at_all, each rank its own block");
    used("individual", "first call, blocks in rank order");
    write_slots(1, region, 0, -1, "write_at_all again, each rank its own block");
    used("individual", "second call, blocks in rank order");
    write_mixed(2, 2 * region);
    write_slots(3, 3 * region, 0, 0, "write_at_all, rank 0 without data");
    used("individual", "rank 0 without data");
    /* a failing rank: every rank gets the error (ampio alone: natively the other ranks wait
     * for it in the collective). The next call writes the whole region again. */
    if (amptest_under_ampio()) {
        unsigned char *mine = data_of(amptest_rank, 4, B);
        int bad = amptest_rank == amptest_size - 1;
        int rc = MPI_File_write_at_all(fh, 4 * region + (MPI_Offset)amptest_rank * B, mine,
                                       bad ? -1 : B, MPI_BYTE, MPI_STATUS_IGNORE);
        int cls = MPI_SUCCESS;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        amptest_check(cls == MPI_ERR_COUNT, "write_at_all with count -1 on rank %d: class %d here",
                      amptest_size - 1, cls);
        free(mine);
    }
    write_slots(5, 4 * region, 0, -1, "write_at_all after a failed one");
    write_slots(6, 5 * region, 1, -1, "write_at_all, blocks in reverse rank order");
    used("individual", "blocks in reverse order after the owners' calls");
    write_slots(7, 6 * region, 1, -1, "write_at_all, blocks in reverse rank order again");
    used("aggregated", "blocks in reverse order, second call");

    read_slots(0, 0, "read_at_all, each rank its own block");
    read_slots(region, 0, "read_at_all again, each rank its own block");
    read_slots(3 * region, 0, "read_at_all, blocks of step 3");
    read_slots(6 * region, 1, "read_at_all, the last rank past the end of file");
    read_mixed(2 * region);
    amptest_ok(MPI_File_close(&fh), "close");
    if (amptest_rank == 0)
        amptest_compare_file("owners.dat", model, (size_t)model_len);

    /* The first read of an open starts with the owners of contiguous parts of a cycle buffer
     * or more: with a cycle buffer of B / 2, the even ranks' plain parts of the mixed region
     * are read before the call is described, and the odd ranks' parts with holes take the
     * full path from that description. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "4096");
    _Static_assert(B / 2 == 4096, "the cycle buffer is half a rank's block");
    amptest_ok(
        MPI_File_open(MPI_COMM_WORLD, amptest_path("owners.dat"), MPI_MODE_RDONLY, info, &fh),
        "open again, cb_buffer_size of half a block");
    read_mixed(2 * region);
    amptest_ok(MPI_File_close(&fh), "close after the first read with holes");
    amptest_ok(
        MPI_File_open(MPI_COMM_WORLD, amptest_path("owners.dat"), MPI_MODE_RDONLY, info, &fh),
        "open a third time");
    read_slots(6 * region, 1, "first read_at_all of an open, the last rank past the end of file");
    used("individual", "first read of an open, blocks of a cycle buffer or more");
    read_slots(region, 0, "second read_at_all of an open");
    used("individual", "second read of an open");
    amptest_ok(MPI_File_close(&fh), "close after the first reads");
    MPI_Info_free(&info);
    free(model);
    return amptest_finish();
}
