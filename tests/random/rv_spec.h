/* Random derived datatypes described by a specification tree of their own. The tree is built
 * from a seed, turned into an MPI datatype by rv_build, and walked by rv_model to give the
 * typemap as byte pieces, bounds and size, without asking MPI anything: the model of the file
 * image is computed from these pieces alone. */
#ifndef RV_SPEC_H
#define RV_SPEC_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* splitmix64: the same seed gives the same sequence on every rank and under every MPI */
typedef struct {
    uint64_t s;
} rv_rng;

static inline uint64_t rv_next(rv_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline rv_rng rv_seeded(uint64_t seed, uint64_t stream)
{
    rv_rng r = {seed * 0xD1B54A32D192ED03ULL + stream * 0x8CB92BA72F3D8DD7ULL + 1};
    rv_next(&r);
    return r;
}

/* uniform in [lo, hi] */
static inline int rv_int(rv_rng *r, int lo, int hi)
{
    return lo + (int)(rv_next(r) % (uint64_t)(hi - lo + 1));
}

static inline int rv_chance(rv_rng *r, int percent)
{
    return rv_int(r, 0, 99) < percent;
}

enum rv_kind {
    RV_BASIC,
    RV_CONTIG,
    RV_VECTOR,
    RV_HVECTOR,
    RV_INDEXED,
    RV_HINDEXED,
    RV_INDEXED_BLOCK,
    RV_HINDEXED_BLOCK,
    RV_STRUCT,
    RV_SUBARRAY,
    RV_DARRAY,
    RV_RESIZED,
    RV_DUP,
    RV_NKINDS
};

enum { RV_BYTE, RV_CHAR, RV_SHORT, RV_INT, RV_FLOAT, RV_DOUBLE, RV_LONG_LONG, RV_NBASICS };

#define RV_MAXB 4 /* blocks of indexed and struct types */

typedef struct {
    long long off, len;
} rv_piece;

typedef struct rv_spec {
    enum rv_kind kind;
    int basic;                      /* RV_BASIC: one of RV_BYTE... */
    int count;                      /* copies, blocks, or dimensions */
    int blocklen;                   /* vector, hvector, *_block */
    long long stride;               /* vector: in child extents; hvector: bytes */
    int bl[RV_MAXB];                /* indexed, hindexed, struct */
    long long disp[RV_MAXB];        /* indexed: child extents; hindexed, struct: bytes */
    struct rv_spec *child[RV_MAXB]; /* struct: one per block; the others use child[0] */
    int sizes[3], subsizes[3], starts[3], order; /* subarray; darray: sizes are gsizes */
    int distrib[3], darg[3], psizes[3], nprocs, rank; /* darray */
    long long new_lb, new_extent;                     /* resized */

    /* the model, filled by rv_model */
    rv_piece *pieces; /* typemap order, adjacent pieces merged */
    int npieces;
    long long size, lb, ub, true_lb, true_ub;
    int sticky_lb, sticky_ub; /* bounds set explicitly (resized, subarray, darray) */
    int align;                /* largest alignment of the basic types inside */
} rv_spec;

typedef struct {
    int granule;          /* every byte quantity is a multiple of it: 1, 4 (ints), 8 (doubles) */
    int memory;           /* a memory type: blocks may come in any order */
    long long max_size;   /* bytes of data one type may hold */
    long long max_extent; /* and the span it may cover */
} rv_ctx;

/* A random type of nesting depth at most `depth` (0: a basic type). Its pieces never overlap
 * and lie inside [lb, ub) so that copies tile; for file types (ctx->memory == 0) they are also
 * in increasing order. */
rv_spec *rv_generate(rv_rng *rng, const rv_ctx *ctx, int depth);

/* This rank's part of an array shared by `nprocs` ranks: a subarray tile or a darray. Every rank
 * gets the same bounds from the same rng state; the parts of different ranks are disjoint. */
rv_spec *rv_partition(rv_rng *rng, const rv_ctx *ctx, int nprocs, int rank);

rv_spec *rv_basic_spec(int basic);
rv_spec *rv_resized(rv_spec *child, long long lb, long long extent);
rv_spec *rv_contiguous(rv_spec *child, int count);
/* hindexed: one copy of `child` at byte displacement `bytes` */
rv_spec *rv_shifted(rv_spec *child, long long bytes);

/* The MPI datatype (committed) of a specification. */
MPI_Datatype rv_build(const rv_spec *s);
MPI_Datatype rv_basic_type(int basic);
int rv_basic_size(int basic);

/* A one-line description, e.g. "hvec(2,1,24B,struct(1*int@0,2*short@8))". */
void rv_describe(const rv_spec *s, char *buf, size_t len);

void rv_free(rv_spec *s);

#endif
