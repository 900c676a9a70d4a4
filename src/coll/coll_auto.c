/* The automatic aggregator choice of a collective call: gathers what auto_select.c needs (k and
 * where it came from, an initial grouping from the file view, the Cartesian communicator or the
 * ampio_topology hint), remembers the plan of the last layout so that repeated calls of the same
 * shape do not plan again, and describes the decision for AMPIO_EXPLAIN. Every input is known to
 * every rank after the call's allgather, so every rank computes the same plan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/auto_select.h"
#include "coll/coll_internal.h"
#include "core/err.h"
#include "core/fault.h"
#include "io/view.h"

#define AMP_AUTO_MAX_DIMS 8

struct amp_coll_auto {
    int ndims; /* of the Cartesian communicator, 0 if none */
    int dims[AMP_AUTO_MAX_DIMS];
    /* the layout the last plan was made for (amp_auto_layout) */
    int64_t *layout;
    size_t layout_len;
    char *topology;
    int valid, reused; /* reused: the current call took the plan of an earlier one */
    int64_t plans;     /* plans made for this file (ampio_stats) */
    amp_grouping_t grouping;
    int ninitial;
    int64_t k;
    amp_groups_t groups;
};

int amp_coll_auto_new(int ndims, const int *dims, amp_coll_auto_t **out)
{
    amp_coll_auto_t *a = amp_calloc(1, sizeof(*a));
    if (!a)
        return amp_err(MPI_ERR_NO_MEM, "out of memory for the aggregator planner");
    a->ndims = ndims > 0 && ndims <= AMP_AUTO_MAX_DIMS ? ndims : 0;
    for (int d = 0; d < a->ndims; d++)
        a->dims[d] = dims[d];
    *out = a;
    return MPI_SUCCESS;
}

int amp_coll_auto_init(amp_file_t *f, amp_coll_auto_t **out)
{
    int topo = MPI_UNDEFINED, ndims = 0, dims[AMP_AUTO_MAX_DIMS];
    int periods[AMP_AUTO_MAX_DIMS], coords[AMP_AUTO_MAX_DIMS];
    PMPI_Topo_test(f->comm, &topo);
    if (topo == MPI_CART && PMPI_Cartdim_get(f->comm, &ndims) == MPI_SUCCESS &&
        ndims <= AMP_AUTO_MAX_DIMS && ndims > 0)
        PMPI_Cart_get(f->comm, ndims, dims, periods, coords);
    else
        ndims = 0;
    return amp_coll_auto_new(ndims, dims, out);
}

void amp_coll_auto_free(amp_coll_auto_t *a)
{
    if (!a)
        return;
    amp_groups_free(&a->groups);
    free(a->layout);
    free(a->topology);
    free(a);
}

/* What a plan depends on: k, whether the view is contiguous, and every rank's bytes and extent
 * relative to the call's lowest offset. Calls that only move along the file (a record per call,
 * a time step per call) have the same layout and reuse the plan. */
static void amp_auto_layout(const amp_coll_call_t *c, const amp_coll_auto_in_t *in, int64_t *out)
{
    *out++ = in->k;
    *out++ = in->contiguous;
    for (int r = 0; r < c->nprocs; r++) {
        const amp_coll_rank_t *x = &c->ranks[r];
        *out++ = x->bytes;
        *out++ = x->bytes ? x->lo - c->glo : 0;
        *out++ = x->bytes ? x->hi - c->glo : 0;
    }
}

/* Whether the call has the layout `kept` (compared in place: a copy would cost 24 bytes per
 * rank). */
static int amp_auto_same_layout(const amp_coll_call_t *c, const amp_coll_auto_in_t *in,
                                const int64_t *kept)
{
    if (*kept++ != in->k || *kept++ != in->contiguous)
        return 0;
    for (int r = 0; r < c->nprocs; r++, kept += 3) {
        const amp_coll_rank_t *x = &c->ranks[r];
        if (kept[0] != x->bytes || kept[1] != (x->bytes ? x->lo - c->glo : 0) ||
            kept[2] != (x->bytes ? x->hi - c->glo : 0))
            return 0;
    }
    return 1;
}

/* The inputs from the file's hints and view. */
static amp_coll_auto_in_t amp_auto_inputs(const amp_coll_call_t *c)
{
    const char *t = c->f->cfg.str[AMP_CFG_AMPIO_TOPOLOGY];
    amp_coll_auto_in_t in = {amp_cfg_num(&c->f->cfg, AMP_CFG_AMPIO_SATURATION_K),
                             amp_view_contiguous(&c->f->view), t ? t : ""};
    return in;
}

/* The initial groups, from the first source that shows structure. `rec`: every rank's bytes,
 * lo and hi, 3 words apart (the layout kept for the next call, amp_auto_layout). */
