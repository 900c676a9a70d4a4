/* The access patterns. Each builder sets up the datatypes the original benchmark uses and,
 * independently of them, the list of file ranges the rank accesses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_io.h"

void bench_plan_add_run(bench_plan_t *plan, MPI_Offset off, MPI_Offset len)
{
    if (len <= 0)
        return;
    plan->bytes += (size_t)len;
    if (plan->nruns > 0) {
        bench_run_t *last = &plan->runs[plan->nruns - 1];
        if (last->off + last->len == off) {
            last->len += len;
            return;
        }
    }
    if (plan->nruns == plan->cap) {
        plan->cap = plan->cap ? 2 * plan->cap : 256;
        plan->runs = realloc(plan->runs, plan->cap * sizeof(*plan->runs));
        if (!plan->runs)
            MPI_Abort(MPI_COMM_WORLD, 2);
    }
    plan->runs[plan->nruns].off = off;
    plan->runs[plan->nruns].len = len;
    plan->nruns++;
}

bench_call_t *bench_plan_add_call(bench_plan_t *plan)
{
    plan->calls = realloc(plan->calls, (size_t)(plan->ncalls + 1) * sizeof(*plan->calls));
    if (!plan->calls)
        MPI_Abort(MPI_COMM_WORLD, 2);
    bench_call_t *c = &plan->calls[plan->ncalls++];
    memset(c, 0, sizeof(*c));
    c->ftype = MPI_BYTE;
    c->buf_off = plan->bytes;
    return c;
}

MPI_Datatype bench_plan_keep_type(bench_plan_t *plan, MPI_Datatype t)
{
    MPI_Type_commit(&t);
    if (plan->ntypes < (int)(sizeof(plan->types) / sizeof(plan->types[0])))
        plan->types[plan->ntypes++] = t;
    return t;
}

void *bench_xalloc(size_t n)
{
    void *p = calloc(n ? n : 1, 1);
    if (!p) {
        fprintf(stderr, "ampio-bench-io: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

void bench_plan_free(bench_plan_t *plan)
{
    for (int i = 0; i < plan->ntypes; i++)
        MPI_Type_free(&plan->types[i]);
    free(plan->calls);
    free(plan->runs);
    memset(plan, 0, sizeof(*plan));
}

static int comm_size(MPI_Comm comm)
{
    int n;
    MPI_Comm_size(comm, &n);
    return n;
}

static int comm_rank(MPI_Comm comm)
{
    int r;
    MPI_Comm_rank(comm, &r);
    return r;
}

/* mpi-tile-io: a dense 2-D array of nr_tiles_y x nr_tiles_x tiles, one per process of a
 * Cartesian communicator, each tile sz_tile_y rows of sz_tile_x elements of sz_element bytes. */
static const char *tile(const bench_params_t *p, MPI_Comm comm, bench_plan_t *plan)
{
    int dims[2] = {p->tiles_y, p->tiles_x}, periods[2] = {0, 0}, coords[2];
    if (dims[0] * dims[1] != 0 && dims[0] * dims[1] != comm_size(comm))
        return "nr_tiles_x * nr_tiles_y differs from the number of processes";
    MPI_Dims_create(comm_size(comm), 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(comm, 2, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, comm_rank(cart), 2, coords);
    MPI_Comm_free(&cart);

    int sizes[2] = {dims[0] * p->tile_y, dims[1] * p->tile_x};
    int sub[2] = {p->tile_y, p->tile_x};
    int starts[2] = {coords[0] * p->tile_y, coords[1] * p->tile_x};
    MPI_Datatype elem, ft;
    MPI_Type_contiguous(p->elem, MPI_BYTE, &elem);
    MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, elem, &ft);
    MPI_Type_free(&elem);

    bench_call_t *c = bench_plan_add_call(plan);
    c->ftype = bench_plan_keep_type(plan, ft);
    for (int y = 0; y < p->tile_y; y++) {
        MPI_Offset row = (MPI_Offset)(starts[0] + y) * sizes[1] + starts[1];
        bench_plan_add_run(plan, row * p->elem, (MPI_Offset)p->tile_x * p->elem);
    }
    c->bytes = plan->bytes;
    plan->file_size = (MPI_Offset)sizes[0] * sizes[1] * p->elem;
    snprintf(plan->params, sizeof(plan->params),
             "nr_tiles_x=%d nr_tiles_y=%d sz_tile_x=%d sz_tile_y=%d sz_element=%d", dims[1],
             dims[0], p->tile_x, p->tile_y, p->elem);
    return NULL;
}

