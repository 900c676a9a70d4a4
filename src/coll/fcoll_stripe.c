/* Stripe-contiguous file domains (the Lustre collective write driver's method, coll/stripe_map.h):
 * every aggregator owns whole stripes of a fixed set of storage targets, so that no two
 * aggregators touch one stripe (no extent lock ping-pong between clients) and each talks to few
 * targets. A member splits its runs at stripe boundaries and sends each aggregator the runs of
 * its stripes; the rounds are those of the round engine, each aggregator taking its share of one
 * row (one stripe when pipelined) per round. */
#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "coll/stripe_map.h"
#include "core/err.h"
#include "core/fault.h"

/* Round ranges of aggregator a: round r is [starts[r], bounds[r + 1]). */
static int amp_stripe_work_rounds(const amp_stripe_map_t *m, int a, amp_coll_work_t *w)
{
    int64_t n = amp_stripe_rounds(m, a);
    w->nrounds = (int)n;
    w->bounds = amp_malloc(((size_t)n + 1) * sizeof(MPI_Offset));
    w->starts = amp_malloc(((size_t)n + 1) * sizeof(MPI_Offset));
    if (!w->bounds || !w->starts)
        return amp_err(MPI_ERR_NO_MEM, "out of memory for %lld stripe rounds", (long long)n);
    w->bounds[0] = m->lo;
    for (int64_t r = 0; r < n; r++) {
        int64_t lo, hi;
        amp_stripe_round(m, a, r, &lo, &hi);
        w->starts[r] = lo;
        w->bounds[r + 1] = hi;
    }
    return MPI_SUCCESS;
}

static int amp_stripe_push(amp_coll_work_t *w, size_t *cap, int64_t off, int64_t len)
{
    if (w->nruns > 0 && w->runs[2 * w->nruns - 2] + w->runs[2 * w->nruns - 1] == off) {
        w->runs[2 * w->nruns - 1] += len;
        return MPI_SUCCESS;
    }
    if (w->nruns == *cap) {
        size_t grown = *cap ? 2 * *cap : 16;
        int64_t *v = amp_realloc(w->runs, 2 * grown * sizeof(int64_t));
        if (!v)
            return amp_err(MPI_ERR_NO_MEM, "out of memory splitting runs at stripes");
        w->runs = v;
        *cap = grown;
    }
    w->runs[2 * w->nruns] = off;
    w->runs[2 * w->nruns + 1] = len;
    w->nruns++;
    return MPI_SUCCESS;
}

/* A member's runs, cut at stripe boundaries and dealt to the aggregators that own the stripes
 * (work index = aggregator index here). */
static int amp_stripe_deal(amp_coll_call_t *c, const amp_stripe_map_t *m, amp_coll_work_t *work,
                           const int *index)
{
    int64_t *runs = NULL;
    size_t nruns = 0;
    int rc = amp_coll_runs(c, 0, c->io->nbytes, &runs, &nruns);
    size_t *cap = amp_calloc((size_t)m->naggr, sizeof(size_t));
    if (rc == MPI_SUCCESS && !cap)
        rc = amp_err(MPI_ERR_NO_MEM, "out of memory splitting runs at stripes");
    for (size_t i = 0; i < nruns && rc == MPI_SUCCESS; i++) {
        for (int64_t off = runs[2 * i], end = off + runs[2 * i + 1]; off < end && rc == 0;) {
            int64_t stop = (off / m->unit + 1) * m->unit, len = (stop < end ? stop : end) - off;
            int a = amp_stripe_owner(m, off);
            rc = amp_stripe_push(&work[index[a]], &cap[a], off, len);
            off += len;
        }
    }
    free(cap);
    free(runs);
    return rc;
}

/* The works of this rank; index[a]: the work of aggregator a, or -1 (naggr entries). */
static int amp_stripe_works(amp_coll_call_t *c, const amp_stripe_map_t *m, amp_coll_plan_t *p,
                            int *index)
{
    p->mine = -1;
    const amp_coll_rank_t *me = &c->ranks[c->rank];
    int nwork = 0; /* works for this rank's aggregators only */
    for (int a = 0; a < c->naggr; a++)
        nwork +=
            c->aggr[a] == c->rank || (me->bytes > 0 && amp_stripe_touches(m, a, me->lo, me->hi));
    p->work = amp_calloc((size_t)nwork + 1, sizeof(amp_coll_work_t));
    if (!p->work)
        return amp_err(MPI_ERR_NO_MEM, "out of memory planning stripe domains");
    int rc = MPI_SUCCESS;
    for (int a = 0; a < c->naggr && rc == MPI_SUCCESS; a++) {
        index[a] = -1;
        int is_agg = c->aggr[a] == c->rank;
        int is_member = me->bytes > 0 && amp_stripe_touches(m, a, me->lo, me->hi);
        if (!is_agg && !is_member)
            continue;
        amp_coll_work_t *w = &p->work[p->nwork];
        index[a] = p->nwork++;
        w->agg = c->aggr[a];
        w->member = is_member;
        if (is_agg) { /* only the aggregator needs its members */
            w->members = amp_malloc((size_t)c->nprocs * sizeof(int));
            if (!w->members) {
                rc = amp_err(MPI_ERR_NO_MEM, "out of memory planning stripe domains");
                break;
            }
        }
        for (int q = 0; is_agg && q < c->nprocs; q++) {
            const amp_coll_rank_t *o = &c->ranks[q];
            if (o->bytes > 0 && amp_stripe_touches(m, a, o->lo, o->hi))
                w->members[w->nmembers++] = q;
        }
        if (is_member) {
            w->s_lo = 0;
            w->s_hi = me->bytes;
            w->dealt = 1;
        }
        if (is_agg)
            p->mine = index[a];
        rc = amp_stripe_work_rounds(m, a, w);
    }
    return rc;
}

static void amp_stripe_map_of(const amp_coll_call_t *c, amp_stripe_map_t *m)
{
    amp_stripe_map_init(m, c->layout->unit, c->layout->count, c->naggr, c->glo, c->ghi, c->cb);
}

static int amp_stripe_domains(amp_coll_call_t *c, amp_coll_plan_t *p)
{
    amp_stripe_map_t m;
    amp_stripe_map_of(c, &m);
    int *index = amp_malloc((size_t)c->naggr * sizeof(int));
    int rc = index ? amp_stripe_works(c, &m, p, index)
                   : amp_err(MPI_ERR_NO_MEM, "out of memory planning stripe domains");
    free(index);
    return rc;
}

static int amp_stripe_plan(amp_coll_call_t *c, amp_coll_plan_t *p)
{
    amp_stripe_map_t m;
    amp_stripe_map_of(c, &m);
    int *index = amp_malloc((size_t)c->naggr * sizeof(int)); /* aggregator -> work of this rank */
    if (!index)
        return amp_err(MPI_ERR_NO_MEM, "out of memory planning stripe domains");
    int rc = amp_stripe_works(c, &m, p, index);
    /* a contiguous member's runs are known to its aggregators (amp_coll_exchange_runs) */
    const amp_coll_rank_t *me = &c->ranks[c->rank];
    if (rc == MPI_SUCCESS && me->bytes > 0 && !amp_coll_runs_known(c, c->rank))
        rc = amp_stripe_deal(c, &m, p->work, index);
    free(index);
    return rc;
}

const amp_fcoll_t amp_fcoll_stripe = {
    .name = "stripe",
    .plan = amp_stripe_plan,
    .domains = amp_stripe_domains,
};
