/* Flattening of every datatype constructor against typemaps worked out by hand. */
#include <mpi.h>
#include <stdlib.h>

#include "dtype/dt.h"
#include "io/datarep.h"
#include "unit.h"

/* Checks the segments of `type` against pairs (offset, length) terminated by -1. */
static void expect_segs(MPI_Datatype type, const long long *pairs, long long size, long long lb,
                        long long extent, int nondecreasing, int overlapping)
{
    MPI_Type_commit(&type);
    amp_dt_t *dt = NULL;
    UNIT_EQ(amp_dt_get(type, &dt), MPI_SUCCESS);
    if (!dt)
        return;
    size_t n = 0;
    while (pairs[2 * n] >= 0)
        n++;
    UNIT_EQ(dt->segs.n, n);
    for (size_t i = 0; i < n && i < dt->segs.n; i++) {
        UNIT_EQ(dt->segs.v[i].off, pairs[2 * i]);
        UNIT_EQ(dt->segs.v[i].len, pairs[2 * i + 1]);
    }
    UNIT_EQ(dt->size, size);
    UNIT_EQ(dt->lb, lb);
    if (extent >= 0)
        UNIT_EQ(dt->extent, extent);
    UNIT_EQ(dt->nondecreasing, nondecreasing);
    UNIT_EQ(dt->overlapping, overlapping);
    amp_dt_release(dt);
    int ni, na, nd, combiner;
    MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    if (combiner != MPI_COMBINER_NAMED)
        MPI_Type_free(&type);
}