/* IOR with -c: segment s holds one block per rank in rank order; each block is moved in
 * transfer-size pieces, one collective call per piece. */
static const char *ior_common(long block, long transfer, long segments, MPI_Comm comm,
                              bench_plan_t *plan)
{
    if (transfer <= 0 || block % transfer != 0)
        return "the block size must be a multiple of the transfer size";
    int P = comm_size(comm), r = comm_rank(comm);
    for (long s = 0; s < segments; s++)
        for (long t = 0; t < block / transfer; t++) {
            bench_call_t *c = bench_plan_add_call(plan);
            c->at = ((MPI_Offset)s * P + r) * block + (MPI_Offset)t * transfer;
            c->bytes = (size_t)transfer;
            bench_plan_add_run(plan, c->at, transfer);
        }
    plan->file_size = (MPI_Offset)segments * P * block;
    snprintf(plan->params, sizeof(plan->params), "block=%ld transfer=%ld segments=%ld", block,
             transfer, segments);
    return NULL;
}

static const char *ior_seg(const bench_params_t *p, MPI_Comm comm, bench_plan_t *plan)
{
    return ior_common(p->ior_block, p->ior_transfer, p->ior_segments, comm, plan);
}

static const char *ior_strided(const bench_params_t *p, MPI_Comm comm, bench_plan_t *plan)
{
    return ior_common(p->strided_transfer, p->strided_transfer, p->strided_segments, comm, plan);
}

/* ROMIO coll_perf: a 3-D array of ints block-distributed (darray) over a 3-D process grid, each
 * process holding N^3 of it. */
static const char *collperf(const bench_params_t *p, MPI_Comm comm, bench_plan_t *plan)
{
    int P = comm_size(comm), r = comm_rank(comm), N = p->coll_n;
    int dims[3] = {0, 0, 0}, gsizes[3], distribs[3], dargs[3];
    MPI_Dims_create(P, 3, dims);
    for (int d = 0; d < 3; d++) {
        gsizes[d] = N * dims[d];
        distribs[d] = MPI_DISTRIBUTE_BLOCK;
        dargs[d] = MPI_DISTRIBUTE_DFLT_DARG;
    }
    MPI_Datatype ft;
    MPI_Type_create_darray(P, r, 3, gsizes, distribs, dargs, dims, MPI_ORDER_C, MPI_INT, &ft);
    bench_call_t *c = bench_plan_add_call(plan);
    c->ftype = bench_plan_keep_type(plan, ft);
    /* process grid in row-major order, as MPI_Type_create_darray defines it */
    int co[3] = {r / (dims[1] * dims[2]), (r / dims[2]) % dims[1], r % dims[2]};
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            MPI_Offset e =
                ((MPI_Offset)(co[0] * N + i) * gsizes[1] + co[1] * N + j) * gsizes[2] + co[2] * N;
            bench_plan_add_run(plan, e * (MPI_Offset)sizeof(int), (MPI_Offset)N * sizeof(int));
        }
    c->bytes = plan->bytes;
    plan->file_size = (MPI_Offset)gsizes[0] * gsizes[1] * gsizes[2] * sizeof(int);
    snprintf(plan->params, sizeof(plan->params), "n=%d grid=%dx%dx%d", N, dims[0], dims[1],
             dims[2]);
    return NULL;
}

/* NPB BT-IO, full mode: a problem_size^3 grid of 5 doubles per point, split into q x q x q cells
 * (q = sqrt(P)); each process owns q cells in a diagonal multi-partition (one in every z slab)
 * and writes them with a single collective call per time step through a struct of subarrays. */
