/* The aggregator selection planner, without MPI: the paper's 4x4 grid example (rows split
 * above k, merged below k), every process aggregating when each writes more than k, counts
 * that follow the data volume and not the process count, balanced groups for uneven sizes. */
#include <stdlib.h>

#include "coll/auto_select.h"
#include "unit.h"

#define MIB (1LL << 20)

static amp_groups_t grid_rows(int nprocs, int cols)
{
    int dims[2] = {nprocs / cols, cols};
    amp_groups_t g = {0, malloc(((size_t)nprocs + 1) * sizeof(int))};
    g.n = amp_auto_group_by_dims(nprocs, 2, dims, g.first);
    return g;
}

static int64_t group_bytes(const amp_groups_t *g, const int64_t *bytes, int i)
{
    int64_t s = 0;
    for (int r = g->first[i]; r < g->first[i + 1]; r++)
        s += bytes[r];
    return s;
}

/* Every group is a nonempty range, the ranges cover 0..nprocs in order. */
static void check_partition(const amp_groups_t *g, int nprocs)
{
    UNIT_EQ(g->first[0], 0);
    UNIT_EQ(g->first[g->n], nprocs);
    for (int i = 0; i < g->n; i++)
        UNIT_CHECK(g->first[i] < g->first[i + 1]);
}

static void paper_grid(void)
{
    int64_t bytes[16];
    amp_groups_t rows = grid_rows(16, 4), out;
    UNIT_EQ(rows.n, 4);
    UNIT_EQ(rows.first[1], 4);

    /* a row writes 4 x 4 MiB = 16 MiB; k = 8 MiB: each row splits in two */
    for (int r = 0; r < 16; r++)
        bytes[r] = 4 * MIB;
    UNIT_EQ(amp_auto_refine(16, bytes, 1, 8 * MIB, &rows, &out), 0);
    check_partition(&out, 16);
    UNIT_EQ(out.n, 8);
    for (int i = 0; i < out.n; i++)
        UNIT_EQ(group_bytes(&out, bytes, i), 8 * MIB);
    amp_groups_free(&out);

    /* k = 32 MiB: two rows merge into one group */
    UNIT_EQ(amp_auto_refine(16, bytes, 1, 32 * MIB, &rows, &out), 0);
    check_partition(&out, 16);
    UNIT_EQ(out.n, 2);
    UNIT_EQ(out.first[1], 8);
    amp_groups_free(&out);

    /* k = 16 MiB: one aggregator per row, as the grid suggests */
    UNIT_EQ(amp_auto_refine(16, bytes, 1, 16 * MIB, &rows, &out), 0);
    UNIT_EQ(out.n, 4);
    amp_groups_free(&out);
    amp_groups_free(&rows);
}

static void tile_above_k(void)
{
    int64_t bytes[16];
    for (int r = 0; r < 16; r++)
        bytes[r] = 20 * MIB;
    amp_groups_t rows = grid_rows(16, 4), out;
    UNIT_EQ(amp_auto_refine(16, bytes, 1, 8 * MIB, &rows, &out), 0);
    UNIT_EQ(out.n, 16); /* every process an aggregator */
    check_partition(&out, 16);
    amp_groups_free(&out);
    amp_groups_free(&rows);
}

static amp_groups_t singles(int nprocs)
{
    amp_groups_t g = {nprocs, malloc(((size_t)nprocs + 1) * sizeof(int))};
    for (int r = 0; r <= nprocs; r++)
        g.first[r] = r;
    return g;
}

static int count_for(int nprocs, int64_t volume, int64_t k)
{
    int64_t *bytes = malloc(sizeof(int64_t) * (size_t)nprocs);
    for (int r = 0; r < nprocs; r++)
        bytes[r] = volume / nprocs + (r < volume % nprocs);
    amp_groups_t init = singles(nprocs), out;
    int n = amp_auto_refine(nprocs, bytes, 1, k, &init, &out) == 0 ? out.n : -1;
    check_partition(&out, nprocs);
    amp_groups_free(&out);
    amp_groups_free(&init);
    free(bytes);
    return n;
}

static void volume_not_process_count(void)
{
    /* 64 MiB with k = 8 MiB: 8 aggregators whether 16, 64 or 256 processes write it */
    UNIT_EQ(count_for(16, 64 * MIB, 8 * MIB), 8);
    UNIT_EQ(count_for(64, 64 * MIB, 8 * MIB), 8);
    UNIT_EQ(count_for(256, 64 * MIB, 8 * MIB), 8);
    /* other volumes, other counts */
    UNIT_EQ(count_for(64, 16 * MIB, 8 * MIB), 2);
    UNIT_EQ(count_for(64, 256 * MIB, 8 * MIB), 32);
    UNIT_EQ(count_for(64, 4 * MIB, 8 * MIB), 1);
    UNIT_EQ(count_for(64, 1024 * MIB, 8 * MIB), 64);
}

