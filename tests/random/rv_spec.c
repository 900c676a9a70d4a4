#include "rv_spec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DIST_NONE, DIST_BLOCK, DIST_CYCLIC };

static const struct {
    int size, align;
    const char *name;
} basics[RV_NBASICS] = {{1, 1, "byte"},  {1, 1, "char"},   {2, 2, "short"}, {4, 4, "int"},
                        {4, 4, "float"}, {8, 8, "double"}, {8, 8, "llong"}};

MPI_Datatype rv_basic_type(int basic)
{
    switch (basic) {
    case RV_CHAR:
        return MPI_CHAR;
    case RV_SHORT:
        return MPI_SHORT;
    case RV_INT:
        return MPI_INT;
    case RV_FLOAT:
        return MPI_FLOAT;
    case RV_DOUBLE:
        return MPI_DOUBLE;
    case RV_LONG_LONG:
        return MPI_LONG_LONG;
    default:
        return MPI_BYTE;
    }
}

int rv_basic_size(int basic)
{
    return basics[basic].size;
}

static rv_spec *new_spec(enum rv_kind kind)
{
    rv_spec *s = calloc(1, sizeof(*s));
    s->kind = kind;
    return s;
}

static long long extent_of(const rv_spec *s)
{
    return s->ub - s->lb;
}

static int nchildren(const rv_spec *s)
{
    if (s->kind == RV_BASIC)
        return 0;
    return s->kind == RV_STRUCT ? s->count : 1;
}

void rv_free(rv_spec *s)
{
    if (!s)
        return;
    for (int b = 0; b < nchildren(s); b++)
        rv_free(s->child[b]);
    free(s->pieces);
    free(s);
}

/* ---- the model: typemap pieces and bounds, by the rules of the MPI standard ---- */

typedef struct {
    long long lb, ub, sticky_lb, sticky_ub;
    int any, has_sticky_lb, has_sticky_ub;
} bounds_acc;

static void add_piece(rv_spec *s, long long off, long long len)
{
    int n = s->npieces;
    if (n && s->pieces[n - 1].off + s->pieces[n - 1].len == off) {
        s->pieces[n - 1].len += len;
        return;
    }
    if ((n & (n - 1)) == 0) /* capacity doubles at every power of two */
        s->pieces = realloc(s->pieces, (size_t)(n < 2 ? 4 : 2 * n) * sizeof(rv_piece));
    s->pieces[n].off = off;
    s->pieces[n].len = len;
    s->npieces = n + 1;
}

/* One copy of child `c` at byte displacement `d`. Bounds set explicitly in a child (lb/ub
 * markers) take precedence over the bounds of the data, as in MPI. */
static void place(rv_spec *s, bounds_acc *b, const rv_spec *c, long long d)
{
    for (int i = 0; i < c->npieces; i++)
        add_piece(s, d + c->pieces[i].off, c->pieces[i].len);
    if (c->align > s->align)
        s->align = c->align;
    long long lo = d + c->lb, hi = d + c->ub;
    if (!b->any || lo < b->lb)
        b->lb = lo;
    if (!b->any || hi > b->ub)
        b->ub = hi;
    b->any = 1;
    if (c->sticky_lb && (!b->has_sticky_lb || lo < b->sticky_lb)) {
        b->sticky_lb = lo;
        b->has_sticky_lb = 1;
    }
    if (c->sticky_ub && (!b->has_sticky_ub || hi > b->sticky_ub)) {
        b->sticky_ub = hi;
        b->has_sticky_ub = 1;
    }
}

static void set_bounds(rv_spec *s, const bounds_acc *b)
{
    s->sticky_lb = b->has_sticky_lb;
    s->sticky_ub = b->has_sticky_ub;
    s->lb = b->has_sticky_lb ? b->sticky_lb : b->lb;
    s->ub = b->has_sticky_ub ? b->sticky_ub : b->ub;
}

