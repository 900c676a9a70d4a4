/* Groups of consecutive ranks with one aggregator each, for the segmentation algorithms, and
 * the placement of aggregators over nodes. */
#include <stdlib.h>

#include "coll/coll_internal.h"
#include "core/err.h"

int amp_coll_groups(amp_coll_call_t *c, amp_coll_plan_t *p)
{
    int n = c->naggr, P = c->nprocs;
    /* group g holds ranks [g * P / n, (g + 1) * P / n); its first rank aggregates */
    for (int g = 0; g < n; g++)
        c->aggr[g] = (int)((long long)g * P / n);
    int g = (int)(((long long)c->rank * n + n - 1) / P);
    while (g > 0 && (long long)g * P / n > c->rank)
        g--;
    while (g + 1 < n && (long long)(g + 1) * P / n <= c->rank)
        g++;
    int first = (int)((long long)g * P / n), last = (int)((long long)(g + 1) * P / n);
    p->mine = -1;
    p->nwork = 0;
    p->work = calloc(1, sizeof(amp_coll_work_t));
    if (!p->work)
        return amp_err(MPI_ERR_NO_MEM, "out of memory planning groups");
    amp_coll_work_t *w = &p->work[0];
    w->agg = first;
    w->members = malloc((size_t)(last - first) * sizeof(int));
    if (!w->members)
        return amp_err(MPI_ERR_NO_MEM, "out of memory planning groups");
    for (int q = first; q < last; q++)
        if (c->ranks[q].bytes > 0)
            w->members[w->nmembers++] = q;
    int is_member = c->ranks[c->rank].bytes > 0;
    if (is_member) {
        w->s_lo = 0;
        w->s_hi = c->io->nbytes;
    }
    if (c->rank == first)
        p->mine = 0;
    if (is_member || c->rank == first)
        p->nwork = 1;
    return MPI_SUCCESS;
}
