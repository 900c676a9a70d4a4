/* File-level semantics: seek, positions, sizes, preallocation, access modes (APPEND,
 * DELETE_ON_CLOSE, SEQUENTIAL), type extents per data representation, and concurrent sieved
 * independent writes that interleave at the int level. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amptest.h"

static void seek_and_sizes(void)
{
    const char *name = "seek.dat";
    MPI_File fh;
    if (!amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name),
                                  MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                    name))
        return;
    int r = amptest_rank, P = amptest_size;
    /* each rank owns 10 doubles; the view is in doubles */
    amptest_ok(
        MPI_File_set_view(fh, (MPI_Offset)r * 80, MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL),
        "set_view");
    double d[10];
    for (int i = 0; i < 10; i++)
        d[i] = r * 100 + i + 0.5;
    MPI_Status st;
    MPI_Offset pos = -1;
    amptest_ok(MPI_File_seek(fh, 4, MPI_SEEK_SET), "seek set");
    amptest_ok(MPI_File_write(fh, d + 4, 3, MPI_DOUBLE, &st), "write");
    amptest_ok(MPI_File_get_position(fh, &pos), "get_position");
    amptest_check(pos == 7, "position %lld after SEEK_SET 4 + 3, expected 7", (long long)pos);
    amptest_ok(MPI_File_seek(fh, -7, MPI_SEEK_CUR), "seek cur");
    amptest_ok(MPI_File_write(fh, d, 4, MPI_DOUBLE, &st), "write");
    amptest_ok(MPI_File_seek(fh, 7, MPI_SEEK_SET), "seek");
    amptest_ok(MPI_File_write(fh, d + 7, 3, MPI_DOUBLE, &st), "write");
    amptest_ok(MPI_File_sync(fh), "sync");
    MPI_Barrier(MPI_COMM_WORLD);
    amptest_ok(MPI_File_sync(fh), "sync");

    MPI_Offset size = -1;
    amptest_ok(MPI_File_get_size(fh, &size), "get_size");
    amptest_check(size == (MPI_Offset)P * 80, "size %lld, expected %d", (long long)size, P * 80);
    /* SEEK_END is relative to the end of file in view terms: the last rank's view ends there */
    if (r == P - 1) {
        amptest_ok(MPI_File_seek(fh, -2, MPI_SEEK_END), "seek end");
        amptest_ok(MPI_File_get_position(fh, &pos), "get_position");
        amptest_check(pos == 8, "position %lld after SEEK_END -2, expected 8", (long long)pos);
        double two[2] = {0, 0};
        amptest_ok(MPI_File_read(fh, two, 2, MPI_DOUBLE, &st), "read");
        amptest_check(two[0] == d[8] && two[1] == d[9], "read after SEEK_END: %g %g", two[0],
                      two[1]);
    }
    amptest_check(MPI_File_seek(fh, -1, MPI_SEEK_SET) != MPI_SUCCESS,
                  "seek to a negative position succeeded");

    /* grow with set_size, then preallocate does not shrink, then shrink again */
    amptest_ok(MPI_File_set_size(fh, (MPI_Offset)P * 80 + 1000), "set_size grow");
    amptest_ok(MPI_File_get_size(fh, &size), "get_size");
    amptest_check(size == (MPI_Offset)P * 80 + 1000, "size %lld after set_size", (long long)size);
    amptest_ok(MPI_File_preallocate(fh, 100), "preallocate smaller");
    amptest_ok(MPI_File_get_size(fh, &size), "get_size");
    amptest_check(size == (MPI_Offset)P * 80 + 1000, "preallocate shrank the file to %lld",
                  (long long)size);
    amptest_ok(MPI_File_preallocate(fh, (MPI_Offset)P * 80 + 4096), "preallocate");
    amptest_ok(MPI_File_get_size(fh, &size), "get_size");
    amptest_check(size == (MPI_Offset)P * 80 + 4096, "size %lld after preallocate",
                  (long long)size);
    amptest_ok(MPI_File_set_size(fh, (MPI_Offset)P * 80), "set_size shrink");

    int amode = 0, flag = 1;
    amptest_ok(MPI_File_get_amode(fh, &amode), "get_amode");
    amptest_check(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR), "amode %d", amode);
    MPI_Group g, wg;
    int cmp = MPI_UNEQUAL;
    amptest_ok(MPI_File_get_group(fh, &g), "get_group");
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &cmp);
    amptest_check(cmp == MPI_IDENT, "get_group is not the group of the communicator");
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    amptest_ok(MPI_File_get_atomicity(fh, &flag), "get_atomicity");
    amptest_check(flag == 0, "atomic mode is on by default");
    amptest_ok(MPI_File_set_atomicity(fh, 1), "set_atomicity");
    amptest_ok(MPI_File_get_atomicity(fh, &flag), "get_atomicity");
    amptest_check(flag == 1, "set_atomicity(1) did not stick");

    MPI_Aint ext = 0;
    amptest_ok(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext), "get_type_extent");
    amptest_check(ext == 8, "extent of double %ld", (long)ext);
    amptest_ok(MPI_File_close(&fh), "close");

    if (r == 0) {
        double *model = malloc((size_t)P * 80);
        for (int q = 0; q < P; q++)
            for (int i = 0; i < 10; i++)
                model[q * 10 + i] = q * 100 + i + 0.5;
        amptest_compare_file(name, model, (size_t)P * 80);
        free(model);
    }
}