static void set_explicit_bounds(rv_spec *s, long long lb, long long ub)
{
    s->lb = lb;
    s->ub = ub;
    s->sticky_lb = s->sticky_ub = 1;
}

/* Indices of dimension d owned by process coordinate `coord` of a darray. */
static int darray_owned(const rv_spec *s, int d, int coord, int *out)
{
    int g = s->sizes[d], p = s->psizes[d], n = 0;
    if (s->distrib[d] == DIST_NONE) {
        for (int i = 0; i < g; i++)
            out[n++] = i;
    } else if (s->distrib[d] == DIST_BLOCK) {
        int k = s->darg[d] > 0 ? s->darg[d] : (g + p - 1) / p;
        for (int i = coord * k; i < (coord + 1) * k && i < g; i++)
            out[n++] = i;
    } else {
        int k = s->darg[d] > 0 ? s->darg[d] : 1;
        for (int i = 0; i < g; i++)
            if ((i / k) % p == coord)
                out[n++] = i;
    }
    return n;
}

static void darray_coords(const rv_spec *s, int *coord)
{
    int r = s->rank; /* process grids are row-major whatever the array order */
    for (int d = s->count - 1; d >= 0; d--) {
        coord[d] = r % s->psizes[d];
        r /= s->psizes[d];
    }
}

/* Copies of the element type at the listed indices of an array, in array order. */
static void walk_array(rv_spec *s, bounds_acc *b, int nd, const int *gsizes, int *const lists[3],
                       const int *lens)
{
    const rv_spec *c = s->child[0];
    long long ext = extent_of(c);
    int pos[3] = {0, 0, 0};
    for (int d = 0; d < nd; d++)
        if (lens[d] == 0)
            return;
    for (;;) {
        long long lin = 0;
        if (s->order == 0)
            for (int d = 0; d < nd; d++)
                lin = lin * gsizes[d] + lists[d][pos[d]];
        else
            for (int d = nd - 1; d >= 0; d--)
                lin = lin * gsizes[d] + lists[d][pos[d]];
        place(s, b, c, lin * ext);
        int d = s->order == 0 ? nd - 1 : 0, step = s->order == 0 ? -1 : 1;
        while (++pos[d] == lens[d]) {
            pos[d] = 0;
            d += step;
            if (d < 0 || d >= nd)
                return;
        }
    }
}

static void array_model(rv_spec *s, bounds_acc *b)
{
    int nd = s->count, lens[3] = {0, 0, 0}, *lists[3] = {NULL, NULL, NULL}, coord[3];
    if (s->kind == RV_DARRAY)
        darray_coords(s, coord);
    long long total = 1;
    for (int d = 0; d < nd; d++) {
        total *= s->sizes[d];
        lists[d] = malloc((size_t)s->sizes[d] * sizeof(int));
        if (s->kind == RV_DARRAY) {
            lens[d] = darray_owned(s, d, coord[d], lists[d]);
        } else {
            lens[d] = s->subsizes[d];
            for (int i = 0; i < lens[d]; i++)
                lists[d][i] = s->starts[d] + i;
        }
    }
    walk_array(s, b, nd, s->sizes, lists, lens);
    for (int d = 0; d < nd; d++)
        free(lists[d]);
    set_explicit_bounds(s, 0, total * extent_of(s->child[0]));
}

