/* Data representations: external32 (big-endian, fixed sizes) for predefined and derived types,
 * and a registered representation with conversion functions. The expected bytes are computed
 * here, independently of any MPI library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amptest.h"

/* A record of mixed types: the file holds it packed in external32. */
typedef struct {
    int i;
    short s;
    double d;
    char c;
} rec_t;

static void put_be(unsigned char *p, const void *v, int size)
{
    const unsigned char *b = v;
    for (int k = 0; k < size; k++)
        p[k] = b[size - 1 - k]; /* this test runs on little-endian hosts */
}

static rec_t make_rec(int r, int k)
{
    rec_t x;
    memset(&x, 0, sizeof(x));
    x.i = r * 1000 + k - 7;
    x.s = (short)(-r - k);
    x.d = r + k / 8.0 - 1e6;
    x.c = (char)('a' + (r + k) % 26);
    return x;
}

static MPI_Datatype rec_type(void)
{
    int bl[4] = {1, 1, 1, 1};
    MPI_Aint dl[4] = {offsetof(rec_t, i), offsetof(rec_t, s), offsetof(rec_t, d),
                      offsetof(rec_t, c)};
    MPI_Datatype types[4] = {MPI_INT, MPI_SHORT, MPI_DOUBLE, MPI_CHAR}, t, rt;
    MPI_Type_create_struct(4, bl, dl, types, &t);
    MPI_Type_create_resized(t, 0, sizeof(rec_t), &rt);
    MPI_Type_free(&t);
    MPI_Type_commit(&rt);
    return rt;
}

#define RECS      5
#define REC_EXT32 15 /* 4 + 2 + 8 + 1 */

static void external32(void)
{
    const char *name = "ext32.dat";
    int r = amptest_rank, P = amptest_size;
    MPI_Datatype rt = rec_type();
    MPI_File fh;
    if (!amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name),
                                  MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                    name)) {
        MPI_Type_free(&rt);
        return;
    }
    MPI_Aint ext = 0;
    amptest_ok(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL),
               "set_view external32");
    /* sizes are external32's; the resized record keeps its explicit extent */
    amptest_ok(MPI_File_get_type_extent(fh, MPI_SHORT, &ext), "get_type_extent");
    amptest_check(ext == 2, "external32 extent of MPI_SHORT %ld, expected 2", (long)ext);
    amptest_ok(MPI_File_get_type_extent(fh, rt, &ext), "get_type_extent");
    amptest_check(ext == sizeof(rec_t), "external32 extent of the resized record %ld, expected %zu",
                  (long)ext, sizeof(rec_t));
    /* each rank's records, then one int and one double array after all the records */
    rec_t recs[RECS];
    for (int k = 0; k < RECS; k++)
        recs[k] = make_rec(r, k);
    MPI_Status st;
    MPI_Offset base = (MPI_Offset)r * RECS * REC_EXT32;
    amptest_ok(MPI_File_write_at_all(fh, base, recs, RECS, rt, &st), "write_at_all records");
    int ints[3] = {r, -r, 0x01020304};
    MPI_Offset tail = (MPI_Offset)P * RECS * REC_EXT32 + (MPI_Offset)r * 12;
    amptest_ok(MPI_File_write_at(fh, tail, ints, 3, MPI_INT, &st), "write_at ints");
    amptest_ok(MPI_File_close(&fh), "close");
    MPI_Barrier(MPI_COMM_WORLD);

    if (r == 0) {
        size_t len = (size_t)P * (RECS * REC_EXT32 + 12);
        unsigned char *model = calloc(len, 1);
        for (int q = 0; q < P; q++) {
            for (int k = 0; k < RECS; k++) {
                rec_t x = make_rec(q, k);
                unsigned char *p = model + (size_t)(q * RECS + k) * REC_EXT32;
                put_be(p, &x.i, 4);
                put_be(p + 4, &x.s, 2);
                put_be(p + 6, &x.d, 8);
                p[14] = (unsigned char)x.c;
            }
            int qi[3] = {q, -q, 0x01020304};
            for (int k = 0; k < 3; k++)
                put_be(model + (size_t)P * RECS * REC_EXT32 + (size_t)q * 12 + 4 * k, &qi[k], 4);
        }
        amptest_compare_file(name, model, len);
        free(model);
    }

    if (amptest_ok(
            MPI_File_open(MPI_COMM_WORLD, amptest_path(name), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
            name)) {
        amptest_ok(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL),
                   "set_view");
        rec_t back[RECS];
        memset(back, 0, sizeof(back));
        amptest_ok(MPI_File_read_at_all(fh, base, back, RECS, rt, &st), "read_at_all");
        for (int k = 0; k < RECS; k++)
            if (!amptest_check(back[k].i == recs[k].i && back[k].s == recs[k].s &&
                                   back[k].d == recs[k].d && back[k].c == recs[k].c,
                               "external32 record %d read back wrong", k))
                break;
        amptest_ok(MPI_File_close(&fh), "close");
    }
    MPI_Type_free(&rt);
}

/* A user representation storing each int as its bitwise complement, 4 bytes. */
static int complement_read(void *userbuf, MPI_Datatype type, int count, void *filebuf,
                           MPI_Offset position, void *extra)
{
    int *out = (int *)userbuf + position;
    const int *in = filebuf;
    for (int k = 0; k < count; k++)
        out[k] = ~in[k];
    return MPI_SUCCESS;
}

static int complement_write(void *userbuf, MPI_Datatype type, int count, void *filebuf,
                            MPI_Offset position, void *extra)
{
    const int *in = (const int *)userbuf + position;
    int *out = filebuf;
    for (int k = 0; k < count; k++)
        out[k] = ~in[k];
    return MPI_SUCCESS;
}

static int complement_extent(MPI_Datatype type, MPI_Aint *extent, void *extra)
{
    MPI_Aint lb;
    return MPI_Type_get_extent(type, &lb, extent);
}

static void user_datarep(void)
{
    const char *name = "complement.dat";
    int r = amptest_rank, P = amptest_size;
    int rc = MPI_Register_datarep("complement", complement_read, complement_write,
                                  complement_extent, NULL);
    if (!amptest_ok(rc, "MPI_Register_datarep"))
        return;
    amptest_class(MPI_Register_datarep("complement", complement_read, complement_write,
                                       complement_extent, NULL),
                  MPI_ERR_DUP_DATAREP, "registering a representation twice");
    MPI_File fh;
    if (!amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name),
                                  MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                    name))
        return;
    amptest_ok(
        MPI_File_set_view(fh, (MPI_Offset)r * 64, MPI_INT, MPI_INT, "complement", MPI_INFO_NULL),
        "set_view complement");
    int v[16], back[16];
    for (int k = 0; k < 16; k++)
        v[k] = r * 16 + k;
    MPI_Status st;
    amptest_ok(MPI_File_write_all(fh, v, 16, MPI_INT, &st), "write_all complement");
    amptest_ok(MPI_File_seek(fh, 0, MPI_SEEK_SET), "seek");
    memset(back, 0, sizeof(back));
    amptest_ok(MPI_File_read_all(fh, back, 16, MPI_INT, &st), "read_all complement");
    amptest_check(memcmp(back, v, sizeof(v)) == 0, "complement representation read back wrong");
    amptest_ok(MPI_File_close(&fh), "close");
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0) {
        int *model = malloc(64 * (size_t)P);
        for (int k = 0; k < 16 * P; k++)
            model[k] = ~k;
        amptest_compare_file(name, model, 64 * (size_t)P);
        free(model);
    }
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    external32();
    user_datarep();
    return amptest_finish();
}