/* APPEND puts both pointers at the end; DELETE_ON_CLOSE removes the file; SEQUENTIAL allows
 * only shared-pointer access. */
static void modes(void)
{
    const char *name = "append.dat";
    MPI_File fh;
    int r = amptest_rank;
    MPI_Status st;
    if (r == 0) {
        FILE *f = fopen(amptest_path(name), "w");
        fputs("header-of-17-byte", f);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name),
                                 MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh),
                   "open append")) {
        MPI_Offset pos = -1, shpos = -1;
        amptest_ok(MPI_File_get_position(fh, &pos), "get_position");
        amptest_ok(MPI_File_get_position_shared(fh, &shpos), "get_position_shared");
        amptest_check(pos == 17 && shpos == 17, "APPEND: positions %lld/%lld, expected 17",
                      (long long)pos, (long long)shpos);
        char rec[16];
        snprintf(rec, sizeof(rec), "rank%03d", r % 1000);
        amptest_ok(MPI_File_write_ordered(fh, rec, 7, MPI_CHAR, &st), "write_ordered");
        amptest_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0) {
        size_t len = 17 + 7 * (size_t)amptest_size;
        char *model = malloc(len + 16);
        memcpy(model, "header-of-17-byte", 17);
        for (int q = 0; q < amptest_size; q++)
            snprintf(model + 17 + 7 * q, 8, "rank%03d", q % 1000);
        amptest_compare_file(name, model, len);
        free(model);
    }

    const char *tmp = "delete_on_close.dat";
    char kept[4096];
    snprintf(kept, sizeof(kept), "%s", amptest_path(tmp));
    if (amptest_ok(MPI_File_open(MPI_COMM_WORLD, kept,
                                 MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                                 MPI_INFO_NULL, &fh),
                   "open delete_on_close")) {
        amptest_ok(MPI_File_write_at_all(fh, r, "x", 1, MPI_CHAR, &st), "write_at_all");
        amptest_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    amptest_check(access(kept, F_OK) != 0, "DELETE_ON_CLOSE left %s behind", kept);

    const char *seqname = "sequential.dat";
    if (amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(seqname),
                                 MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL,
                                 MPI_INFO_NULL, &fh),
                   "open sequential")) {
        int v[3] = {r, r + 1, r + 2};
        amptest_ok(MPI_File_write_ordered(fh, v, 3, MPI_INT, &st), "write_ordered sequential");
        amptest_class(MPI_File_write_at(fh, 0, v, 1, MPI_INT, &st), MPI_ERR_UNSUPPORTED_OPERATION,
                      "write_at on a sequential file");
        amptest_class(MPI_File_seek(fh, 0, MPI_SEEK_SET), MPI_ERR_UNSUPPORTED_OPERATION,
                      "seek on a sequential file");
        amptest_ok(MPI_File_close(&fh), "close");
    }
    if (r == 0) {
        int *model = malloc(12 * (size_t)amptest_size);
        for (int q = 0; q < amptest_size; q++)
            for (int i = 0; i < 3; i++)
                model[3 * q + i] = q + i;
        amptest_compare_file(seqname, model, 12 * (size_t)amptest_size);
        free(model);
    }
}

/* Opens `name` with sieved writes enabled (and a sieve buffer of `buffer` bytes, if given); the
 * info is the caller's to free. Returns 0, with nothing to free, when the open failed. */
static int open_sieving(const char *name, const char *buffer, MPI_Info *info, MPI_File *fh)
{
    MPI_Info_create(info);
    MPI_Info_set(*info, "romio_ds_write", "enable");
    if (buffer)
        MPI_Info_set(*info, "ind_wr_buffer_size", buffer);
    if (amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name),
                                 MPI_MODE_CREATE | MPI_MODE_RDWR, *info, fh),
                   name))
        return 1;
    MPI_Info_free(info);
    return 0;
}

/* Every rank writes every P-th int of a shared region with independent, sieved writes, all at
 * once and several times over: a read-modify-write that is not locked would lose other ranks'
 * ints. */