static void model(rv_spec *s)
{
    bounds_acc b = {0};
    const rv_spec *c = s->child[0];
    long long ext = c ? extent_of(c) : 0;
    switch (s->kind) {
    case RV_BASIC:
        add_piece(s, 0, basics[s->basic].size);
        s->align = basics[s->basic].align;
        s->lb = 0;
        s->ub = basics[s->basic].size;
        break;
    case RV_CONTIG:
        for (int i = 0; i < s->count; i++)
            place(s, &b, c, i * ext);
        set_bounds(s, &b);
        break;
    case RV_VECTOR:
    case RV_HVECTOR:
        for (int i = 0; i < s->count; i++)
            for (int j = 0; j < s->blocklen; j++)
                place(s, &b, c,
                      s->kind == RV_VECTOR ? (i * s->stride + j) * ext : i * s->stride + j * ext);
        set_bounds(s, &b);
        break;
    case RV_INDEXED:
    case RV_INDEXED_BLOCK:
    case RV_HINDEXED:
    case RV_HINDEXED_BLOCK: {
        int in_extents = s->kind == RV_INDEXED || s->kind == RV_INDEXED_BLOCK;
        for (int i = 0; i < s->count; i++)
            for (int j = 0; j < s->bl[i]; j++)
                place(s, &b, c, in_extents ? (s->disp[i] + j) * ext : s->disp[i] + j * ext);
        set_bounds(s, &b);
        break;
    }
    case RV_STRUCT:
        for (int i = 0; i < s->count; i++)
            for (int j = 0; j < s->bl[i]; j++)
                place(s, &b, s->child[i], s->disp[i] + j * extent_of(s->child[i]));
        set_bounds(s, &b);
        break;
    case RV_SUBARRAY:
    case RV_DARRAY:
        array_model(s, &b);
        break;
    case RV_RESIZED:
        place(s, &b, c, 0);
        set_explicit_bounds(s, s->new_lb, s->new_lb + s->new_extent);
        break;
    case RV_DUP:
        place(s, &b, c, 0);
        set_bounds(s, &b);
        break;
    default:
        break;
    }
    s->size = 0;
    for (int i = 0; i < s->npieces; i++) {
        const rv_piece *p = &s->pieces[i];
        s->size += p->len;
        if (i == 0 || p->off < s->true_lb)
            s->true_lb = p->off;
        if (i == 0 || p->off + p->len > s->true_ub)
            s->true_ub = p->off + p->len;
    }
}

rv_spec *rv_basic_spec(int basic)
{
    rv_spec *s = new_spec(RV_BASIC);
    s->basic = basic;
    model(s);
    return s;
}

rv_spec *rv_resized(rv_spec *child, long long lb, long long extent)
{
    rv_spec *s = new_spec(RV_RESIZED);
    s->child[0] = child;
    s->new_lb = lb;
    s->new_extent = extent;
    model(s);
    return s;
}

rv_spec *rv_shifted(rv_spec *child, long long bytes)
{
    rv_spec *s = new_spec(RV_HINDEXED);
    s->child[0] = child;
    s->count = 1;
    s->bl[0] = 1;
    s->disp[0] = bytes;
    model(s);
    return s;
}

rv_spec *rv_contiguous(rv_spec *child, int count)
{
    rv_spec *s = new_spec(RV_CONTIG);
    s->child[0] = child;
    s->count = count;
    model(s);
    return s;
}

/* ---- generation ---- */

static int pick_basic(rv_rng *r, const rv_ctx *c)
{
    if (c->granule == 4)
        return RV_INT;
    if (c->granule == 8)
        return RV_DOUBLE;
    return rv_int(r, 0, RV_NBASICS - 1);
}

/* a gap of up to `most` granules, often none */
static long long gap(rv_rng *r, const rv_ctx *c, int most)
{
    return rv_chance(r, 40) ? 0 : (long long)rv_int(r, 1, most) * c->granule;
}

static void shuffle_blocks(rv_rng *r, rv_spec *s)
{
    for (int i = s->count - 1; i > 0; i--) {
        int j = rv_int(r, 0, i);
        int bl = s->bl[i];
        long long d = s->disp[i];
        s->bl[i] = s->bl[j];
        s->disp[i] = s->disp[j];
        s->bl[j] = bl;
        s->disp[j] = d;
        if (s->kind == RV_STRUCT) {
            rv_spec *t = s->child[i];
            s->child[i] = s->child[j];
            s->child[j] = t;
        }
    }
}