static int amp_auto_initial(amp_coll_call_t *c, amp_coll_auto_t *a, const amp_coll_auto_in_t *in,
                            const int64_t *rec, amp_groups_t *init)
{
    int P = c->nprocs;
    init->first = amp_malloc(((size_t)P + 1) * sizeof(int));
    if (!init->first)
        return amp_err(MPI_ERR_NO_MEM, "out of memory planning aggregators");
    init->n = 0;
    if (!in->contiguous) {
        init->n = amp_auto_group_by_extents(P, rec + 1, rec + 2, rec, 3, init->first);
        a->grouping = AMP_GROUPING_VIEW;
        if (init->n == P) /* one group per rank: the view showed no structure */
            init->n = 0;
    }
    if (init->n == 0 && a->ndims > 0) {
        init->n = amp_auto_group_by_dims(P, a->ndims, a->dims, init->first);
        a->grouping = AMP_GROUPING_CART;
    }
    const char *topo = in->topology;
    if (init->n == 0 && topo && *topo) {
        int dims[AMP_AUTO_MAX_DIMS];
        int nd = amp_auto_parse_topology(topo, dims, AMP_AUTO_MAX_DIMS);
        init->n = nd > 0 ? amp_auto_group_by_dims(P, nd, dims, init->first) : 0;
        a->grouping = AMP_GROUPING_TOPOLOGY;
    }
    if (init->n == 0) {
        for (int r = 0; r <= P; r++)
            init->first[r] = r;
        init->n = P;
        a->grouping = AMP_GROUPING_NONE;
    }
    return MPI_SUCCESS;
}

int amp_coll_auto_cached_in(amp_coll_call_t *c, amp_coll_auto_t *a, const amp_coll_auto_in_t *in)
{
    if (!a->valid || a->groups.n == 0 || strcmp(a->topology, in->topology) != 0)
        return 0;
    if (!amp_auto_same_layout(c, in, a->layout))
        return 0;
    c->groups = &a->groups;
    a->reused = 1;
    return 1;
}

int amp_coll_auto_cached(amp_coll_call_t *c, amp_coll_auto_t *a)
{
    amp_coll_auto_in_t in = amp_auto_inputs(c);
    return amp_coll_auto_cached_in(c, a, &in);
}

int64_t amp_coll_auto_plans(const amp_coll_auto_t *a)
{
    return a ? a->plans : 0;
}

void amp_coll_auto_forget(amp_coll_auto_t *a)
{
    a->valid = 0;
    amp_groups_free(&a->groups);
}

int amp_coll_auto_plan_in(amp_coll_call_t *c, amp_coll_auto_t *a, const amp_coll_auto_in_t *in)
{
    int64_t k = in->k;
    a->valid = 0;
    amp_groups_free(&a->groups);
    free(a->topology);
    a->topology = amp_strdup(in->topology);
    a->layout_len = 2 + 3 * (size_t)c->nprocs;
    if (!a->layout) { /* the communicator, and so the length, is the file's for good */
        a->layout = amp_malloc(a->layout_len * sizeof(int64_t));
    }
    if (!a->topology || !a->layout)
        return amp_err(MPI_ERR_NO_MEM, "out of memory planning aggregators");
    /* the layout first: the planner reads every rank's extent and bytes from it */
    amp_auto_layout(c, in, a->layout);
    const int64_t *rec = a->layout + 2;
    amp_groups_t init = {0, NULL};
    int rc = amp_auto_initial(c, a, in, rec, &init);
    if (rc == MPI_SUCCESS && amp_auto_refine(c->nprocs, rec, 3, k, &init, &a->groups) != 0)
        rc = amp_err(MPI_ERR_NO_MEM, "out of memory planning aggregators");
    if (rc == MPI_SUCCESS) {
        a->ninitial = init.n;
        a->k = k;
        a->valid = 1;
        a->reused = 0;
        a->plans++;
        c->groups = &a->groups;
    }
    amp_groups_free(&init);
    return rc;
}

int amp_coll_auto_plan(amp_coll_call_t *c, amp_coll_auto_t *a)
{
    amp_coll_auto_in_t in = amp_auto_inputs(c);
    return amp_coll_auto_plan_in(c, a, &in);
}

int amp_coll_auto_describe(const amp_coll_call_t *c, const amp_coll_auto_t *a, char *text,
                           size_t len)
{
    if (!a || !a->valid || c->groups != &a->groups)
        return snprintf(text, len, "aggregators set by hint");
    size_t at = (size_t)snprintf(
        text, len,
        "k=%lld (%s); initial grouping: %s, %d group(s); refined to %d group(s) of "
        "about k bytes each (ranks: bytes)",
        (long long)a->k, amp_cfg_source(&c->f->cfg, AMP_CFG_AMPIO_SATURATION_K),
        amp_grouping_names[a->grouping], a->ninitial, a->groups.n);
    /* one entry takes at most 47 characters; stop with room left for the ellipsis and reuse note */
    int g = 0;
    for (; g < a->groups.n && at + 96 < len; g++) {
        int from = a->groups.first[g], to = a->groups.first[g + 1];
        long long bytes = 0;
        for (int r = from; r < to; r++)
            bytes += (long long)c->ranks[r].bytes;
        at += (size_t)snprintf(text + at, len - at, "%s%d-%d: %lld", g ? ", " : " ", from, to - 1,
                               bytes);
    }
    if (g < a->groups.n && at < len)
        at += (size_t)snprintf(text + at, len - at, ", ...");
    if (a->reused && at < len)
        at += (size_t)snprintf(text + at, len - at, "; the plan of an earlier call");
    return (int)at;
}