static void uneven_sizes_balance(void)
{
    enum { P = 48 };
    int64_t bytes[P];
    unsigned seed = 12345;
    int64_t total = 0;
    for (int r = 0; r < P; r++) {
        seed = seed * 1103515245u + 12345u;
        bytes[r] = (int64_t)(MIB / 2 + (seed >> 8) % (3 * MIB)); /* 0.5 to 3.5 MiB */
        total += bytes[r];
    }
    bytes[7] = 0; /* and a rank with nothing */
    amp_groups_t one = {1, (int[]){0, P}}, out;
    int64_t k = 8 * MIB;
    UNIT_EQ(amp_auto_refine(P, bytes, 1, k, &one, &out), 0);
    check_partition(&out, P);
    int64_t lo = -1, hi = 0;
    for (int i = 0; i < out.n; i++) {
        int64_t b = group_bytes(&out, bytes, i);
        lo = lo < 0 || b < lo ? b : lo;
        hi = b > hi ? b : hi;
        if (getenv("UNIT_VERBOSE"))
            fprintf(stderr, "group %d: ranks %d-%d, %.2f MiB\n", i, out.first[i],
                    out.first[i + 1] - 1, (double)b / MIB);
    }
    UNIT_CHECK(out.n >= total / k - 1 && out.n <= total / k + 2);
    UNIT_CHECK(hi <= 2 * lo); /* no highly uneven groups */
    UNIT_CHECK(lo >= k / 2);
    amp_groups_free(&out);
}

static void extents_and_topology(void)
{
    /* 2 x 2 tiles of a row-major array: ranks 0,1 share rows, ranks 2,3 share the next rows */
    int64_t lo[4] = {0, 40, 400, 440}, hi[4] = {360, 400, 760, 800},
            bytes[4] = {200, 200, 200, 200};
    int first[5];
    UNIT_EQ(amp_auto_group_by_extents(4, lo, hi, bytes, 1, first), 2);
    UNIT_EQ(first[1], 2);
    /* disjoint blocks: one group each; an empty rank joins the group before it */
    int64_t lo2[4] = {0, 100, 0, 300}, hi2[4] = {100, 200, 0, 400}, b2[4] = {100, 100, 0, 100};
    UNIT_EQ(amp_auto_group_by_extents(4, lo2, hi2, b2, 1, first), 3);
    UNIT_EQ(first[2], 3); /* rank 2 has nothing: it stays in rank 1's group */
    /* the same as records of (bytes, lo, hi), 3 words apart, as the planner keeps them */
    int64_t rec[12];
    for (int r = 0; r < 4; r++) {
        rec[3 * r] = b2[r];
        rec[3 * r + 1] = lo2[r];
        rec[3 * r + 2] = hi2[r];
    }
    UNIT_EQ(amp_auto_group_by_extents(4, rec + 1, rec + 2, rec, 3, first), 3);
    UNIT_EQ(first[2], 3);
    amp_groups_t all = {1, (int[]){0, 4}}, out;
    UNIT_EQ(amp_auto_refine(4, rec, 3, 100, &all, &out), 0);
    UNIT_EQ(out.n, 3); /* 100 bytes per group, as b2 */
    amp_groups_free(&out);
    int dims[3];
    UNIT_EQ(amp_auto_parse_topology("2x2x4", dims, 3), 3);
    UNIT_EQ(dims[2], 4);
    UNIT_EQ(amp_auto_parse_topology("4x", dims, 3), 0);
    UNIT_EQ(amp_auto_parse_topology("4y4", dims, 3), 0);
    UNIT_EQ(amp_auto_parse_topology("2x2x4", dims, 3), 3);
    UNIT_EQ(amp_auto_group_by_dims(16, 3, dims, first), 4); /* lines along the last dimension */
    UNIT_EQ(amp_auto_group_by_dims(12, 3, dims, first), 0); /* the grid must match */
    int d16[2] = {4, 4};
    UNIT_EQ(amp_auto_group_by_dims(16, 2, d16, first), 4);
}

int main(void)
{
    paper_grid();
    tile_above_k();
    volume_not_process_count();
    uneven_sizes_balance();
    extents_and_topology();
    return unit_report("test_auto");
}