static void gen_indexed(rv_rng *r, const rv_ctx *c, rv_spec *s, long long ext)
{
    int in_extents = s->kind == RV_INDEXED || s->kind == RV_INDEXED_BLOCK;
    int same = s->kind == RV_INDEXED_BLOCK || s->kind == RV_HINDEXED_BLOCK;
    int blocklen = rv_int(r, 1, 3);
    long long at = in_extents ? rv_int(r, 0, 2) : gap(r, c, 4);
    s->count = rv_int(r, 1, RV_MAXB);
    for (int i = 0; i < s->count; i++) {
        s->bl[i] = same ? blocklen : rv_int(r, 1, 3);
        s->disp[i] = at;
        at += in_extents ? s->bl[i] + rv_int(r, 0, 2) : s->bl[i] * ext + gap(r, c, 4);
    }
    s->blocklen = blocklen;
}

static void gen_struct(rv_rng *r, const rv_ctx *c, rv_spec *s, int depth)
{
    long long at = gap(r, c, 4); /* where the previous block ends */
    s->count = rv_int(r, 2, 3);
    for (int i = 0; i < s->count; i++) {
        rv_spec *ch = s->child[i] = rv_generate(r, c, depth - 1);
        s->bl[i] = rv_int(r, 1, 2);
        long long d = at - ch->true_lb;
        s->disp[i] = (d > 0 ? d : 0) + gap(r, c, 3);
        at = s->disp[i] + (s->bl[i] - 1) * extent_of(ch) + ch->true_ub;
    }
}

static void gen_subarray(rv_rng *r, rv_spec *s)
{
    s->count = rv_int(r, 1, 3);
    s->order = rv_int(r, 0, 1);
    for (int d = 0; d < s->count; d++) {
        s->sizes[d] = rv_int(r, 1, 4);
        s->subsizes[d] = rv_int(r, 1, s->sizes[d]);
        s->starts[d] = rv_int(r, 0, s->sizes[d] - s->subsizes[d]);
    }
}

/* gsize, distribution and argument of one darray dimension in which all p coordinates own
 * something */
static void gen_darray_dim(rv_rng *r, rv_spec *s, int d, int p)
{
    s->psizes[d] = p;
    int how = rv_int(r, 0, 4);
    if (p == 1 && how == 0) {
        s->distrib[d] = DIST_NONE;
        s->darg[d] = 0;
        s->sizes[d] = rv_int(r, 1, 4);
    } else if (how <= 2) { /* block, default or explicit size */
        int k = rv_int(r, 1, 3);
        s->distrib[d] = DIST_BLOCK;
        s->darg[d] = rv_chance(r, 50) ? k : 0;
        s->sizes[d] = p * k - rv_int(r, 0, k - 1);
    } else { /* cyclic(k) */
        int k = rv_int(r, 1, 3);
        s->distrib[d] = DIST_CYCLIC;
        s->darg[d] = k == 1 && rv_chance(r, 50) ? 0 : k;
        s->sizes[d] = rv_int(r, (p - 1) * k + 1, 2 * p * k);
    }
}

static void gen_darray(rv_rng *r, rv_spec *s)
{
    s->count = rv_int(r, 1, 2);
    s->order = rv_int(r, 0, 1);
    s->nprocs = 1;
    for (int d = 0; d < s->count; d++) {
        gen_darray_dim(r, s, d, rv_int(r, 1, 3));
        s->nprocs *= s->psizes[d];
    }
    s->rank = rv_int(r, 0, s->nprocs - 1);
}

/* Makes the bounds cover the data, so that copies of the type never overlap. A type whose
 * extent is not a multiple of its alignment gets explicit bounds as well: MPI pads such
 * extents, and implementations differ in which constructors they pad and when (Open MPI pads
 * every constructor, even with explicit bounds inside, and block by block, so that blocks out of
 * order leave padding in the middle; MPICH pads structs only). */