static const char *btio(const bench_params_t *p, MPI_Comm comm, bench_plan_t *plan)
{
    int P = comm_size(comm), r = comm_rank(comm), N;
    static const char classes[] = "SWABC";
    static const int sizes_of_class[] = {12, 24, 64, 102, 162};
    const char *cls = strchr(classes, p->bt_class);
    if (!cls || !*cls)
        return "unknown class (S, W, A, B, C)";
    N = sizes_of_class[cls - classes];
    int q = (int)(sqrt((double)P) + 0.5);
    if (q * q != P)
        return "BT-IO needs a square number of processes";
    if (q > (int)(sizeof(plan->types) / sizeof(plan->types[0])) - 1)
        return "too many processes for BT-IO here";
    const int point = 5 * (int)sizeof(double);
    int lo[16], sz[16]; /* cells per dimension: first N % q of them one point larger */
    for (int k = 0, at = 0; k < q; k++) {
        sz[k] = N / q + (k < N % q);
        lo[k] = at;
        at += sz[k];
    }
    int row = r / q, col = r % q;
    MPI_Datatype elem, cell[16], combined;
    MPI_Type_contiguous(point, MPI_BYTE, &elem);
    int blens[16];
    MPI_Aint displs[16];
    for (int c = 0; c < q; c++) {
        /* diagonal multi-partition: for a fixed slab the q*q processes hold distinct cells */
        int cx = (row + c) % q, cy = (col + q - c) % q, cz = c;
        int sizes[3] = {N, N, N}, sub[3] = {sz[cx], sz[cy], sz[cz]};
        int starts[3] = {lo[cx], lo[cy], lo[cz]};
        MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_FORTRAN, elem, &cell[c]);
        blens[c] = 1;
        displs[c] = 0;
        for (int z = 0; z < sub[2]; z++)
            for (int y = 0; y < sub[1]; y++) {
                MPI_Offset e = ((MPI_Offset)(starts[2] + z) * N + starts[1] + y) * N + starts[0];
                bench_plan_add_run(plan, e * point, (MPI_Offset)sub[0] * point);
            }
    }
    MPI_Type_create_struct(q, blens, displs, cell, &combined);
    for (int c = 0; c < q; c++)
        MPI_Type_free(&cell[c]);
    MPI_Type_free(&elem);
    combined = bench_plan_keep_type(plan, combined);

    /* every time step is a new copy of the whole grid after the previous one */
    size_t per_step = plan->bytes, nruns = plan->nruns;
    bench_run_t *step0 = malloc(nruns * sizeof(*step0));
    if (!step0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    memcpy(step0, plan->runs, nruns * sizeof(*step0));
    MPI_Offset grid = (MPI_Offset)N * N * N * point;
    for (int s = 0; s < p->bt_steps; s++) {
        bench_call_t *c = bench_plan_add_call(plan);
        c->buf_off = (size_t)s * per_step;
        c->disp = s * grid;
        c->ftype = combined;
        c->bytes = per_step;
        if (s > 0)
            for (size_t i = 0; i < nruns; i++)
                bench_plan_add_run(plan, step0[i].off + s * grid, step0[i].len);
    }
    free(step0);
    plan->file_size = grid * p->bt_steps;
    snprintf(plan->params, sizeof(plan->params), "class=%c grid=%d^3 ncells=%d steps=%d",
             p->bt_class, N, q, p->bt_steps);
    return NULL;
}

/* Step after step, each process accesses `segs` segments of `seg` bytes in the next portion of
 * the file, the segments of all processes interleaved in rank order; one collective per step. */
static const char *latency(const bench_params_t *p, MPI_Comm comm, bench_plan_t *plan)
{
    int P = comm_size(comm), r = comm_rank(comm);
    MPI_Datatype vec, ft;
    MPI_Type_vector((int)p->lat_segs, (int)p->lat_seg, (int)(P * p->lat_seg), MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)(P * p->lat_segs * p->lat_seg), &ft);
    MPI_Type_free(&vec);
    ft = bench_plan_keep_type(plan, ft);
    MPI_Offset portion = (MPI_Offset)P * p->lat_segs * p->lat_seg;
    for (long t = 0; t < p->lat_steps; t++) {
        bench_call_t *c = bench_plan_add_call(plan);
        c->disp = (MPI_Offset)r * p->lat_seg;
        c->ftype = ft;
        c->at = (MPI_Offset)t * p->lat_segs * p->lat_seg;
        for (long j = 0; j < p->lat_segs; j++)
            bench_plan_add_run(plan, t * portion + (j * P + r) * p->lat_seg, p->lat_seg);
        c->bytes = plan->bytes - c->buf_off;
    }
    plan->file_size = portion * p->lat_steps;
    snprintf(plan->params, sizeof(plan->params), "segment=%ld segments_per_step=%ld steps=%ld",
             p->lat_seg, p->lat_segs, p->lat_steps);
    return NULL;
}

/* FLASH-IO checkpoint: every variable is a contiguous region of the file holding the blocks of
 * all processes in rank order; ranks own slightly different numbers of blocks. One collective
 * call per variable. */
