/* Static segmentation: each aggregator serves a group of consecutive ranks and, in every round,
 * takes the same number of bytes from each member (the collective buffer shared out), which
 * keeps every link busy instead of moving data in bursts. */
#include "coll/coll_internal.h"

static int amp_staticseg_domains(amp_coll_call_t *c, amp_coll_plan_t *p)
{
    int rc = amp_coll_groups(c, p);
    if (rc != MPI_SUCCESS || p->nwork == 0)
        return rc;
    amp_coll_work_t *w = &p->work[0];
    MPI_Count most = 0;
    for (int k = 0; k < w->nmembers; k++)
        if (c->ranks[w->members[k]].bytes > most)
            most = c->ranks[w->members[k]].bytes;
    w->quantum = w->nmembers > 0 ? c->cb / w->nmembers : c->cb;
    if (w->quantum < 1)
        w->quantum = 1;
    w->nrounds = (int)((most + w->quantum - 1) / w->quantum);
    return MPI_SUCCESS;
}

static int amp_staticseg_plan(amp_coll_call_t *c, amp_coll_plan_t *p)
{
    return amp_staticseg_domains(c, p); /* the runs are exchanged after the agreement */
}

const amp_fcoll_t amp_fcoll_static_seg = {
    .name = "static_seg",
    .plan = amp_staticseg_plan,
    .domains = amp_staticseg_domains,
};