static rv_spec *settle(rv_spec *s, int shuffled)
{
    model(s);
    int inside = s->true_lb >= s->lb && s->true_ub <= s->ub;
    if (s->kind == RV_RESIZED || (inside && extent_of(s) % s->align == 0 && !shuffled))
        return s;
    long long lb = s->lb < s->true_lb ? s->lb : s->true_lb;
    long long ub = s->ub > s->true_ub ? s->ub : s->true_ub;
    return rv_resized(s, lb, ub - lb);
}

static rv_spec *gen_node(rv_rng *r, const rv_ctx *c, int depth)
{
    if (depth <= 0 || rv_chance(r, 12))
        return rv_basic_spec(pick_basic(r, c));
    rv_spec *s = new_spec((enum rv_kind)rv_int(r, RV_CONTIG, RV_DUP));
    int shuffled = c->memory && rv_chance(r, 50);
    if (s->kind == RV_STRUCT) {
        gen_struct(r, c, s, depth);
        if (shuffled)
            shuffle_blocks(r, s);
        return settle(s, shuffled);
    }
    rv_spec *ch = s->child[0] = rv_generate(r, c, depth - 1);
    long long ext = extent_of(ch);
    switch (s->kind) {
    case RV_CONTIG:
        s->count = rv_int(r, 1, 4);
        break;
    case RV_VECTOR:
    case RV_HVECTOR:
        s->count = rv_int(r, 1, 4);
        s->blocklen = rv_int(r, 1, 3);
        s->stride = s->kind == RV_VECTOR ? s->blocklen + rv_int(r, 0, 3)
                                         : s->blocklen * ext + gap(r, c, 6);
        break;
    case RV_INDEXED:
    case RV_HINDEXED:
    case RV_INDEXED_BLOCK:
    case RV_HINDEXED_BLOCK:
        gen_indexed(r, c, s, ext);
        if (shuffled)
            shuffle_blocks(r, s);
        break;
    case RV_SUBARRAY:
        gen_subarray(r, s);
        break;
    case RV_DARRAY:
        gen_darray(r, s);
        break;
    case RV_RESIZED: {
        long long most_below = ch->lb / c->granule;
        s->new_lb = ch->lb - rv_int(r, 0, most_below < 3 ? (int)most_below : 3) * c->granule;
        s->new_extent = ch->ub - s->new_lb + rv_int(r, 0, 4) * c->granule;
        break;
    }
    default: /* dup */
        break;
    }
    return settle(s, shuffled && s->kind >= RV_INDEXED && s->kind <= RV_HINDEXED_BLOCK);
}

rv_spec *rv_generate(rv_rng *rng, const rv_ctx *ctx, int depth)
{
    for (int attempt = 0; attempt < 4; attempt++) {
        rv_spec *s = gen_node(rng, ctx, depth);
        if (s->size <= ctx->max_size && s->ub <= ctx->max_extent)
            return s;
        rv_free(s);
    }
    return rv_basic_spec(pick_basic(rng, ctx));
}

/* Splits p into nd factors at random. */
static void split_procs(rv_rng *r, int p, int nd, int *out)
{
    for (int d = 0; d < nd - 1; d++) {
        int divs[32], n = 0;
        for (int k = 1; k <= p && n < 32; k++)
            if (p % k == 0)
                divs[n++] = k;
        out[d] = divs[rv_int(r, 0, n - 1)];
        p /= out[d];
    }
    out[nd - 1] = p;
}

