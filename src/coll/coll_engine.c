/* The round engine shared by the aggregation algorithms.
 *
 * Before moving data, members send each aggregator the file runs of the data it will handle,
 * so that afterwards both sides compute every message size themselves: no size exchange per
 * round, no probing. In each round every rank first posts all its receives and sends of the
 * round, then waits; since nobody waits before posting, rounds cannot deadlock. Aggregators
 * receive each member's bytes packed and hand the file system one vectored call per
 * contiguous file region, pointing into the receive buffers: holes are never read-modify-
 * written and no aggregator touches bytes outside the runs it was given. */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "coll/coll_internal.h"
#include "core/err.h"
#include "core/fault.h"
#include "core/rangelock.h"
#include "core/task.h"
#include "core/worker.h"
#include "io/xfer.h"

#define AMP_COLL_TAG_RUNS 0x6172
#define AMP_COLL_TAG_DATA 0x6173

/* Largest message: MPI counts are int. */
#define AMP_COLL_MSG_MAX ((MPI_Count)1 << 30)

/* ---- member runs exchange ---- */

int amp_coll_runs_known(const amp_coll_call_t *c, int q)
{
    const amp_coll_rank_t *x = &c->ranks[q];
    return x->bytes > 0 && x->hi - x->lo == x->bytes &&
           amp_cfg_num(&c->f->cfg, AMP_CFG_CONTIGUOUS_DATA) != AMP_CFG_DISABLE;
}

