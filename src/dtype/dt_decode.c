/* Decoding of a datatype into its typemap: the combiner and arguments from
 * MPI_Type_get_envelope/get_contents, then the children's lists replicated at the displacements
 * the constructor defines. Children come from the cache, so shared subtypes are decoded once. */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/fault.h"
#include "dtype/dt_internal.h"

/* The constructor arguments, with every count-like value widened to MPI_Count. Types created
 * with the MPI-4 large-count constructors keep those values in array_of_large_counts. */
typedef struct {
    int combiner;
    int ni, na, nc, nd;
    int *ints;
    MPI_Aint *addrs;
    MPI_Count *counts;
    MPI_Datatype *types;
} amp_contents_t;

static void amp_contents_free(amp_contents_t *c)
{
    for (int i = 0; i < c->nd; i++) {
        int ni, na, nd, combiner;
        if (c->types[i] == MPI_DATATYPE_NULL)
            continue;
        PMPI_Type_get_envelope(c->types[i], &ni, &na, &nd, &combiner);
        if (combiner != MPI_COMBINER_NAMED)
            PMPI_Type_free(&c->types[i]);
    }
    free(c->ints);
    free(c->addrs);
    free(c->counts);
    free(c->types);
}

static int amp_contents_get(MPI_Datatype type, amp_contents_t *c)
{
    memset(c, 0, sizeof(*c));
    int rc;
#if MPI_VERSION >= 4
    MPI_Count ni, na, nc, nd;
    rc = PMPI_Type_get_envelope_c(type, &ni, &na, &nc, &nd, &c->combiner);
    c->ni = (int)ni, c->na = (int)na, c->nc = (int)nc, c->nd = (int)nd;
#else
    rc = PMPI_Type_get_envelope(type, &c->ni, &c->na, &c->nd, &c->combiner);
#endif
    if (rc != MPI_SUCCESS)
        return amp_err(MPI_ERR_TYPE, "cannot decode datatype (MPI_Type_get_envelope failed)");
    if (c->combiner == MPI_COMBINER_NAMED)
        return MPI_SUCCESS;
    c->ints = amp_calloc((size_t)c->ni + 1, sizeof(int));
    c->addrs = amp_calloc((size_t)c->na + 1, sizeof(MPI_Aint));
    c->counts = amp_calloc((size_t)c->nc + 1, sizeof(MPI_Count));
    c->types = amp_calloc((size_t)c->nd + 1, sizeof(MPI_Datatype));
    if (!c->ints || !c->addrs || !c->counts || !c->types) {
        c->nd = 0;
        amp_contents_free(c);
        return amp_err(MPI_ERR_NO_MEM, "out of memory decoding a datatype");
    }
#if MPI_VERSION >= 4
    rc = PMPI_Type_get_contents_c(type, c->ni, c->na, c->nc, c->nd, c->ints, c->addrs, c->counts,
                                  c->types);
#else
    rc = PMPI_Type_get_contents(type, c->ni, c->na, c->nd, c->ints, c->addrs, c->types);
#endif
    if (rc != MPI_SUCCESS) {
        c->nd = 0;
        amp_contents_free(c);
        return amp_err(MPI_ERR_TYPE, "cannot decode datatype (MPI_Type_get_contents failed)");
    }
    return MPI_SUCCESS;
}

/* ---- replication of a child's list ---- */

typedef struct {
    amp_dt_t *dt;
    const amp_seglist_t *list;
    MPI_Count extent;
} amp_child_t;

static int amp_child_get(MPI_Datatype type, int typed, amp_child_t *ch)
{
    int rc = amp_dt_get(type, &ch->dt);
    if (rc != MPI_SUCCESS)
        return rc;
    if (typed) {
        rc = amp_dt_runs(ch->dt, type);
        if (rc != MPI_SUCCESS) {
            amp_dt_release(ch->dt);
            return rc;
        }
    }
    ch->list = typed ? &ch->dt->runs : &ch->dt->segs;
    ch->extent = ch->dt->extent;
    return MPI_SUCCESS;
}