rv_spec *rv_partition(rv_rng *rng, const rv_ctx *ctx, int nprocs, int rank)
{
    rv_ctx ec = *ctx;
    ec.max_size = 64;
    ec.max_extent = 128;
    rv_spec *elem = rv_generate(rng, &ec, rv_int(rng, 0, 2));
    if (elem->lb != 0) /* every element inside its own extent, so the ranks' parts stay apart */
        elem = rv_resized(elem, 0, elem->ub);
    int nd = rv_int(rng, 1, 3), psizes[3];
    split_procs(rng, nprocs, nd, psizes);
    rv_spec *s = new_spec(rv_chance(rng, 50) ? RV_SUBARRAY : RV_DARRAY);
    s->child[0] = elem;
    s->count = nd;
    s->order = rv_int(rng, 0, 1);
    if (s->kind == RV_DARRAY) {
        s->nprocs = nprocs;
        s->rank = rank;
        for (int d = 0; d < nd; d++)
            gen_darray_dim(rng, s, d, psizes[d]);
    } else { /* tiles of random sizes along each dimension of the process grid */
        int coord[3], r = rank;
        for (int d = nd - 1; d >= 0; d--) {
            coord[d] = r % psizes[d];
            r /= psizes[d];
        }
        for (int d = 0; d < nd; d++) {
            s->sizes[d] = 0;
            for (int k = 0; k < psizes[d]; k++) {
                int tile = rv_int(rng, 1, 3);
                if (k == coord[d]) {
                    s->starts[d] = s->sizes[d];
                    s->subsizes[d] = tile;
                }
                s->sizes[d] += tile;
            }
        }
    }
    model(s);
    return s;
}

/* ---- MPI datatypes ---- */

static MPI_Datatype build(const rv_spec *s);

static void release(const rv_spec *s, MPI_Datatype *t)
{
    if (s->kind != RV_BASIC)
        MPI_Type_free(t);
}

static MPI_Datatype build_array(const rv_spec *s, MPI_Datatype old)
{
    MPI_Datatype t;
    int order = s->order == 0 ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    if (s->kind == RV_SUBARRAY) {
        MPI_Type_create_subarray(s->count, s->sizes, s->subsizes, s->starts, order, old, &t);
        return t;
    }
    int distrib[3], darg[3];
    for (int d = 0; d < s->count; d++) {
        distrib[d] = s->distrib[d] == DIST_NONE    ? MPI_DISTRIBUTE_NONE
                     : s->distrib[d] == DIST_BLOCK ? MPI_DISTRIBUTE_BLOCK
                                                   : MPI_DISTRIBUTE_CYCLIC;
        darg[d] = s->darg[d] > 0 ? s->darg[d] : MPI_DISTRIBUTE_DFLT_DARG;
    }
    MPI_Type_create_darray(s->nprocs, s->rank, s->count, s->sizes, distrib, darg, s->psizes, order,
                           old, &t);
    return t;
}

static MPI_Datatype build(const rv_spec *s)
{
    if (s->kind == RV_BASIC)
        return rv_basic_type(s->basic);
    MPI_Datatype t = MPI_DATATYPE_NULL, kids[RV_MAXB] = {MPI_DATATYPE_NULL};
    int n = nchildren(s), idisp[RV_MAXB];
    MPI_Aint adisp[RV_MAXB];
    for (int i = 0; i < n; i++)
        kids[i] = build(s->child[i]);
    for (int i = 0; i < RV_MAXB; i++) {
        idisp[i] = (int)s->disp[i];
        adisp[i] = (MPI_Aint)s->disp[i];
    }
    switch (s->kind) {
    case RV_CONTIG:
        MPI_Type_contiguous(s->count, kids[0], &t);
        break;
    case RV_VECTOR:
        MPI_Type_vector(s->count, s->blocklen, (int)s->stride, kids[0], &t);
        break;
    case RV_HVECTOR:
        MPI_Type_create_hvector(s->count, s->blocklen, (MPI_Aint)s->stride, kids[0], &t);
        break;
    case RV_INDEXED:
        MPI_Type_indexed(s->count, s->bl, idisp, kids[0], &t);
        break;
    case RV_HINDEXED:
        MPI_Type_create_hindexed(s->count, s->bl, adisp, kids[0], &t);
        break;
    case RV_INDEXED_BLOCK:
        MPI_Type_create_indexed_block(s->count, s->blocklen, idisp, kids[0], &t);
        break;
    case RV_HINDEXED_BLOCK:
        MPI_Type_create_hindexed_block(s->count, s->blocklen, adisp, kids[0], &t);
        break;
    case RV_STRUCT:
        MPI_Type_create_struct(s->count, s->bl, adisp, kids, &t);
        break;
    case RV_SUBARRAY:
    case RV_DARRAY:
        t = build_array(s, kids[0]);
        break;
    case RV_RESIZED:
        MPI_Type_create_resized(kids[0], (MPI_Aint)s->new_lb, (MPI_Aint)s->new_extent, &t);
        break;
    case RV_DUP:
        MPI_Type_dup(kids[0], &t);
        break;
    default:
        break;
    }
    for (int i = 0; i < n; i++)
        release(s->child[i], &kids[i]);
    return t;
}

