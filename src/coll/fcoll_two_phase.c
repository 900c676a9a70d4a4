/* Two-phase I/O: the extent of all data is cut into one file domain per aggregator, with
 * boundaries on multiples of the stripe unit (or file system block) so that no two aggregators
 * ever touch the same block. Every rank sends each aggregator its data inside that domain,
 * round by round, each round covering at most the collective buffer of the file. */
#include <stdlib.h>

#include "coll/coll_internal.h"
#include "core/err.h"
#include "core/fault.h"

static MPI_Offset amp_round_down(MPI_Offset v, MPI_Offset a)
{
    return v / a * a;
}

static MPI_Offset amp_round_up(MPI_Offset v, MPI_Offset a)
{
    return (v + a - 1) / a * a;
}

/* File domain a: [*dlo, *dhi), of `dsize` bytes from `start` on, cut at the end of the data. */
static void amp_two_phase_domain(const amp_coll_call_t *c, int a, MPI_Offset start,
                                 MPI_Offset dsize, MPI_Offset *dlo, MPI_Offset *dhi)
{
    *dlo = start + a * dsize;
    *dhi = *dlo + dsize < c->ghi ? *dlo + dsize : c->ghi;
    if (*dlo > *dhi)
        *dlo = *dhi;
}

/* Whether this rank takes part in domain a: it aggregates it, or has data in it (member). */
static int amp_two_phase_part(const amp_coll_call_t *c, int a, MPI_Offset dlo, MPI_Offset dhi,
                              int *is_member)
{
    const amp_coll_rank_t *me = &c->ranks[c->rank];
    *is_member = me->bytes > 0 && me->lo < dhi && me->hi > dlo;
    return *is_member || c->aggr[a] == c->rank;
}

static int amp_two_phase_domains(amp_coll_call_t *c, amp_coll_plan_t *p)
{
    MPI_Offset start = amp_round_down(c->glo, c->align);
    MPI_Offset dsize = amp_round_up((c->ghi - start + c->naggr - 1) / c->naggr, c->align);
    MPI_Offset round = c->cb > c->align ? amp_round_down(c->cb, c->align) : c->align;
    MPI_Offset dlo, dhi;
    int nwork = 0, is_member;
    /* works for this rank's domains only: one per aggregator would cost every rank naggr of
     * them where its data span the file */
    for (int a = 0; a < c->naggr; a++) {
        amp_two_phase_domain(c, a, start, dsize, &dlo, &dhi);
        nwork += amp_two_phase_part(c, a, dlo, dhi, &is_member);
    }
    p->work = amp_calloc((size_t)nwork + 1, sizeof(amp_coll_work_t));
    if (!p->work)
        return amp_err(MPI_ERR_NO_MEM, "out of memory planning two-phase I/O");
    p->mine = -1;
    for (int a = 0; a < c->naggr; a++) {
        amp_two_phase_domain(c, a, start, dsize, &dlo, &dhi);
        if (!amp_two_phase_part(c, a, dlo, dhi, &is_member))
            continue;
        int is_agg = c->aggr[a] == c->rank;
        amp_coll_work_t *w = &p->work[p->nwork];
        w->agg = c->aggr[a];
        w->nrounds = dhi > dlo ? (int)((dhi - dlo + round - 1) / round) : 0;
        w->member = is_member;
        w->bounds = amp_malloc(((size_t)w->nrounds + 1) * sizeof(MPI_Offset));
        /* only the aggregator needs its members: a list per domain on every member would take
         * naggr x nprocs entries where every rank's data span the file */
        w->members = is_agg ? amp_malloc((size_t)c->nprocs * sizeof(int)) : NULL;
        if (!w->bounds || (is_agg && !w->members)) {
            p->nwork++;
            return amp_err(MPI_ERR_NO_MEM, "out of memory planning two-phase I/O");
        }
        for (int r = 0; r <= w->nrounds; r++)
            w->bounds[r] = dlo + r * round < dhi ? dlo + r * round : dhi;
        for (int q = 0; is_agg && q < c->nprocs; q++) {
            const amp_coll_rank_t *o = &c->ranks[q];
            if (o->bytes > 0 && o->lo < dhi && o->hi > dlo)
                w->members[w->nmembers++] = q;
        }
        if (is_agg)
            p->mine = p->nwork;
        p->nwork++;
    }
    return MPI_SUCCESS;
}

static int amp_two_phase_plan(amp_coll_call_t *c, amp_coll_plan_t *p)
{
    int rc = amp_two_phase_domains(c, p);
    if (rc != MPI_SUCCESS)
        return rc;
    /* this rank's data in each domain [bounds[0], bounds[nrounds]) it is a member of */
    for (int i = 0; i < p->nwork; i++) {
        amp_coll_work_t *w = &p->work[i];
        MPI_Offset dlo = w->bounds[0], dhi = w->bounds[w->nrounds];
        if (w->member) {
            w->s_lo = amp_coll_bytes_before(c, dlo);
            w->s_hi = amp_coll_bytes_before(c, dhi);
        }
    }
    return MPI_SUCCESS; /* the runs are exchanged after the agreement that every rank planned */
}

const amp_fcoll_t amp_fcoll_two_phase = {
    .name = "two_phase",
    .plan = amp_two_phase_plan,
    .domains = amp_two_phase_domains,
};
