/* Dynamic segmentation: each aggregator serves a group of consecutive ranks, sorts only its
 * group's runs (no all-to-all) and writes the group's data in rounds of at most the collective
 * buffer of data, cut at the file offsets where that much data has accumulated. */
#include <stdlib.h>

#include "coll/coll_internal.h"
#include "core/err.h"
#include "core/fault.h"
#include "core/task.h"

#define AMP_DYNSEG_TAG_BOUNDS 0x6174

typedef struct {
    int64_t off, len;
} amp_run_t;

static int amp_run_cmp(const void *a, const void *b)
{
    const amp_run_t *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* On the aggregator: round boundaries from the merged runs of its group. */
static int amp_dynseg_bounds(const amp_coll_call_t *c, amp_coll_work_t *w)
{
    size_t total = 0;
    for (int k = 0; k < w->nmembers; k++)
        total += w->mnruns ? w->mnruns[k] : 0;
    amp_run_t *all = amp_malloc((total + 1) * sizeof(*all));
    if (!all)
        return amp_err(MPI_ERR_NO_MEM, "out of memory sorting %zu runs", total);
    size_t n = 0;
    for (int k = 0; k < w->nmembers; k++)
        for (size_t i = 0; w->mruns && w->mruns[k] && i < w->mnruns[k]; i++)
            all[n++] = (amp_run_t){w->mruns[k][2 * i], w->mruns[k][2 * i + 1]};
    qsort(all, n, sizeof(*all), amp_run_cmp);
    size_t cap = 8;
    w->bounds = amp_malloc(cap * sizeof(MPI_Offset));
    if (!w->bounds) {
        free(all);
        return amp_err(MPI_ERR_NO_MEM, "out of memory planning rounds");
    }
    w->nrounds = 0;
    w->bounds[0] = n ? all[0].off : 0;
    MPI_Count acc = 0;
    MPI_Offset end = w->bounds[0];
    for (size_t i = 0; i < n; i++) {
        MPI_Offset off = all[i].off > end ? all[i].off : end; /* overlaps count once */
        MPI_Offset stop = all[i].off + all[i].len;
        while (off < stop) {
            MPI_Count take = stop - off < c->cb - acc ? stop - off : c->cb - acc;
            off += take;
            acc += take;
            if (acc == c->cb && (off < stop || i + 1 < n)) {
                if ((size_t)w->nrounds + 2 > cap) {
                    cap *= 2;
                    MPI_Offset *grown = amp_realloc(w->bounds, cap * sizeof(MPI_Offset));
                    if (!grown) {
                        free(all);
                        return amp_err(MPI_ERR_NO_MEM, "out of memory planning rounds");
                    }
                    w->bounds = grown;
                }
                w->bounds[++w->nrounds] = off;
                acc = 0;
            }
        }
        if (stop > end)
            end = stop;
    }
    if (n > 0) {
        if ((size_t)w->nrounds + 2 > cap) {
            MPI_Offset *grown = amp_realloc(w->bounds, (cap + 1) * sizeof(MPI_Offset));
            if (!grown) {
                free(all);
                return amp_err(MPI_ERR_NO_MEM, "out of memory planning rounds");
            }
            w->bounds = grown;
        }
        w->bounds[++w->nrounds] = end;
    }
    free(all);
    return MPI_SUCCESS;
}

/* A group whose data fit in the collective buffer has one round, from its lowest offset to its
 * highest. Every rank knows both from the call's allgather, so the aggregator need not send the
 * bounds: a round trip that small calls notice (4 KiB records at 4 ranks ran about 10% slower
 * with one aggregator than under two-phase). Returns 0 when the group needs more rounds. */
static int amp_dynseg_one_round(const amp_coll_call_t *c, amp_coll_work_t *w, int *rc)
{
    MPI_Count total = 0;
    MPI_Offset lo = 0, hi = 0;
    for (int k = 0; k < w->nmembers; k++) { /* members have data */
        const amp_coll_rank_t *m = &c->ranks[w->members[k]];
        lo = total == 0 || m->lo < lo ? m->lo : lo;
        hi = total == 0 || m->hi > hi ? m->hi : hi;
        total += m->bytes;
    }
    if (total > c->cb)
        return 0;
    w->bounds = amp_malloc(2 * sizeof(MPI_Offset));
    if (!w->bounds) {
        *rc = amp_err(MPI_ERR_NO_MEM, "out of memory planning rounds");
        return 1;
    }
    w->bounds[0] = lo;
    w->bounds[1] = hi;
    w->nrounds = total > 0;
    return 1;
}

int amp_coll_dynseg_rounds(const amp_coll_call_t *c, amp_coll_work_t *w)
{
    int rc = MPI_SUCCESS;
    if (amp_dynseg_one_round(c, w, &rc))
        return rc;
    return amp_dynseg_bounds(c, w);
}

static int amp_dynseg_plan(amp_coll_call_t *c, amp_coll_plan_t *p)
{
    int rc = amp_coll_groups(c, p), one = MPI_SUCCESS;
    if (rc == MPI_SUCCESS && p->nwork > 0 && amp_dynseg_one_round(c, &p->work[0], &one))
        rc = one; /* the bounds are known: no message carries them */
    return rc;
}

/* The runs, then the round bounds from the aggregator (every failure is kept until the
 * protocol has completed: nobody waits for a message that is not sent). */
static int amp_dynseg_exchange(amp_coll_call_t *c, amp_coll_plan_t *p)
{
    int rc = amp_coll_exchange_runs(c, p);
    if (p->nwork == 0)
        return rc;
    amp_coll_work_t *w = &p->work[0];
    if (w->bounds) /* one round, planned */
        return rc;
    int is_member = c->ranks[c->rank].bytes > 0;
    /* the aggregator tells its members where rounds end; its own copy is the plan */
    if (p->mine == 0) {
        int err = amp_dynseg_bounds(c, w);
        if (err != MPI_SUCCESS) {
            rc = err;
            free(w->bounds);
            w->bounds = NULL;
            w->nrounds = 0;
        }
        /* one send at a time when there is no room for requests: members all wait for it */
        MPI_Offset none = 0;
        MPI_Request one = MPI_REQUEST_NULL;
        MPI_Request *reqs = amp_malloc(((size_t)w->nmembers + 1) * sizeof(MPI_Request));
        if (!reqs)
            amp_coll_keep(&rc, amp_err(MPI_ERR_NO_MEM, "out of memory sending round bounds"));
        int nreq = 0;
        for (int k = 0; k < w->nmembers; k++) {
            if (w->members[k] == c->rank)
                continue;
            MPI_Request *req = reqs ? &reqs[nreq++] : &one;
            amp_coll_keep(&rc, PMPI_Isend(w->bounds ? w->bounds : &none,
                                          w->bounds ? w->nrounds + 1 : 0, MPI_OFFSET, w->members[k],
                                          AMP_DYNSEG_TAG_BOUNDS, c->comm, req));
            if (!reqs)
                amp_coll_keep(&rc, amp_task_wait(&one, MPI_STATUS_IGNORE));
        }
        if (reqs)
            amp_coll_keep(&rc, amp_task_waitall(nreq, reqs, MPI_STATUSES_IGNORE));
        free(reqs);
    } else if (is_member) {
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status st;
        int count = 0;
        amp_coll_keep(&rc, amp_task_mprobe(w->agg, AMP_DYNSEG_TAG_BOUNDS, c->comm, &msg, &st));
        if (msg == MPI_MESSAGE_NULL)
            return rc;
        amp_coll_keep(&rc, PMPI_Get_count(&st, MPI_OFFSET, &count));
        w->bounds = amp_malloc(((size_t)count + 1) * sizeof(MPI_Offset));
        if (!w->bounds) { /* taken off the line all the same: a later call must not find it */
            amp_coll_drop(&msg);
            w->nrounds = 0;
            return amp_coll_keep(&rc, amp_err(MPI_ERR_NO_MEM, "out of memory receiving round "
                                                              "bounds"));
        }
        amp_coll_keep(&rc, PMPI_Mrecv(w->bounds, count, MPI_OFFSET, &msg, MPI_STATUS_IGNORE));
        w->nrounds = count > 0 ? count - 1 : 0;
    }
    return rc;
}

const amp_fcoll_t amp_fcoll_dynamic_seg = {
    .name = "dynamic_seg",
    .plan = amp_dynseg_plan,
    .domains = amp_coll_groups,
    .exchange = amp_dynseg_exchange,
};