MPI_Datatype rv_build(const rv_spec *s)
{
    MPI_Datatype t = build(s);
    if (s->kind != RV_BASIC)
        MPI_Type_commit(&t);
    return t;
}

/* ---- descriptions ---- */

typedef struct {
    char *buf;
    size_t len, at;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(text *t, const char *fmt, ...)
{
    if (t->at >= t->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->at, t->len - t->at, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->at += (size_t)n;
}

static void describe(const rv_spec *s, text *t)
{
    static const char *dist[] = {"N", "B", "C"};
    switch (s->kind) {
    case RV_BASIC:
        put(t, "%s", basics[s->basic].name);
        return;
    case RV_CONTIG:
        put(t, "contig(%d,", s->count);
        break;
    case RV_VECTOR:
        put(t, "vec(%d,%d,%lld,", s->count, s->blocklen, s->stride);
        break;
    case RV_HVECTOR:
        put(t, "hvec(%d,%d,%lldB,", s->count, s->blocklen, s->stride);
        break;
    case RV_INDEXED:
    case RV_HINDEXED:
    case RV_INDEXED_BLOCK:
    case RV_HINDEXED_BLOCK: {
        static const char *names[] = {"idx", "hidx", "idxblk", "hidxblk"};
        put(t, "%s(", names[s->kind - RV_INDEXED]);
        for (int i = 0; i < s->count; i++)
            put(t, "%s%d@%lld%s", i ? " " : "", s->bl[i], s->disp[i],
                s->kind == RV_HINDEXED || s->kind == RV_HINDEXED_BLOCK ? "B" : "");
        put(t, ",");
        break;
    }
    case RV_STRUCT:
        put(t, "struct(");
        for (int i = 0; i < s->count; i++) {
            put(t, "%s%d*", i ? " " : "", s->bl[i]);
            describe(s->child[i], t);
            put(t, "@%lld", s->disp[i]);
        }
        put(t, ")");
        return;
    case RV_SUBARRAY:
        put(t, "sub(%c,", s->order ? 'F' : 'C');
        for (int d = 0; d < s->count; d++)
            put(t, "%s%d/%d+%d", d ? "x" : "", s->sizes[d], s->subsizes[d], s->starts[d]);
        put(t, ",");
        break;
    case RV_DARRAY:
        put(t, "darray(%c,r%d/%d,", s->order ? 'F' : 'C', s->rank, s->nprocs);
        for (int d = 0; d < s->count; d++)
            put(t, "%s%d:%s%d/p%d", d ? "x" : "", s->sizes[d], dist[s->distrib[d]], s->darg[d],
                s->psizes[d]);
        put(t, ",");
        break;
    case RV_RESIZED:
        put(t, "resized(%lld,%lld,", s->new_lb, s->new_extent);
        break;
    case RV_DUP:
        put(t, "dup(");
        break;
    default:
        break;
    }
    describe(s->child[0], t);
    put(t, ")");
}

void rv_describe(const rv_spec *s, char *buf, size_t len)
{
    text t = {buf, len, 0};
    buf[0] = '\0';
    describe(s, &t);
}