static const char *flash(const bench_params_t *p, MPI_Comm comm, bench_plan_t *plan)
{
    int P = comm_size(comm), r = comm_rank(comm);
    MPI_Offset before = 0, total = 0;
    for (int q = 0; q < P; q++) {
        int nb = p->flash_blocks + q % 3 - 1;
        nb = nb > 0 ? nb : 1;
        if (q < r)
            before += nb;
        total += nb;
    }
    int mine = p->flash_blocks + r % 3 - 1;
    mine = mine > 0 ? mine : 1;
    MPI_Offset bs = p->flash_block_sz;
    for (int v = 0; v < p->flash_vars; v++) {
        bench_call_t *c = bench_plan_add_call(plan);
        c->at = (v * total + before) * bs;
        c->bytes = (size_t)(mine * bs);
        bench_plan_add_run(plan, c->at, mine * bs);
    }
    plan->file_size = p->flash_vars * total * bs;
    snprintf(plan->params, sizeof(plan->params), "vars=%d blocks=%d+-1 block_size=%d",
             p->flash_vars, p->flash_blocks, p->flash_block_sz);
    return NULL;
}

/* A restart file: each rank writes one large contiguous block in one collective call (the
 * checkpoint case of the Lustre collective driver's report). */
static const char *restart(const bench_params_t *p, MPI_Comm comm, bench_plan_t *plan)
{
    return ior_common(p->restart_block, p->restart_block, 1, comm, plan);
}

/* A lattice QCD checkpoint: a 4-D global lattice (t, z, y, x; x fastest in the file), block-
 * decomposed over a 4-D process grid with x fastest in rank order, each rank holding lat_local^4
 * sites of lat_site bytes (an SU(3) gauge field: 4 x 3 x 3 complex doubles, 576 bytes), written
 * in one collective call through a subarray view. The balanced grid's larger factors go on the
 * slowest dimensions (whole x lines per rank), or with lat_fast on the fastest (many small
 * pieces per rank). */
static const char *lattice(const bench_params_t *p, MPI_Comm comm, bench_plan_t *plan)
{
    int P = comm_size(comm), r = comm_rank(comm), L = p->lat_local;
    int dims[4] = {0, 0, 0, 0}, grid[4], sizes[4], sub[4], starts[4], co[4];
    MPI_Dims_create(P, 4, dims); /* non-increasing */
    for (int d = 0; d < 4; d++)
        grid[d] = p->lat_fast ? dims[3 - d] : dims[d];
    for (int d = 3, q = r; d >= 0; d--) { /* rank order: x fastest, as the file */
        co[d] = q % grid[d];
        q /= grid[d];
    }
    for (int d = 0; d < 4; d++) {
        sizes[d] = grid[d] * L;
        sub[d] = L;
        starts[d] = co[d] * L;
    }
    MPI_Datatype site, ft;
    MPI_Type_contiguous(p->lat_site, MPI_BYTE, &site);
    MPI_Type_create_subarray(4, sizes, sub, starts, MPI_ORDER_C, site, &ft);
    MPI_Type_free(&site);
    bench_call_t *c = bench_plan_add_call(plan);
    c->ftype = bench_plan_keep_type(plan, ft);
    for (int t = 0; t < L; t++)
        for (int z = 0; z < L; z++)
            for (int y = 0; y < L; y++) {
                MPI_Offset s =
                    (((MPI_Offset)(starts[0] + t) * sizes[1] + starts[1] + z) * sizes[2] +
                     starts[2] + y) *
                        sizes[3] +
                    starts[3];
                bench_plan_add_run(plan, s * p->lat_site, (MPI_Offset)L * p->lat_site);
            }
    c->bytes = plan->bytes;
    plan->file_size = (MPI_Offset)sizes[0] * sizes[1] * sizes[2] * sizes[3] * p->lat_site;
    snprintf(plan->params, sizeof(plan->params), "local=%d^4 site=%d grid=%dx%dx%dx%d (t,z,y,x)", L,
             p->lat_site, grid[0], grid[1], grid[2], grid[3]);
    return NULL;
}

const bench_pattern_t bench_patterns[] = {
    {"tile", tile},         {"ior-seg", ior_seg}, {"ior-strided", ior_strided},
    {"collperf", collperf}, {"btio", btio},       {"latency", latency},
    {"flash", flash},       {"restart", restart}, {"lattice", lattice},
};
const int bench_npatterns = (int)(sizeof(bench_patterns) / sizeof(bench_patterns[0]));