/* First round of w whose range ends past `off` (round ends ascend). */
static int amp_coll_round_after(const amp_coll_work_t *w, MPI_Offset off)
{
    int lo = 0, hi = w->nrounds;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (w->bounds[mid + 1] > off)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The runs of contiguous member q inside the domain of w: its range [lo, hi) cut to the rounds
 * (or to the whole domain, or all of it when the rounds are cut later). */
static int amp_coll_known_runs(const amp_coll_call_t *c, const amp_coll_work_t *w, int q,
                               int64_t **out, size_t *nout)
{
    MPI_Offset lo = c->ranks[q].lo, hi = c->ranks[q].hi;
    size_t n = 0, cap = 1;
    int64_t *v = amp_malloc(2 * cap * sizeof(int64_t));
    if (!v)
        return amp_err(MPI_ERR_NO_MEM, "out of memory listing file runs");
    int first = 0, last = 1;
    if (w->starts)
        first = amp_coll_round_after(w, lo), last = w->nrounds;
    for (int r = first; r < last; r++) {
        MPI_Offset a = lo, b = hi;
        if (w->starts) {
            if (w->starts[r] >= hi)
                break;
            a = w->starts[r] > lo ? w->starts[r] : lo;
            b = w->bounds[r + 1] < hi ? w->bounds[r + 1] : hi;
        } else if (w->bounds) {
            a = w->bounds[0] > lo ? w->bounds[0] : lo;
            b = w->bounds[w->nrounds] < hi ? w->bounds[w->nrounds] : hi;
        }
        if (b <= a)
            continue;
        if (n > 0 && v[2 * n - 2] + v[2 * n - 1] == a) {
            v[2 * n - 1] += b - a;
            continue;
        }
        if (n == cap) {
            int64_t *grown = amp_realloc(v, 4 * cap * sizeof(int64_t));
            if (!grown) {
                free(v);
                return amp_err(MPI_ERR_NO_MEM, "out of memory listing file runs");
            }
            v = grown;
            cap *= 2;
        }
        v[2 * n] = a;
        v[2 * n + 1] = b - a;
        n++;
    }
    *out = v;
    *nout = n;
    return MPI_SUCCESS;
}

void amp_coll_drop(MPI_Message *msg)
{
    char none[1];
    PMPI_Mrecv(none, 0, MPI_BYTE, msg, MPI_STATUS_IGNORE);
}

int amp_coll_exchange_runs(amp_coll_call_t *c, amp_coll_plan_t *p)
{
    int rc = MPI_SUCCESS;
    /* without room for requests or lists, each list goes alone, and empty: the aggregators
     * wait for one list from each member whatever happens */
    MPI_Request one = MPI_REQUEST_NULL;
    MPI_Request *reqs = amp_calloc((size_t)p->nwork + 1, sizeof(MPI_Request));
    int64_t **mine = amp_calloc((size_t)p->nwork + 1, sizeof(int64_t *));
    if (!reqs || !mine)
        amp_coll_keep(&rc, amp_err(MPI_ERR_NO_MEM, "out of memory exchanging file runs"));
    int nreq = 0;
    for (int i = 0; i < p->nwork; i++) {
        amp_coll_work_t *w = &p->work[i];
        if (!w->member || amp_coll_runs_known(c, c->rank))
            continue;
        size_t n = w->nruns;
        int64_t *list = w->runs;
        if (!w->dealt) {
            list = NULL;
            int err = mine ? amp_coll_runs(c, w->s_lo, w->s_hi, &list, &n) : rc;
            if (mine)
                mine[i] = list;
            amp_coll_keep(&rc, err);
        }
        if (rc != MPI_SUCCESS) /* an empty list: the aggregator expects one */
            n = 0;
        MPI_Request *req = reqs ? &reqs[nreq++] : &one;
        amp_coll_keep(&rc, PMPI_Isend(n ? list : (void *)&one, (int)(2 * n), MPI_INT64_T, w->agg,
                                      AMP_COLL_TAG_RUNS, c->comm, req));
        if (!reqs)
            amp_coll_keep(&rc, amp_task_wait(&one, MPI_STATUS_IGNORE));
    }
    if (p->mine >= 0) {
        amp_coll_work_t *w = &p->work[p->mine];
        w->mruns = amp_calloc((size_t)w->nmembers + 1, sizeof(int64_t *));
        w->mnruns = amp_calloc((size_t)w->nmembers + 1, sizeof(size_t));
        for (int k = 0; k < w->nmembers; k++) {
            if (amp_coll_runs_known(c, w->members[k])) {
                int err =
                    w->mruns && w->mnruns
                        ? amp_coll_known_runs(c, w, w->members[k], &w->mruns[k], &w->mnruns[k])
                        : amp_err(MPI_ERR_NO_MEM, "out of memory receiving file runs");
                amp_coll_keep(&rc, err);
                continue;
            }
            MPI_Message msg = MPI_MESSAGE_NULL;
            MPI_Status st;
            int count = 0;
            amp_coll_keep(&rc,
                          amp_task_mprobe(w->members[k], AMP_COLL_TAG_RUNS, c->comm, &msg, &st));
            if (msg == MPI_MESSAGE_NULL)
                continue;
            amp_coll_keep(&rc, PMPI_Get_count(&st, MPI_INT64_T, &count));
            int64_t *runs = amp_malloc((size_t)count * sizeof(int64_t) + sizeof(int64_t));
            if (!runs || !w->mruns || !w->mnruns) {
                amp_coll_drop(&msg); /* the member is not left waiting */
                free(runs);
                amp_coll_keep(&rc, amp_err(MPI_ERR_NO_MEM, "out of memory receiving file runs"));
                continue;
            }
            amp_coll_keep(&rc, PMPI_Mrecv(runs, count, MPI_INT64_T, &msg, MPI_STATUS_IGNORE));
            w->mruns[k] = runs;
            w->mnruns[k] = (size_t)count / 2;
        }
    }
    if (reqs)
        amp_coll_keep(&rc, amp_task_waitall(nreq, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; mine && i < p->nwork; i++)
        free(mine[i]);
    free(mine);
    free(reqs);
    return rc;
}

void amp_coll_plan_free(amp_coll_plan_t *p)
{
    for (int i = 0; i < p->nwork; i++) {
        amp_coll_work_t *w = &p->work[i];
        if (w->mruns)
            for (int k = 0; k < w->nmembers; k++)
                free(w->mruns[k]);
        free(w->mruns);
        free(w->mnruns);
        free(w->members);
        free(w->bounds);
        free(w->starts);
        free(w->runs);
    }
    free(p->work);
    p->work = NULL;
    p->nwork = 0;
}

/* ---- cursors: where the next round starts ---- */

/* On the aggregator: position in a member's run list. */
typedef struct {
    size_t run;
    MPI_Count used;
} amp_run_cursor_t;

/* One piece of a round on the aggregator: file offset, buffer, length. */
typedef struct {
    MPI_Offset off;
    char *buf;
    MPI_Count len;
} amp_piece_t;

typedef struct {
    amp_piece_t *v;
    size_t n, cap;
} amp_pieces_t;

static int amp_pieces_push(amp_pieces_t *ps, MPI_Offset off, char *buf, MPI_Count len)
{
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? 2 * ps->cap : 64;
        amp_piece_t *v = amp_realloc(ps->v, cap * sizeof(*v));
        if (!v)
            return amp_err(MPI_ERR_NO_MEM, "out of memory planning a round");
        ps->v = v;
        ps->cap = cap;
    }
    ps->v[ps->n++] = (amp_piece_t){off, buf, len};
    return MPI_SUCCESS;
}

/* Bytes of member k in round r, advancing its cursor; with `ps`, also its pieces placed from
 * `buf` on. */
static MPI_Count amp_round_take(const amp_coll_work_t *w, int k, int r, amp_run_cursor_t *cur,
                                amp_pieces_t *ps, char *buf, int *rc)
{
    const int64_t *runs = w->mruns ? w->mruns[k] : NULL;
    size_t n = w->mnruns ? w->mnruns[k] : 0;
    MPI_Count taken = 0, budget = w->bounds ? -1 : w->quantum;
    MPI_Offset end = w->bounds ? w->bounds[r + 1] : 0;
    while (cur->run < n) {
        MPI_Offset off = runs[2 * cur->run] + cur->used;
        MPI_Count left = runs[2 * cur->run + 1] - cur->used;
        MPI_Count len = left;
        if (w->bounds) {
            if (off >= end)
                break;
            if (off + len > end)
                len = end - off;
        } else {
            if (taken == budget)
                break;
            if (len > budget - taken)
                len = budget - taken;
        }
        if (ps && *rc == MPI_SUCCESS)
            *rc = amp_pieces_push(ps, off, buf + taken, len);
        taken += len;
        cur->used += len;
        if (cur->used == runs[2 * cur->run + 1]) {
            cur->run++;
            cur->used = 0;
        }
    }
    return taken;
}

/* On a member: its data range for work w in round r, from cursor *s. */
static void amp_round_member(const amp_coll_call_t *c, const amp_coll_work_t *w, int r,
                             MPI_Count *s, MPI_Count *lo, MPI_Count *hi)
{
    *lo = *s;
    if (w->bounds) {
        if (w->starts) { /* rounds with gaps between them: skip the data of other domains */
            MPI_Count b = amp_coll_bytes_before(c, w->starts[r]);
            *lo = b > *lo ? b : *lo;
            *lo = *lo < w->s_hi ? *lo : w->s_hi;
        }
        MPI_Count e = amp_coll_bytes_before(c, w->bounds[r + 1]);
        *hi = e < *lo ? *lo : e > w->s_hi ? w->s_hi : e;
    } else {
        *hi = *lo + w->quantum < w->s_hi ? *lo + w->quantum : w->s_hi;
    }
    *s = *hi;
}

static int amp_piece_cmp(const void *a, const void *b)
{
    const amp_piece_t *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* One round's file access, a job for ampio's I/O threads inside a task (POSIX calls only). */
typedef struct {
    amp_fs_t *fs;
    amp_rangelock_t *ranges; /* the file's ranges in use by this process's accesses */
    amp_pieces_t *ps;
    int write;
    int lock;      /* writes lock their range (amp_xfer_writes_lock) */
    char *sieve;   /* ds_in_coll: a buffer for the pieces' whole range, or NULL */
    int64_t bytes; /* moved */
    double seconds;
} amp_round_job_t;

static double amp_round_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The sorted pieces' whole range [*lo, *hi); whether there are holes between them. */
static int amp_round_span(const amp_pieces_t *ps, MPI_Offset *lo, MPI_Offset *hi)
{
    int holes = 0;
    *lo = *hi = ps->v[0].off;
    for (size_t i = 0; i < ps->n; i++) {
        holes |= ps->v[i].off > *hi;
        *hi = ps->v[i].off + ps->v[i].len > *hi ? ps->v[i].off + ps->v[i].len : *hi;
    }
    return holes;
}

/* ds_in_coll: sorted pieces with holes between them become one write of their whole range
 * [lo, hi), read first and patched with the pieces (read-modify-write); the caller holds an
 * exclusive lock of the range, so that no sieving writer elsewhere interleaves. No other
 * aggregator touches the range in this call: every algorithm gives each byte of the file to
 * one aggregator. */
static int amp_round_sieve(amp_round_job_t *job, MPI_Offset lo, MPI_Offset hi)
{
    const amp_pieces_t *ps = job->ps;
    size_t got = 0;
    struct iovec whole = {job->sieve, (size_t)(hi - lo)};
    int rc = amp_fs_readv(job->fs, &whole, 1, lo, &got);
    if (rc == MPI_SUCCESS) {
        memset(job->sieve + got, 0, (size_t)(hi - lo) - got); /* past the end of file */
        for (size_t i = 0; i < ps->n; i++)
            memcpy(job->sieve + (ps->v[i].off - lo), ps->v[i].buf, (size_t)ps->v[i].len);
        rc = amp_fs_writev(job->fs, &whole, 1, lo);
        job->bytes += hi - lo;
    }
    return rc;
}

/* Hands sorted pieces to the file system, one vectored call per contiguous region. Reads past
 * the end of file leave zeros. */
static int amp_round_pieces(amp_round_job_t *job);

/* A round's file access. Writes lock their whole range, in this process (against its own
 * pending independent accesses) and in the file system, where they sieve (ds_in_coll) or where
 * another rank may sieve a write (amp_xfer_writes_lock): a pending independent sieved write of
 * another rank, whose window spans this round's bytes, would otherwise put them back as they
 * were (random views under Open MPI lost a collective's bytes beside a pending iwrite_at). */
static int amp_round_io(void *arg)
{
    amp_round_job_t *job = arg;
    amp_pieces_t *ps = job->ps;
    qsort(ps->v, ps->n, sizeof(amp_piece_t), amp_piece_cmp);
    if (!job->write || ps->n == 0)
        return amp_round_pieces(job);
    MPI_Offset lo, hi;
    int holes = amp_round_span(ps, &lo, &hi);
    int sieve = job->sieve && holes && ps->n > 1;
    if (!sieve && !job->lock)
        return amp_round_pieces(job);
    double ts = amp_round_clock();
    amp_range_t mine;
    amp_rangelock_acquire(job->ranges, &mine, lo, hi);
    int locked = 0, rc = amp_fs_lock(job->fs, 1, lo, hi - lo, &locked);
    if (rc == MPI_SUCCESS && sieve) {
        rc = amp_round_sieve(job, lo, hi);
        job->seconds = amp_round_clock() - ts;
        amp_worker_count(job->bytes);
    } else if (rc == MPI_SUCCESS) {
        rc = amp_round_pieces(job);
    }
    if (locked)
        amp_fs_unlock(job->fs, lo, hi - lo);
    amp_rangelock_release(job->ranges, &mine);
    return rc;
}

/* The pieces, sorted, in one system call per contiguous run of them. */
static int amp_round_pieces(amp_round_job_t *job)
{
    amp_pieces_t *ps = job->ps;
    double t0 = amp_round_clock();
    int rc = MPI_SUCCESS;
    struct iovec *iov = amp_malloc((ps->n + 1) * sizeof(*iov));
    if (!iov)
        return amp_err(MPI_ERR_NO_MEM, "out of memory for %zu pieces", ps->n);
    for (size_t i = 0; i < ps->n && rc == MPI_SUCCESS;) {
        size_t j = i;
        size_t want = 0;
        do {
            iov[j - i].iov_base = ps->v[j].buf;
            iov[j - i].iov_len = (size_t)ps->v[j].len;
            want += (size_t)ps->v[j].len;
            j++;
        } while (j < ps->n && ps->v[j - 1].off + ps->v[j - 1].len == ps->v[j].off);
        if (job->write) {
            rc = amp_fs_writev(job->fs, iov, (int)(j - i), ps->v[i].off);
        } else {
            size_t got = 0;
            rc = amp_fs_readv(job->fs, iov, (int)(j - i), ps->v[i].off, &got);
            for (size_t k = i; k < j && got < want; k++) { /* past the end: zeros */
                MPI_Offset start = ps->v[k].off - ps->v[i].off;
                MPI_Offset stop = start + ps->v[k].len;
                if ((MPI_Offset)got < stop) {
                    MPI_Offset from = (MPI_Offset)got > start ? (MPI_Offset)got : start;
                    memset(ps->v[k].buf + (from - start), 0, (size_t)(stop - from));
                }
            }
        }
        job->bytes += (int64_t)want;
        i = j;
    }
    free(iov);
    job->seconds = amp_round_clock() - t0;
    amp_worker_count(job->bytes);
    return rc;
}

/* ---- the rounds ----
 *
 * Pipelined (hint ampio_pipeline, on by default): the aggregator keeps two round buffers, so
 * that file access of one round overlaps the messages of the next. Writing, round r's data
 * arrive in one buffer while round r - 1's are written from the other; reading, round r + 1 is
 * read into one buffer while round r's are sent from the other. Only one round's messages are
 * in flight at a time, so members reuse their pack buffers as before. */

typedef struct {
    amp_coll_call_t *c;
    amp_coll_plan_t *p;
    amp_coll_work_t *w; /* this rank's work as an aggregator, or NULL */
    int write;
    int rounds;
    MPI_Count *mcur;        /* member cursor per work */
    amp_run_cursor_t *acur; /* aggregator cursor per member of its work */
    char *abuf[2];          /* aggregator round buffers (kept on the file) */
    MPI_Count *sizes[2];    /* bytes of each member in the buffer's round */
    MPI_Count total[2];     /* bytes in the buffer's round; -1 when it could not be planned */
    amp_pieces_t ps[2];     /* the buffer's file pieces */
    char *mpack;            /* member's packed data of the round (kept on the file) */
    MPI_Count *moff;        /* where each work's data lie in mpack, or -1: sent in place */
    MPI_Count *lo, *hi;     /* member ranges of the current round per work */
    MPI_Count limit;        /* reads: bytes of the call before the end of file */
    MPI_Request *reqs;
    int nreq, req_cap;
    amp_worker_job_t io;    /* the aggregator's file access in flight */
    amp_round_job_t io_arg; /* what it does */
    int io_busy;
    int self_skip; /* this round's transfer between the rank and itself is left out */
    int rc;        /* first local failure */
} amp_engine_t;

static void amp_engine_fail(amp_engine_t *e, int rc)
{
    if (e->rc == MPI_SUCCESS && rc != MPI_SUCCESS)
        e->rc = rc;
}

static int amp_engine_init(amp_engine_t *e, amp_coll_call_t *c, amp_coll_plan_t *p, int write)
{
    memset(e, 0, sizeof(*e));
    e->c = c;
    e->p = p;
    e->write = write;
    e->w = p->mine >= 0 ? &p->work[p->mine] : NULL;
    for (int i = 0; i < p->nwork; i++)
        if (p->work[i].nrounds > e->rounds)
            e->rounds = p->work[i].nrounds;
    int nm = e->w ? e->w->nmembers : 0;
    e->req_cap = p->nwork + nm + 1;
    e->mcur = amp_calloc((size_t)p->nwork + 1, sizeof(MPI_Count));
    e->acur = amp_calloc((size_t)nm + 1, sizeof(amp_run_cursor_t));
    e->moff = amp_calloc((size_t)p->nwork + 1, sizeof(MPI_Count));
    e->lo = amp_calloc((size_t)p->nwork + 1, sizeof(MPI_Count));
    e->hi = amp_calloc((size_t)p->nwork + 1, sizeof(MPI_Count));
    e->reqs = amp_malloc((size_t)e->req_cap * sizeof(MPI_Request));
    for (int b = 0; b < 2; b++)
        e->sizes[b] = amp_calloc((size_t)nm + 1, sizeof(MPI_Count));
    if (!e->mcur || !e->acur || !e->moff || !e->lo || !e->hi || !e->reqs || !e->sizes[0] ||
        !e->sizes[1])
        return amp_err(MPI_ERR_NO_MEM, "out of memory for a collective access");
    for (int i = 0; i < p->nwork; i++)
        e->mcur[i] = p->work[i].s_lo;
    e->limit = c->io->nbytes;
    if (!write) {
        MPI_Count before = amp_coll_bytes_before(c, c->file_size);
        e->limit = before < e->limit ? before : e->limit;
    }
    return MPI_SUCCESS;
}

static void amp_engine_free(amp_engine_t *e)
{
    free(e->moff);
    free(e->mcur);
    free(e->acur);
    free(e->lo);
    free(e->hi);
    for (int b = 0; b < 2; b++) {
        free(e->sizes[b]);
        free(e->ps[b].v);
    }
    free(e->reqs);
    if (e->c)
        amp_coll_scratch_trim(e->c->f);
}

/* Posts a transfer of `len` bytes, in pieces of at most 1 GiB. Without a buffer (`buf` NULL:
 * this side failed) the same pieces carry nothing, so that the peer's transfers still match:
 * an empty send ends the peer's receive early, an empty receive consumes the peer's message
 * (a truncation, expected after the failure already kept). Between a rank and itself the
 * transfer is left out instead (self_skip): Open MPI's self transport copies the whole message
 * into an empty receive's buffer. */
static void amp_engine_post(amp_engine_t *e, int send, char *buf, MPI_Count len, int peer)
{
    static char none[1];
    for (MPI_Count done = 0; done < len;) {
        MPI_Count n = len - done < AMP_COLL_MSG_MAX ? len - done : AMP_COLL_MSG_MAX;
        if (e->nreq == e->req_cap) {
            int cap = 2 * e->req_cap;
            MPI_Request *grown = amp_realloc(e->reqs, (size_t)cap * sizeof(MPI_Request));
            if (!grown) { /* cannot post: wait for what is out, then go on */
                amp_engine_fail(e, amp_task_waitall(e->nreq, e->reqs, MPI_STATUSES_IGNORE));
                e->nreq = 0;
            } else {
                e->reqs = grown;
                e->req_cap = cap;
            }
        }
        char *at = buf ? buf + done : none;
        int count = buf ? (int)n : 0;
        if (send)
            amp_engine_fail(e, PMPI_Isend(at, count, MPI_BYTE, peer, AMP_COLL_TAG_DATA, e->c->comm,
                                          &e->reqs[e->nreq++]));
        else
            amp_engine_fail(e, PMPI_Irecv(at, count, MPI_BYTE, peer, AMP_COLL_TAG_DATA, e->c->comm,
                                          &e->reqs[e->nreq++]));
        done += n;
    }
}

/* The aggregator plans round r into buffer b: every member's size and file pieces. */
static void amp_engine_agg_plan(amp_engine_t *e, int r, int b)
{
    amp_coll_work_t *w = e->w;
    e->ps[b].n = 0;
    e->total[b] = 0;
    if (!w || r >= w->nrounds) { /* nothing to move in this round */
        if (w)
            memset(e->sizes[b], 0, (size_t)w->nmembers * sizeof(MPI_Count));
        return;
    }
    amp_run_cursor_t probe[1];
    MPI_Count total = 0;
    /* sizes first, with copies of the cursors, then pieces into the buffer */
    for (int k = 0; k < w->nmembers; k++) {
        probe[0] = e->acur[k];
        int rc = MPI_SUCCESS;
        e->sizes[b][k] = amp_round_take(w, k, r, probe, NULL, NULL, &rc);
        total += e->sizes[b][k];
    }
    e->abuf[b] = amp_coll_scratch(e->c->f, b ? AMP_COLL_SCRATCH_ROUND1 : AMP_COLL_SCRATCH_ROUND0,
                                  total > 0 ? total : 1);
    if (!e->abuf[b]) {
        amp_engine_fail(
            e, amp_err(MPI_ERR_NO_MEM, "out of memory for a %lld-byte round", (long long)total));
        e->total[b] = -1;
        /* the cursors still pass this round, so that later rounds keep the members' sizes: a
         * size out of step posts a message too few or too many, and a peer waits for ever */
        for (int k = 0; k < w->nmembers; k++) {
            int rc = MPI_SUCCESS;
            amp_round_take(w, k, r, &e->acur[k], NULL, NULL, &rc);
        }
        return;
    }
    MPI_Count at = 0;
    for (int k = 0; k < w->nmembers; k++) {
        int rc = MPI_SUCCESS;
        amp_round_take(w, k, r, &e->acur[k], &e->ps[b], e->abuf[b] + at, &rc);
        amp_engine_fail(e, rc);
        at += e->sizes[b][k];
    }
    e->total[b] = total;
}

/* ds_in_coll, where the file system's locked reads see other clients' writes: a buffer for the
 * whole range of buffer b's pieces (made here: the file access may run on an I/O thread). */
static void amp_engine_sieve_buffer(amp_engine_t *e, int b)
{
    amp_coll_call_t *c = e->c;
    const amp_pieces_t *ps = &e->ps[b];
    if (!e->write || ps->n < 2 || !c->f->readable || !(c->layout->caps & AMP_FS_LOCKED_RMW) ||
        !amp_cfg_num(&c->f->cfg, AMP_CFG_DS_IN_COLL))
        return;
    MPI_Offset lo = ps->v[0].off, hi = lo;
    for (size_t i = 0; i < ps->n; i++) {
        lo = ps->v[i].off < lo ? ps->v[i].off : lo;
        hi = ps->v[i].off + ps->v[i].len > hi ? ps->v[i].off + ps->v[i].len : hi;
    }
    /* without a buffer the pieces are written one by one */
    e->io_arg.sieve = amp_coll_scratch(c->f, AMP_COLL_SCRATCH_SIEVE, hi - lo);
}

/* The aggregator's file access for buffer b, unless something failed already: started here,
 * ended by amp_engine_io_end. Inside a task it runs on an I/O thread while the round's
 * messages travel; outside one it runs at once, before the messages are waited for. */
static void amp_engine_io_begin(amp_engine_t *e, int b)
{
    e->io_busy = e->total[b] > 0 && e->rc == MPI_SUCCESS;
    if (!e->io_busy)
        return;
    amp_file_t *f = e->c->f;
    e->io_arg = (amp_round_job_t){.fs = &f->fs,
                                  .ranges = &f->io_ranges,
                                  .ps = &e->ps[b],
                                  .write = e->write,
                                  .lock = e->write && amp_xfer_writes_lock(f)};
    amp_engine_sieve_buffer(e, b);
    amp_worker_begin(&e->io, amp_round_io, &e->io_arg);
}

static void amp_engine_io_end(amp_engine_t *e)
{
    if (!e->io_busy)
        return;
    e->io_busy = 0;
    amp_engine_fail(e, amp_worker_end(&e->io));
    e->c->count.bytes_io += e->io_arg.bytes;
    e->c->count.t_io += e->io_arg.seconds;
}

static void amp_engine_agg_io(amp_engine_t *e, int b)
{
    amp_engine_io_begin(e, b);
    amp_engine_io_end(e);
}

/* The aggregator's messages of buffer b: receives (writing) or sends (reading). */
static void amp_engine_agg_post(amp_engine_t *e, int b)
{
    MPI_Count at = 0;
    for (int k = 0; e->w && k < e->w->nmembers; k++) {
        if (e->self_skip && e->w->members[k] == e->c->rank) {
            at += e->sizes[b][k];
            continue;
        }
        if (e->sizes[b][k] > 0) /* without a round buffer (total -1): empty transfers */
            amp_engine_post(e, !e->write, e->total[b] < 0 ? NULL : e->abuf[b] + at, e->sizes[b][k],
                            e->w->members[k]);
        at += e->sizes[b][k];
    }
}

/* Whether a member's data [lo, hi) of work i go through its pack buffer: memory is not
 * contiguous, or (reads) user memory past the end of file must not be written. */
static int amp_engine_packs(const amp_engine_t *e, int i)
{
    return amp_coll_direct(e->c, e->lo[i]) == NULL || (!e->write && e->hi[i] > e->limit);
}

/* A member's messages of round r to every aggregator it feeds. */
/* Posts the member's transfers of round r, before the aggregator's (agg_post) of buffer b:
 * where either side of the rank's transfer with itself lacks its buffer, neither is posted. */
static void amp_engine_member_post(amp_engine_t *e, int r, int b)
{
    amp_coll_call_t *c = e->c;
    amp_coll_plan_t *p = e->p;
    MPI_Count packed = 0;
    for (int i = 0; i < p->nwork; i++) {
        e->lo[i] = e->hi[i] = 0;
        e->moff[i] = -1;
        if (r < p->work[i].nrounds && p->work[i].member)
            amp_round_member(c, &p->work[i], r, &e->mcur[i], &e->lo[i], &e->hi[i]);
        if (e->hi[i] > e->lo[i] && amp_engine_packs(e, i)) {
            e->moff[i] = packed;
            packed += e->hi[i] - e->lo[i];
        }
    }
    e->mpack = packed > 0 ? amp_coll_scratch(c->f, AMP_COLL_SCRATCH_PACK, packed) : NULL;
    if (packed > 0 && !e->mpack) /* the aggregators wait all the same: empty transfers */
        amp_engine_fail(
            e, amp_err(MPI_ERR_NO_MEM, "out of memory packing %lld bytes", (long long)packed));
    for (int i = 0; i < p->nwork; i++) {
        MPI_Count n = e->hi[i] - e->lo[i];
        if (n <= 0)
            continue;
        char *mem = e->moff[i] < 0 ? amp_coll_direct(c, e->lo[i])
                    : e->mpack     ? e->mpack + e->moff[i]
                                   : NULL;
        if (p->work[i].agg == c->rank && (!mem || e->total[b] < 0)) {
            e->self_skip = 1;
            continue;
        }
        if (mem && e->moff[i] >= 0 && e->write)
            amp_coll_pack(c, e->lo[i], e->hi[i], mem);
        amp_engine_post(e, e->write, mem, n, p->work[i].agg);
    }
}

/* Reading: a member copies what arrived in its pack buffer to user memory. */
static void amp_engine_member_unpack(amp_engine_t *e)
{
    amp_coll_call_t *c = e->c;
    for (int i = 0; i < e->p->nwork; i++) {
        MPI_Count end = e->hi[i] < e->limit ? e->hi[i] : e->limit;
        if (e->moff[i] >= 0 && e->mpack && end > e->lo[i])
            amp_coll_unpack(c, e->lo[i], end, e->mpack + e->moff[i]);
    }
}

/* The buffers of the largest round, the aggregator's and the member's, made before the agreement
 * that precedes any data message: once messages flow, a missing buffer can only be stood in for
 * by an empty transfer, and an empty receive is a truncation, which MPICH's MPI_Waitall reports
 * to MPI_COMM_WORLD's error handler (fatal unless the application changed it). The rounds are
 * walked once more without data; the buffers stay on the file for the next call. */
static int amp_engine_reserve(amp_engine_t *e, int pipeline)
{
    amp_coll_call_t *c = e->c;
    amp_coll_plan_t *p = e->p;
    const amp_coll_work_t *w = e->w;
    MPI_Count agg = 0, pack = 0;
    for (int r = 0; w && r < w->nrounds; r++) {
        MPI_Count total = 0;
        for (int k = 0; k < w->nmembers; k++) {
            int rc = MPI_SUCCESS;
            total += amp_round_take(w, k, r, &e->acur[k], NULL, NULL, &rc);
        }
        agg = total > agg ? total : agg;
    }
    if (w)
        memset(e->acur, 0, (size_t)w->nmembers * sizeof(*e->acur));
    for (int r = 0; r < e->rounds; r++) {
        MPI_Count packed = 0;
        for (int i = 0; i < p->nwork; i++) {
            MPI_Count lo = 0, hi = 0;
            if (r < p->work[i].nrounds && p->work[i].member)
                amp_round_member(c, &p->work[i], r, &e->mcur[i], &lo, &hi);
            if (hi > lo && amp_engine_packs(e, i))
                packed += hi - lo;
        }
        pack = packed > pack ? packed : pack;
    }
    for (int i = 0; i < p->nwork; i++)
        e->mcur[i] = p->work[i].s_lo;
    if (w && (!amp_coll_scratch(c->f, AMP_COLL_SCRATCH_ROUND0, agg > 0 ? agg : 1) ||
              (pipeline && !amp_coll_scratch(c->f, AMP_COLL_SCRATCH_ROUND1, agg > 0 ? agg : 1))))
        return amp_err(MPI_ERR_NO_MEM, "out of memory for %lld-byte rounds", (long long)agg);
    if (pack > 0 && !amp_coll_scratch(c->f, AMP_COLL_SCRATCH_PACK, pack))
        return amp_err(MPI_ERR_NO_MEM, "out of memory packing %lld bytes", (long long)pack);
    return MPI_SUCCESS;
}

static int amp_engine_run(amp_coll_call_t *c, amp_coll_plan_t *p, int write, int ready)
{
    amp_engine_t e;
    int pipeline = amp_cfg_num(&c->f->cfg, AMP_CFG_AMPIO_PIPELINE) != 0;
    int rc = amp_engine_init(&e, c, p, write);
    if (rc == MPI_SUCCESS)
        rc = ready;
    if (rc == MPI_SUCCESS)
        rc = amp_engine_reserve(&e, pipeline);
    /* before any data message, every rank learns whether all can go on: a member's runs that
     * did not reach its aggregator, or a rank without the engine's arrays, would leave
     * transfers unmatched. A rank that was ready returns success when another was not: the
     * agreement on the call's errors gives it the other's error. */
    int ok = rc == MPI_SUCCESS, all = 0;
    int arc = amp_task_agree_allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, c->comm);
    if (rc == MPI_SUCCESS)
        rc = arc;
    if (!all || rc != MPI_SUCCESS) {
        amp_engine_free(&e);
        return rc;
    }
    if (!write) /* the first round is read before any message */
        amp_engine_agg_plan(&e, 0, 0), amp_engine_agg_io(&e, 0);
    for (int r = 0; r < e.rounds; r++) {
        int b = pipeline ? r % 2 : 0, next = pipeline ? 1 - b : 0;
        e.nreq = 0;
        e.self_skip = 0;
        if (write)
            amp_engine_agg_plan(&e, r, b);
        amp_engine_member_post(&e, r, b);
        amp_engine_agg_post(&e, b);
        /* while the messages travel: write the previous round, or read the next one */
        if (write && pipeline)
            amp_engine_io_begin(&e, next);
        if (!write && pipeline && r + 1 < e.rounds)
            amp_engine_agg_plan(&e, r + 1, next), amp_engine_io_begin(&e, next);
        amp_engine_fail(&e, amp_task_waitall(e.nreq, e.reqs, MPI_STATUSES_IGNORE));
        amp_engine_io_end(&e);
        if (write && !pipeline)
            amp_engine_agg_io(&e, b);
        if (!write) {
            amp_engine_member_unpack(&e);
            if (!pipeline && r + 1 < e.rounds)
                amp_engine_agg_plan(&e, r + 1, 0), amp_engine_agg_io(&e, 0);
        }
        c->count.rounds++;
    }
    if (write && pipeline && e.rounds > 0) /* the last round */
        amp_engine_agg_io(&e, (e.rounds - 1) % 2);
    rc = e.rc;
    amp_engine_free(&e);
    return rc;
}

int amp_coll_engine_write(amp_coll_call_t *c, amp_coll_plan_t *p, int ready)
{
    return amp_engine_run(c, p, 1, ready);
}

int amp_coll_engine_read(amp_coll_call_t *c, amp_coll_plan_t *p, int ready)
{
    return amp_engine_run(c, p, 0, ready);
}