static MPI_Datatype vector_int(void)
{
    MPI_Datatype t;
    MPI_Type_vector(3, 2, 5, MPI_INT, &t);
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Datatype t, u;

    expect_segs(MPI_INT, (long long[]){0, 4, -1}, 4, 0, 4, 1, 0);
    expect_segs(MPI_DOUBLE_INT, (long long[]){0, 12, -1}, 12, 0, 16, 1, 0);

    t = vector_int();
    expect_segs(t, (long long[]){0, 8, 20, 8, 40, 8, -1}, 24, 0, 48, 1, 0);

    MPI_Type_create_hvector(2, 3, 7, MPI_CHAR, &t);
    expect_segs(t, (long long[]){0, 3, 7, 3, -1}, 6, 0, 10, 1, 0);

    MPI_Type_indexed(2, (int[]){2, 1}, (int[]){5, 0}, MPI_INT, &t);
    expect_segs(t, (long long[]){20, 8, 0, 4, -1}, 12, 0, 28, 0, 0);

    MPI_Type_create_hindexed(2, (int[]){1, 2}, (MPI_Aint[]){3, 10}, MPI_SHORT, &t);
    expect_segs(t, (long long[]){3, 2, 10, 4, -1}, 6, 3, -1, 1, 0); /* padding is the host's */

    MPI_Type_create_indexed_block(2, 2, (int[]){0, 1}, MPI_INT, &t);
    expect_segs(t, (long long[]){0, 8, 4, 8, -1}, 16, 0, 12, 1, 1);

    MPI_Type_create_hindexed_block(2, 3, (MPI_Aint[]){100, 0}, MPI_CHAR, &t);
    expect_segs(t, (long long[]){100, 3, 0, 3, -1}, 6, 0, 103, 0, 0);

    MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8},
                           (MPI_Datatype[]){MPI_INT, MPI_DOUBLE}, &t);
    expect_segs(t, (long long[]){0, 4, 8, 8, -1}, 12, 0, 16, 1, 0);

    /* 2-D subarray, C order: rows 1-2, columns 2-4 of a 4x5 int array */
    MPI_Type_create_subarray(2, (int[]){4, 5}, (int[]){2, 3}, (int[]){1, 2}, MPI_ORDER_C, MPI_INT,
                             &t);
    expect_segs(t, (long long[]){28, 12, 48, 12, -1}, 24, 0, 80, 1, 0);

    /* the same in Fortran order: the first index varies fastest */
    MPI_Type_create_subarray(2, (int[]){4, 5}, (int[]){2, 3}, (int[]){1, 2}, MPI_ORDER_FORTRAN,
                             MPI_INT, &t);
    expect_segs(t, (long long[]){36, 8, 52, 8, 68, 8, -1}, 24, 0, 80, 1, 0);

    /* 1-D cyclic(2) over 3 processes, rank 1 of 10 elements: indices 2, 3, 8, 9 */
    MPI_Type_create_darray(3, 1, 1, (int[]){10}, (int[]){MPI_DISTRIBUTE_CYCLIC}, (int[]){2},
                           (int[]){3}, MPI_ORDER_C, MPI_INT, &t);
    expect_segs(t, (long long[]){8, 8, 32, 8, -1}, 16, 0, 40, 1, 0);

    /* 2-D block over a 2x3 grid, rank 4 = coordinates (1, 1): rows 2-3, columns 2-3 of 4x6 */
    MPI_Type_create_darray(6, 4, 2, (int[]){4, 6},
                           (int[]){MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK},
                           (int[]){MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG},
                           (int[]){2, 3}, MPI_ORDER_C, MPI_INT, &t);
    expect_segs(t, (long long[]){56, 8, 80, 8, -1}, 16, 0, 96, 1, 0);

    u = vector_int();
    MPI_Type_create_resized(u, -4, 100, &t);
    expect_segs(t, (long long[]){0, 8, 20, 8, 40, 8, -1}, 24, -4, 100, 1, 0);
    MPI_Type_free(&u);

    /* nesting: instances of vector(2,1,2) every 12 bytes touch and merge */
    MPI_Type_vector(2, 1, 2, MPI_INT, &u);
    MPI_Type_contiguous(2, u, &t);
    expect_segs(t, (long long[]){0, 4, 8, 8, 20, 4, -1}, 16, 0, 24, 1, 0);
    MPI_Type_free(&u);

    u = vector_int();
    MPI_Type_dup(u, &t);
    expect_segs(t, (long long[]){0, 8, 20, 8, 40, 8, -1}, 24, 0, 48, 1, 0);
    MPI_Type_free(&u);

    /* iteration: 10 bytes into vector(3,2,5,int) is 2 bytes into its second segment */
    u = vector_int();
    MPI_Type_commit(&u);
    amp_dt_t *dt;
    amp_dt_get(u, &dt);
    amp_dt_iter_t it;
    MPI_Aint addr;
    MPI_Count len;
    amp_dt_iter_init(&it, dt, 1000, 10);
    amp_dt_iter_next(&it, 100, &addr, &len);
    UNIT_EQ(addr, 1022);
    UNIT_EQ(len, 6);
    amp_dt_iter_next(&it, 100, &addr, &len);
    UNIT_EQ(addr, 1040);
    amp_dt_iter_next(&it, 3, &addr, &len);
    UNIT_EQ(addr, 1048); /* second instance */
    UNIT_EQ(len, 3);

    /* external32 sizes: MPI_LONG is 4 bytes there, MPI_INT 4, MPI_DOUBLE 8 */
    const amp_datarep_t *ext32;
    UNIT_EQ(amp_datarep_find("external32", &ext32), MPI_SUCCESS);
    MPI_Count size = 0;
    amp_dt_t *ldt;
    amp_dt_get(MPI_LONG, &ldt);
    UNIT_EQ(amp_datarep_size(ext32, MPI_LONG, ldt, &size), MPI_SUCCESS);
    UNIT_EQ(size, 4);
    amp_dt_release(ldt);
    UNIT_EQ(amp_datarep_size(ext32, u, dt, &size), MPI_SUCCESS);
    UNIT_EQ(size, 24);

    /* encode/decode round trip of longs and doubles in external32 */
    struct {
        long l;
        double d;
    } in = {-123456, 2.5}, out = {0, 0};
    MPI_Datatype ld;
    MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8},
                           (MPI_Datatype[]){MPI_LONG, MPI_DOUBLE}, &ld);
    MPI_Type_commit(&ld);
    amp_dt_t *lddt;
    amp_dt_get(ld, &lddt);
    unsigned char stream[12];
    UNIT_EQ(amp_datarep_encode(ext32, &in, ld, lddt, 1, stream), MPI_SUCCESS);
    UNIT_EQ(stream[0], 0xff); /* -123456 = 0xfffe1dc0, big-endian */
    UNIT_EQ(stream[3], 0xc0);
    UNIT_EQ(stream[4], 0x40); /* 2.5 = 0x4004000000000000 */
    UNIT_EQ(amp_datarep_decode(ext32, &out, ld, lddt, 1, stream, 12), MPI_SUCCESS);
    UNIT_EQ(out.l, -123456);
    UNIT_CHECK(out.d == 2.5);
    in.l = 1L << 40; /* does not fit in 4 bytes */
    UNIT_CHECK(amp_datarep_encode(ext32, &in, ld, lddt, 1, stream) != MPI_SUCCESS);
    amp_dt_release(lddt);
    MPI_Type_free(&ld);
    amp_dt_release(dt);
    MPI_Type_free(&u);

    int rc = unit_report("test_dt");
    MPI_Finalize();
    return rc;
}