static void concurrent_sieving(void)
{
    const char *name = "sieve.dat";
    int P = amptest_size, r = amptest_rank, n = 4096;
    MPI_Info info;
    MPI_File fh;
    if (!open_sieving(name, "4096", &info, &fh))
        return;
    MPI_Datatype ft, t;
    MPI_Type_vector(1, 1, P, MPI_INT, &t);
    MPI_Type_create_resized(t, 0, (MPI_Aint)4 * P, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&t);
    amptest_ok(MPI_File_set_view(fh, 4 * (MPI_Offset)r, MPI_INT, ft, "native", info), "set_view");
    int *v = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        v[i] = r * 1000000 + i + 1;
    MPI_Status st;
    for (int pass = 0; pass < 3; pass++) /* the same bytes again: only races can change them */
        amptest_ok(MPI_File_write_at(fh, 0, v, n, MPI_INT, &st), "write_at sieved");
    amptest_ok(MPI_File_close(&fh), "close");
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0) {
        int *model = malloc(sizeof(int) * (size_t)n * P);
        for (int i = 0; i < n; i++)
            for (int q = 0; q < P; q++)
                model[(size_t)i * P + q] = q * 1000000 + i + 1;
        amptest_compare_file(name, model, sizeof(int) * (size_t)n * P);
        free(model);
    }
    MPI_Type_free(&ft);
    MPI_Info_free(&info);
    free(v);
}

/* Ranks in pairs share a region of 2 x NBLK blocks of BLK ints: the odd rank writes the even
 * blocks through a view with holes (sieved: it reads and writes back the odd blocks too) over
 * and over, while the even rank writes the odd blocks one by one through a plain view, with new
 * values each pass. The plain writes must still land: they take the lock that the
 * read-modify-write holds, because some rank's view has holes. */
static void sieving_beside_plain_writes(void)
{
    enum { BLK = 1024, NBLK = 32, PASSES = 20 };
    const char *name = "sieve-plain.dat";
    int P = amptest_size, r = amptest_rank, pair = r / 2, odd = r % 2;
    if (P < 2)
        return;
    MPI_Info info;
    MPI_File fh;
    if (!open_sieving(name, NULL, &info, &fh))
        return;
    MPI_Offset region = (MPI_Offset)pair * 2 * BLK * NBLK * 4;
    MPI_Datatype holes;
    MPI_Type_vector(NBLK, BLK, 2 * BLK, MPI_INT, &holes);
    MPI_Type_commit(&holes);
    int lone = odd == 0 && r == P - 1; /* an even rank without a partner writes both halves */
    amptest_ok(MPI_File_set_view(fh, region, MPI_INT, odd ? holes : MPI_INT, "native", info),
               "set_view, holes on odd ranks");
    int *v = malloc(sizeof(int) * BLK * NBLK * 2);
    if (odd) { /* sieve until the partner's plain writes are done: every one of them races */
        for (int i = 0; i < BLK * NBLK; i++)
            v[i] = r * 100000000 + i + 1;
        for (int done = 0, pass = 0; !done || pass < 2; pass++) {
            amptest_ok(MPI_File_write_at(fh, 0, v, BLK * NBLK, MPI_INT, MPI_STATUS_IGNORE),
                       "sieved write_at");
            if (!done)
                MPI_Iprobe(r - 1, 77, MPI_COMM_WORLD, &done, MPI_STATUS_IGNORE);
        }
        MPI_Recv(NULL, 0, MPI_BYTE, r - 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else { /* new values every pass, so that a write put back by a sieve shows */
        for (int pass = 0; pass < PASSES; pass++) {
            for (int i = 0; i < 2 * BLK * NBLK; i++)
                v[i] = r * 100000000 + pass * 1000000 + i + 1;
            for (int b = lone ? 0 : 1; b < 2 * NBLK; b += lone ? 1 : 2)
                amptest_ok(MPI_File_write_at(fh, (MPI_Offset)b * BLK, v + b * BLK, BLK, MPI_INT,
                                             MPI_STATUS_IGNORE),
                           "plain write_at");
        }
        if (!lone)
            MPI_Send(NULL, 0, MPI_BYTE, r + 1, 77, MPI_COMM_WORLD);
    }
    amptest_ok(MPI_File_close(&fh), "close");
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0) {
        size_t n = (size_t)(P + 1) / 2 * 2 * BLK * NBLK;
        int *model = malloc(sizeof(int) * n);
        for (size_t i = 0; i < n; i++) {
            int q = (int)(i / (2 * BLK * NBLK)), at = (int)(i % (2 * BLK * NBLK));
            int blk = at / BLK, writer = blk % 2 == 0 && 2 * q + 1 < P ? 2 * q + 1 : 2 * q;
            /* the odd rank's data are packed: block b of its view is block 2b of the region */
            int index = writer % 2 ? (blk / 2) * BLK + at % BLK : at;
            model[i] = writer * 100000000 + (writer % 2 ? 0 : (PASSES - 1) * 1000000) + index + 1;
        }
        amptest_compare_file(name, model, sizeof(int) * n);
        free(model);
    }
    MPI_Type_free(&holes);
    MPI_Info_free(&info);
    free(v);
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    seek_and_sizes();
    modes();
    concurrent_sieving();
    sieving_beside_plain_writes();
    return amptest_finish();
}