static int amp_append(amp_seglist_t *out, const amp_seglist_t *src, MPI_Aint shift)
{
    for (size_t i = 0; i < src->n; i++) {
        int rc = amp_seglist_push(out, src->v[i].off + shift, src->v[i].len,
                                  src->typed ? src->kind[i] : 0);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* `n` consecutive copies of the child starting at `at`. */
static int amp_append_block(amp_seglist_t *out, const amp_child_t *ch, MPI_Aint at, MPI_Count n)
{
    const amp_seglist_t *l = ch->list;
    if (l->n == 1 && l->v[0].off == 0 && l->v[0].len == ch->extent) /* dense child: one run */
        return n > 0 ? amp_seglist_push(out, at, n * ch->extent, l->typed ? l->kind[0] : 0)
                     : MPI_SUCCESS;
    for (MPI_Count j = 0; j < n; j++) {
        int rc = amp_append(out, ch->list, at + (MPI_Aint)(j * ch->extent));
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* ---- multi-dimensional constructors ---- */

/* Index lists per dimension, visited as an odometer with `inner` varying fastest. */
typedef struct {
    int ndims;
    MPI_Count *len;    /* number of indices of each dimension */
    MPI_Count **index; /* global indices of each dimension, increasing */
    MPI_Count *stride; /* elements between consecutive global indices of each dimension */
    int fortran;
} amp_grid_t;

/* Visits the outer dimensions as an odometer; along the innermost one, consecutive indices are
 * one block of copies, so a dense child (a subarray or darray of a basic type) costs one segment
 * per row rather than one per element. */
static int amp_grid_append(amp_seglist_t *out, const amp_grid_t *g, const amp_child_t *ch,
                           MPI_Aint at)
{
    for (int d = 0; d < g->ndims; d++)
        if (g->len[d] == 0)
            return MPI_SUCCESS;
    MPI_Count *pos = amp_calloc((size_t)g->ndims, sizeof(MPI_Count));
    if (!pos)
        return amp_err(MPI_ERR_NO_MEM, "out of memory flattening a datatype");
    int inner = g->fortran ? 0 : g->ndims - 1;
    const MPI_Count *row = g->index[inner];
    int rc = MPI_SUCCESS;
    for (;;) {
        MPI_Count element = 0;
        for (int d = 0; d < g->ndims; d++)
            if (d != inner)
                element += g->index[d][pos[d]] * g->stride[d];
        for (MPI_Count i = 0; i < g->len[inner] && rc == MPI_SUCCESS;) {
            MPI_Count j = i + 1;
            while (j < g->len[inner] && row[j] == row[j - 1] + 1)
                j++;
            MPI_Aint first = at + (MPI_Aint)((element + row[i] * g->stride[inner]) * ch->extent);
            rc = amp_append_block(out, ch, first, j - i);
            i = j;
        }
        if (rc != MPI_SUCCESS)
            break;
        int d;
        for (int k = 1; k < g->ndims; k++) {
            d = g->fortran ? k : g->ndims - 1 - k;
            if (++pos[d] < g->len[d])
                goto next;
            pos[d] = 0;
        }
        break;
    next:;
    }
    free(pos);
    return rc;
}

static void amp_grid_free(amp_grid_t *g)
{
    if (g->index)
        for (int d = 0; d < g->ndims; d++)
            free(g->index[d]);
    free(g->index);
    free(g->len);
    free(g->stride);
}

static int amp_grid_alloc(amp_grid_t *g, int ndims, const MPI_Count *sizes, int order)
{
    memset(g, 0, sizeof(*g));
    g->ndims = ndims;
    g->fortran = order == MPI_ORDER_FORTRAN;
    g->len = amp_calloc((size_t)ndims, sizeof(MPI_Count));
    g->index = amp_calloc((size_t)ndims, sizeof(MPI_Count *));
    g->stride = amp_calloc((size_t)ndims, sizeof(MPI_Count));
    if (!g->len || !g->index || !g->stride)
        return amp_err(MPI_ERR_NO_MEM, "out of memory flattening a datatype");
    MPI_Count s = 1;
    for (int k = 0; k < ndims; k++) {
        int d = g->fortran ? k : ndims - 1 - k;
        g->stride[d] = s;
        s *= sizes[d];
    }
    return MPI_SUCCESS;
}

static int amp_grid_range(amp_grid_t *g, int d, MPI_Count first, MPI_Count n)
{
    g->index[d] = amp_malloc((size_t)(n > 0 ? n : 1) * sizeof(MPI_Count));
    if (!g->index[d])
        return amp_err(MPI_ERR_NO_MEM, "out of memory flattening a datatype");
    for (MPI_Count i = 0; i < n; i++)
        g->index[d][i] = first + i;
    g->len[d] = n;
    return MPI_SUCCESS;
}

static int amp_subarray(amp_seglist_t *out, int ndims, const MPI_Count *sizes,
                        const MPI_Count *subsizes, const MPI_Count *starts, int order,
                        const amp_child_t *ch, MPI_Aint at)
{
    amp_grid_t g;
    int rc = amp_grid_alloc(&g, ndims, sizes, order);
    for (int d = 0; d < ndims && rc == MPI_SUCCESS; d++)
        rc = amp_grid_range(&g, d, starts[d], subsizes[d]);
    if (rc == MPI_SUCCESS)
        rc = amp_grid_append(out, &g, ch, at);
    amp_grid_free(&g);
    return rc;
}

/* The indices of dimension `d` owned by process coordinate `coord` (MPI-3.1 section 4.1.4). */
static int amp_darray_dim(amp_grid_t *g, int d, MPI_Count gsize, int distrib, int darg, int psize,
                          int coord)
{
    MPI_Count *idx = amp_malloc((size_t)(gsize > 0 ? gsize : 1) * sizeof(MPI_Count));
    if (!idx)
        return amp_err(MPI_ERR_NO_MEM, "out of memory flattening a darray datatype");
    MPI_Count n = 0;
    if (distrib == MPI_DISTRIBUTE_NONE) {
        for (MPI_Count i = 0; i < gsize; i++)
            idx[n++] = i;
    } else if (distrib == MPI_DISTRIBUTE_BLOCK) {
        MPI_Count b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
        for (MPI_Count i = coord * b; i < (coord + 1) * b && i < gsize; i++)
            idx[n++] = i;
    } else {
        MPI_Count b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        for (MPI_Count k = coord * b; k < gsize; k += (MPI_Count)psize * b)
            for (MPI_Count i = k; i < k + b && i < gsize; i++)
                idx[n++] = i;
    }
    g->index[d] = idx;
    g->len[d] = n;
    return MPI_SUCCESS;
}

static int amp_darray(amp_seglist_t *out, const int *ints, const MPI_Count *gsizes,
                      const amp_child_t *ch, MPI_Aint at)
{
    int rank = ints[1], ndims = ints[2];
    const int *distribs = ints + 3 + ndims, *dargs = ints + 3 + 2 * ndims;
    const int *psizes = ints + 3 + 3 * ndims;
    int order = ints[3 + 4 * ndims];
    amp_grid_t g;
    int rc = amp_grid_alloc(&g, ndims, gsizes, order);
    /* process coordinates are row-major whatever the array order */
    int rest = rank;
    for (int d = ndims - 1; d >= 0 && rc == MPI_SUCCESS; d--) {
        int coord = rest % psizes[d];
        rest /= psizes[d];
        rc = amp_darray_dim(&g, d, gsizes[d], distribs[d], dargs[d], psizes[d], coord);
    }
    if (rc == MPI_SUCCESS)
        rc = amp_grid_append(out, &g, ch, at);
    amp_grid_free(&g);
    return rc;
}

/* ---- one combiner ---- */

static int amp_decode_int(const amp_contents_t *c, int typed, amp_seglist_t *out, MPI_Aint at,
                          amp_child_t *ch)
{
    const int *I = c->ints;
    const MPI_Aint *A = c->addrs;
    int rc = MPI_SUCCESS;
    switch (c->combiner) {
    case MPI_COMBINER_DUP:
        return amp_append(out, ch->list, at);
    case MPI_COMBINER_CONTIGUOUS:
        return amp_append_block(out, ch, at, I[0]);
    case MPI_COMBINER_VECTOR:
        for (int i = 0; i < I[0] && rc == MPI_SUCCESS; i++)
            rc = amp_append_block(out, ch, at + (MPI_Aint)i * I[2] * ch->extent, I[1]);
        return rc;
    case MPI_COMBINER_HVECTOR:
        for (int i = 0; i < I[0] && rc == MPI_SUCCESS; i++)
            rc = amp_append_block(out, ch, at + (MPI_Aint)i * A[0], I[1]);
        return rc;
    case MPI_COMBINER_INDEXED:
        for (int i = 0; i < I[0] && rc == MPI_SUCCESS; i++)
            rc = amp_append_block(out, ch, at + (MPI_Aint)I[1 + I[0] + i] * ch->extent, I[1 + i]);
        return rc;
    case MPI_COMBINER_HINDEXED:
        for (int i = 0; i < I[0] && rc == MPI_SUCCESS; i++)
            rc = amp_append_block(out, ch, at + A[i], I[1 + i]);
        return rc;
    case MPI_COMBINER_INDEXED_BLOCK:
        for (int i = 0; i < I[0] && rc == MPI_SUCCESS; i++)
            rc = amp_append_block(out, ch, at + (MPI_Aint)I[2 + i] * ch->extent, I[1]);
        return rc;
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int i = 0; i < I[0] && rc == MPI_SUCCESS; i++)
            rc = amp_append_block(out, ch, at + A[i], I[1]);
        return rc;
    case MPI_COMBINER_SUBARRAY: {
        int nd = I[0];
        MPI_Count *v = amp_malloc(3 * (size_t)nd * sizeof(MPI_Count) + 1);
        if (!v)
            return amp_err(MPI_ERR_NO_MEM, "out of memory flattening a subarray datatype");
        for (int i = 0; i < 3 * nd; i++)
            v[i] = I[1 + i];
        rc = amp_subarray(out, nd, v, v + nd, v + 2 * nd, I[1 + 3 * nd], ch, at);
        free(v);
        return rc;
    }
    case MPI_COMBINER_DARRAY: {
        int nd = I[2];
        MPI_Count *gs = amp_malloc((size_t)nd * sizeof(MPI_Count) + 1);
        if (!gs)
            return amp_err(MPI_ERR_NO_MEM, "out of memory flattening a darray datatype");
        for (int i = 0; i < nd; i++)
            gs[i] = I[3 + i];
        rc = amp_darray(out, I, gs, ch, at);
        free(gs);
        return rc;
    }
    case MPI_COMBINER_RESIZED:
        return amp_append(out, ch->list, at);
    default:
        return amp_err(MPI_ERR_TYPE, "datatype constructor (combiner %d) is not supported",
                       c->combiner);
    }
}

#if MPI_VERSION >= 4
/* Large-count constructors: counts, block lengths and displacements come from `counts`. */
static int amp_decode_large(const amp_contents_t *c, int typed, amp_seglist_t *out, MPI_Aint at,
                            amp_child_t *ch)
{
    const MPI_Count *C = c->counts;
    int rc = MPI_SUCCESS;
    switch (c->combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        return amp_append(out, ch->list, at);
    case MPI_COMBINER_CONTIGUOUS:
        return amp_append_block(out, ch, at, C[0]);
    case MPI_COMBINER_VECTOR:
        for (MPI_Count i = 0; i < C[0] && rc == MPI_SUCCESS; i++)
            rc = amp_append_block(out, ch, at + (MPI_Aint)(i * C[2] * ch->extent), C[1]);
        return rc;
    case MPI_COMBINER_HVECTOR:
        for (MPI_Count i = 0; i < C[0] && rc == MPI_SUCCESS; i++)
            rc = amp_append_block(out, ch, at + (MPI_Aint)(i * C[2]), C[1]);
        return rc;
    case MPI_COMBINER_INDEXED:
        for (MPI_Count i = 0; i < C[0] && rc == MPI_SUCCESS; i++)
            rc = amp_append_block(out, ch, at + (MPI_Aint)(C[1 + C[0] + i] * ch->extent), C[1 + i]);
        return rc;
    case MPI_COMBINER_HINDEXED:
        for (MPI_Count i = 0; i < C[0] && rc == MPI_SUCCESS; i++)
            rc = amp_append_block(out, ch, at + (MPI_Aint)C[1 + C[0] + i], C[1 + i]);
        return rc;
    case MPI_COMBINER_INDEXED_BLOCK:
        for (MPI_Count i = 0; i < C[0] && rc == MPI_SUCCESS; i++)
            rc = amp_append_block(out, ch, at + (MPI_Aint)(C[2 + i] * ch->extent), C[1]);
        return rc;
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (MPI_Count i = 0; i < C[0] && rc == MPI_SUCCESS; i++)
            rc = amp_append_block(out, ch, at + (MPI_Aint)C[2 + i], C[1]);
        return rc;
    case MPI_COMBINER_SUBARRAY: {
        int nd = c->ints[0];
        return amp_subarray(out, nd, C, C + nd, C + 2 * nd, c->ints[1], ch, at);
    }
    default:
        return amp_err(MPI_ERR_TYPE,
                       "large-count datatype constructor (combiner %d) is not supported",
                       c->combiner);
    }
}
#endif

static int amp_decode_struct(const amp_contents_t *c, int typed, amp_seglist_t *out, MPI_Aint at)
{
    MPI_Count n = c->nc > 0 ? c->counts[0] : c->ints[0];
    int rc = MPI_SUCCESS;
    for (MPI_Count i = 0; i < n && rc == MPI_SUCCESS; i++) {
        MPI_Count blocklen = c->nc > 0 ? c->counts[1 + i] : c->ints[1 + i];
        MPI_Aint disp = c->nc > 0 ? (MPI_Aint)c->counts[1 + n + i] : c->addrs[i];
        amp_child_t ch;
        rc = amp_child_get(c->types[i], typed, &ch);
        if (rc != MPI_SUCCESS)
            break;
        rc = amp_append_block(out, &ch, at + disp, blocklen);
        amp_dt_release(ch.dt);
    }
    return rc;
}

/* Kinds of the Fortran parameterised types, which decode to their parameters, not a child. */
static int amp_decode_f90(MPI_Datatype type, int combiner, amp_seglist_t *out, MPI_Aint at)
{
    int size = 0;
    PMPI_Type_size(type, &size);
    amp_kind_t kind = combiner == MPI_COMBINER_F90_INTEGER ? AMP_KIND(AMP_KIND_INT, size, size)
                      : combiner == MPI_COMBINER_F90_REAL
                          ? AMP_KIND(AMP_KIND_FLOAT, size, size)
                          : AMP_KIND(AMP_KIND_FLOAT, size / 2, size / 2);
    if (size > 16 || (combiner != MPI_COMBINER_F90_INTEGER && size % 4 != 0))
        kind = AMP_KIND_UNKNOWN;
    return amp_seglist_push(out, at, size, kind);
}

int amp_dt_decode(MPI_Datatype type, int typed, amp_seglist_t *out, int *named)
{
    amp_contents_t c;
    int rc = amp_contents_get(type, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    *named = c.combiner == MPI_COMBINER_NAMED;
    if (*named) {
        int known;
        return amp_dt_named_runs(type, 0, out, &known);
    }
    switch (c.combiner) {
    case MPI_COMBINER_STRUCT:
        rc = amp_decode_struct(&c, typed, out, 0);
        break;
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX:
    case MPI_COMBINER_F90_INTEGER:
        rc = amp_decode_f90(type, c.combiner, out, 0);
        break;
    default: {
        amp_child_t ch;
        if (c.nd < 1) {
            rc = amp_err(MPI_ERR_TYPE, "datatype constructor (combiner %d) is not supported",
                         c.combiner);
            break;
        }
        rc = amp_child_get(c.types[0], typed, &ch);
        if (rc != MPI_SUCCESS)
            break;
#if MPI_VERSION >= 4
        if (c.nc > 0)
            rc = amp_decode_large(&c, typed, out, 0, &ch);
        else
#endif
            rc = amp_decode_int(&c, typed, out, 0, &ch);
        amp_dt_release(ch.dt);
    }
    }
    amp_contents_free(&c);
    return rc;
}
