/* ampio-bench-io: access patterns of well-known MPI-IO benchmarks, each described twice: as the
 * MPI datatypes and calls an application would use, and as a plain list of the file byte ranges
 * every rank accesses (the model the data are verified against). */
#ifndef BENCH_IO_H
#define BENCH_IO_H

#include <mpi.h>
#include <stddef.h>

/* One collective call of a rank: view (displacement, filetype) and the bytes at `at` in it. */
typedef struct {
    MPI_Offset disp;
    MPI_Datatype ftype; /* MPI_BYTE: the default contiguous view */
    MPI_Offset at;      /* offset in the view, in bytes (the etype is always MPI_BYTE) */
    size_t buf_off;     /* where the call's data start in the rank's buffer */
    size_t bytes;       /* bytes of this rank in the call, possibly 0 */
} bench_call_t;

typedef struct {
    MPI_Offset off;
    MPI_Offset len;
} bench_run_t;

typedef struct {
    char params[256]; /* the pattern's parameters, for the report */
    int ncalls;
    bench_call_t *calls;
    size_t nruns, cap;
    bench_run_t *runs; /* file ranges of this rank, in buffer order */
    size_t bytes;      /* this rank's bytes */
    MPI_Offset file_size;
    int ntypes;
    MPI_Datatype types[8]; /* committed filetypes to free */
} bench_plan_t;

typedef struct {
    int tiles_x, tiles_y, tile_x, tile_y, elem;   /* tile (mpi-tile-io) */
    long ior_block, ior_transfer, ior_segments;   /* ior-seg (IOR -c, segmented blocks) */
    long strided_transfer, strided_segments;      /* ior-strided (IOR -c, block = transfer) */
    int coll_n;                                   /* collperf: local N^3 ints */
    char bt_class;                                /* btio: S, W, A, B */
    int bt_steps;                                 /* btio: collective writes (time steps) */
    long lat_seg, lat_segs, lat_steps;            /* latency: segment size, per step, steps */
    int flash_vars, flash_blocks, flash_block_sz; /* flash: variables, blocks/rank, bytes */
    long restart_block;                           /* restart: one block per rank, one call */
    int lat_local, lat_site;                      /* lattice: sites per rank and dimension, bytes */
    int lat_fast;                                 /* lattice: the grid splits the fastest dims */
} bench_params_t;

/* Builds `plan` for the calling rank; returns NULL on success or why the pattern cannot run. */
typedef const char *(*bench_pattern_fn)(const bench_params_t *p, MPI_Comm comm, bench_plan_t *plan);

typedef struct {
    const char *name;
    bench_pattern_fn build;
} bench_pattern_t;

extern const bench_pattern_t bench_patterns[];
extern const int bench_npatterns;

void bench_plan_add_run(bench_plan_t *plan, MPI_Offset off, MPI_Offset len);
bench_call_t *bench_plan_add_call(bench_plan_t *plan);
MPI_Datatype bench_plan_keep_type(bench_plan_t *plan, MPI_Datatype t);
void bench_plan_free(bench_plan_t *plan);

/* Zeroed memory, or the job aborted: a benchmark has no use for a partial run. */
void *bench_xalloc(size_t n);

/* The limit (bench_limit.c): the plan's bytes moved to the shared file by the best hand-written
 * code, worked out once (collective over comm) and then run as often as needed. The access
 * returns whether this rank's part succeeded; it is collective in every case. */
typedef struct bench_limit bench_limit_t;
bench_limit_t *bench_limit_new(const bench_plan_t *plan, MPI_Comm comm);
int bench_limit_access(bench_limit_t *l, const char *path, unsigned char *buf, int write,
                       double *open_s, double *close_s);
void bench_limit_free(bench_limit_t *l);

/* The file-per-process row (bench_fpp.c), worked out once (collective over comm). Writes time
 * this rank's own file from `buf`; reads time the file of a rank on the next node when
 * `other_node` is set (else its own) into a buffer of their own and check it against the
 * writer's bytes. Times are this rank's: whole access, open, close. Both are collective. */
typedef struct bench_fpp bench_fpp_t;
bench_fpp_t *bench_fpp_new(const char *path, const bench_plan_t *plan, int other_node,
                           MPI_Comm comm);
int bench_fpp_write(bench_fpp_t *f, const unsigned char *buf, double times[3]);
/* Reads this rank's own file into `back` and compares it with `buf` (untimed). */
int bench_fpp_verify_write(bench_fpp_t *f, const unsigned char *buf, unsigned char *back);
int bench_fpp_read(bench_fpp_t *f, double times[3]);
const char *bench_fpp_read_path(const bench_fpp_t *f); /* the file the reads take */
void bench_fpp_remove(const bench_fpp_t *f);
void bench_fpp_free(bench_fpp_t *f);

/* The byte every correct file holds at `off` for data generation `seed`. */
static inline unsigned char bench_byte(MPI_Offset off, unsigned seed)
{
    unsigned long long x = (unsigned long long)off * 0x9E3779B97F4A7C15ull;
    x ^= (unsigned long long)seed * 0xD1B54A32D192ED03ull;
    return (unsigned char)((x >> 56) ^ (x >> 29));
}

#endif
