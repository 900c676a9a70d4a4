/* Groups of consecutive ranks with one aggregator each, for the segmentation algorithms: the
 * groups of the automatic plan, or equal ranges when the count was set by hint. */
#include <stdlib.h>

#include "coll/coll_internal.h"
#include "core/err.h"
#include "core/fault.h"

/* First rank of group g of n: from the automatic plan, else equal ranges. */
static int amp_group_first(const amp_coll_call_t *c, int n, int g)
{
    if (c->groups && c->groups->n == n)
        return c->groups->first[g];
    return (int)((long long)g * c->nprocs / n);
}

static int amp_extent_cmp(const void *a, const void *b)
{
    const MPI_Offset *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

int amp_coll_groups_disjoint(const amp_coll_call_t *c, int n, int *result)
{
    *result = 0;
    MPI_Offset *ext = amp_malloc(2 * (size_t)n * sizeof(MPI_Offset));
    if (!ext) /* no answer: the others may find either, so the call fails here */
        return amp_err(MPI_ERR_NO_MEM, "out of memory comparing aggregator groups");
    int used = 0;
    for (int g = 0; g < n; g++) {
        MPI_Offset lo = -1, hi = -1;
        for (int q = amp_group_first(c, n, g); q < amp_group_first(c, n, g + 1); q++) {
            const amp_coll_rank_t *x = &c->ranks[q];
            if (x->bytes == 0)
                continue;
            if (lo < 0 || x->lo < lo)
                lo = x->lo;
            if (x->hi > hi)
                hi = x->hi;
        }
        if (lo < 0)
            continue;
        ext[2 * used] = lo / c->align;
        ext[2 * used + 1] = (hi + c->align - 1) / c->align;
        used++;
    }
    /* groups need not be in file order: in the order of their first blocks, each must start
     * at or after the end of every one before it (pairwise, that took seconds at 100,000).
     * Two groups in rank order that overlap settle it without sorting. */
    for (int i = 1; i < used; i++)
        if (ext[2 * i - 2] <= ext[2 * i] && ext[2 * i] < ext[2 * i - 1]) {
            free(ext);
            return MPI_SUCCESS; /* *result is 0 */
        }
    qsort(ext, (size_t)used, 2 * sizeof(MPI_Offset), amp_extent_cmp);
    int disjoint = 1;
    MPI_Offset end = 0;
    for (int i = 0; i < used && disjoint; i++) {
        if (i > 0 && ext[2 * i] < end)
            disjoint = 0;
        end = ext[2 * i + 1] > end ? ext[2 * i + 1] : end;
    }
    free(ext);
    *result = disjoint;
    return MPI_SUCCESS;
}

int amp_coll_groups(amp_coll_call_t *c, amp_coll_plan_t *p)
{
    int n = c->naggr;
    /* the first rank of each group aggregates */
    int g = 0;
    for (int i = 0; i < n; i++) {
        c->aggr[i] = amp_group_first(c, n, i);
        if (c->aggr[i] <= c->rank)
            g = i;
    }
    int first = amp_group_first(c, n, g), last = amp_group_first(c, n, g + 1);
    p->mine = -1;
    p->nwork = 0;
    p->work = amp_calloc(1, sizeof(amp_coll_work_t));
    if (!p->work)
        return amp_err(MPI_ERR_NO_MEM, "out of memory planning groups");
    amp_coll_work_t *w = &p->work[0];
    w->agg = first;
    w->members = amp_malloc((size_t)(last - first) * sizeof(int));
    if (!w->members)
        return amp_err(MPI_ERR_NO_MEM, "out of memory planning groups");
    for (int q = first; q < last; q++)
        if (c->ranks[q].bytes > 0)
            w->members[w->nmembers++] = q;
    int is_member = c->ranks[c->rank].bytes > 0;
    w->member = is_member;
    if (is_member) {
        w->s_lo = 0;
        w->s_hi = c->ranks[c->rank].bytes;
    }
    if (c->rank == first)
        p->mine = 0;
    if (is_member || c->rank == first) {
        p->nwork = 1;
    } else { /* no part in the group's work: amp_coll_plan_free sees no work to free */
        free(w->members);
        w->members = NULL;
    }
    return MPI_SUCCESS;
}
