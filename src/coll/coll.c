/* Collective access: what every rank learns about the call (one allgather), the choice of
 * algorithm and aggregators, and the bookkeeping behind AMPIO_STATS, AMPIO_EXPLAIN and
 * MPI_File_get_info. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coll/coll_internal.h"
#include "coll/stripe_map.h"
#include "core/agree.h"
#include "core/err.h"
#include "core/fault.h"
#include "core/nodes.h"
#include "core/task.h"
#include "core/worker.h"
#include "io/view.h"
#include "io/xfer.h"

/* Round size of pipelined collective access when the file has no striping unit. */
#define AMP_COLL_SUB_BUFFER ((MPI_Offset)1 << 20)

/* Largest write system call on a node with more of the file's ranks than cores. IOR segmented
 * at 8 ranks on 2 cores (2 MiB writes): median 2035 MB/s whole, 2516 / 2772 / 2648 in calls
 * of 128 / 256 / 512 KiB; at 4 ranks 2642 against 2852; at 2 ranks (no core shared) 3368
 * against 3178, so the limit applies only where cores are shared. */
#define AMP_COLL_SHARED_CORE_WRITE ((size_t)256 << 10)

static const char *amp_fcoll_names[AMP_FCOLL_COUNT] = {"auto",        "individual", "two_phase",
                                                       "dynamic_seg", "static_seg", "stripe"};

static const amp_fcoll_t *amp_fcoll_table[AMP_FCOLL_COUNT] = {
    [AMP_FCOLL_TWO_PHASE] = &amp_fcoll_two_phase,
    [AMP_FCOLL_DYNAMIC_SEG] = &amp_fcoll_dynamic_seg,
    [AMP_FCOLL_STATIC_SEG] = &amp_fcoll_static_seg,
    [AMP_FCOLL_STRIPE] = &amp_fcoll_stripe,
};

typedef struct {
    int64_t calls, bytes, rounds, aggregators, bytes_io;
    double t_total, t_io;
} amp_coll_stat_t;

/* How a collective call starts. */
typedef enum {
    AMP_COLL_START_DESCRIBE, /* every rank describes its part, then the choice is made */
    AMP_COLL_START_OWNERS,   /* the owners made the last call: contiguous parts first */
    AMP_COLL_START_LARGE,    /* no read yet: contiguous parts of a cycle buffer or more first */
} amp_coll_start_t;

struct amp_coll_state {
    int *node; /* node index of every rank */
    int nnodes;
    int shares_cores; /* this rank's node runs more of the file's ranks than it has cores */
    int last_fcoll;   /* the last collective call: algorithm and aggregators */
    int last_naggr;
    int *last_aggr;
    amp_coll_auto_t *autosel; /* the automatic choice of aggregators */
    amp_coll_rank_t *ranks;   /* per call: what every rank accesses (nprocs entries) */
    int *aggr;                /* per call: the aggregators (nprocs entries) */
    amp_coll_stat_t stats[2][AMP_FCOLL_COUNT]; /* [write][algorithm] */
    int start[2]; /* [write]: how the next call of that direction starts (amp_coll_start_t) */
    char *scratch[AMP_COLL_SCRATCH_COUNT]; /* the round engine's buffers, kept */
    MPI_Count scratch_cap[AMP_COLL_SCRATCH_COUNT];
};

MPI_Offset amp_coll_cycle_buffer(const amp_cfg_t *cfg, const amp_fs_layout_t *layout)
{
    MPI_Offset set = amp_cfg_num(cfg, AMP_CFG_CB_BUFFER_SIZE);
    if (set > 0)
        return set;
    /* k, the least a process needs to write to saturate its path to storage, in whole stripes;
     * a stripe larger than k is cut (rounds then cover parts of one stripe) */
    MPI_Offset k = amp_cfg_num(cfg, AMP_CFG_AMPIO_SATURATION_K), unit = layout->unit;
    if (unit <= 0 || unit > k)
        return k;
    return (k + unit - 1) / unit * unit;
}

/* ---- per file state ---- */

/* Notes whether this rank's node runs more of the file's ranks than it has cores, once the node
 * layout is known. */
static void amp_coll_note_cores(const amp_file_t *f, struct amp_coll_state *s)
{
    int here = 0;
    for (int r = 0; r < f->nprocs; r++)
        here += s->node[r] == s->node[f->rank];
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    s->shares_cores = cores > 0 && here > cores;
}

/* Writes are cut short where this rank's node runs more of the file's ranks than it has cores
 * (amp_fs_writev says why), unless the hint set the size. */
static void amp_coll_write_chunk(amp_file_t *f, const struct amp_coll_state *s)
{
    if (amp_cfg_num(&f->cfg, AMP_CFG_AMPIO_WRITE_CHUNK) > 0)
        return;
    size_t chunk = s->shares_cores ? AMP_COLL_SHARED_CORE_WRITE : 0;
    __atomic_store_n(&f->fs.max_write, chunk, __ATOMIC_RELAXED); /* see amp_fs_transfer */
}

int amp_coll_file_prepare(amp_file_t *f, int *known, int *crowded)
{
    *known = *crowded = 0;
    struct amp_coll_state *s = amp_calloc(1, sizeof(*s));
    f->coll = s;
    if (!s)
        return amp_err(MPI_ERR_NO_MEM, "out of memory for collective state");
    s->last_fcoll = -1;
    s->start[0] = AMP_COLL_START_LARGE;
    s->node = amp_malloc((size_t)f->nprocs * sizeof(int));
    s->ranks = amp_malloc((size_t)f->nprocs * sizeof(*s->ranks));
    s->aggr = amp_malloc((size_t)f->nprocs * sizeof(int));
    if (!s->node || !s->ranks || !s->aggr)
        return amp_err(MPI_ERR_NO_MEM, "out of memory for collective state");
    int rc = amp_coll_auto_init(f, &s->autosel);
    if (rc != MPI_SUCCESS)
        return rc;
    /* the node layout: ampio_ranks_per_node, else what this process kept for the group */
    int rpn = (int)amp_cfg_num(&f->cfg, AMP_CFG_AMPIO_RANKS_PER_NODE);
    if (rpn > 0) {
        for (int r = 0; r < f->nprocs; r++)
            s->node[r] = r / rpn;
        s->nnodes = (f->nprocs + rpn - 1) / rpn;
        *known = 1;
    } else {
        *known = amp_nodes_lookup(f->comm, f->nprocs, s->node, &s->nnodes);
    }
    if (*known)
        amp_coll_note_cores(f, s);
    *crowded = s->shares_cores;
    return MPI_SUCCESS;
}

int amp_coll_file_settle(amp_file_t *f, int all_known, int crowded)
{
    struct amp_coll_state *s = f->coll;
    if (!all_known) { /* the first open on the group: shared memory tells, and it is kept */
        int rc = amp_nodes_get(f->comm, f->nprocs, s->node, &s->nnodes);
        if (rc == MPI_SUCCESS)
            amp_coll_note_cores(f, s);
        uint64_t any = rc == MPI_SUCCESS && s->shares_cores;
        rc = amp_agree_or(f->comm, rc, &any, 1);
        if (rc != MPI_SUCCESS)
            return rc;
        crowded = any != 0;
    }
    int set = (int)amp_cfg_num(&f->cfg, AMP_CFG_AMPIO_SHARED_CORES); /* the same everywhere */
    if (set == AMP_CFG_ENABLE || (set == AMP_CFG_AUTOMATIC && crowded))
        amp_task_mark_crowded(f->comm); /* on every rank: crowded is the or of every rank's */
    amp_coll_write_chunk(f, s);
    return MPI_SUCCESS;
}

void amp_coll_file_free(amp_file_t *f)
{
    if (!f->coll)
        return;
    free(f->coll->node);
    free(f->coll->last_aggr);
    for (int i = 0; i < AMP_COLL_SCRATCH_COUNT; i++)
        free(f->coll->scratch[i]);
    amp_coll_auto_free(f->coll->autosel);
    free(f->coll->ranks);
    free(f->coll->aggr);
    free(f->coll);
    f->coll = NULL;
}

char *amp_coll_scratch(amp_file_t *f, amp_coll_scratch_id_t which, MPI_Count need)
{
    struct amp_coll_state *s = f->coll;
    if (s->scratch_cap[which] < need) {
        /* a fresh buffer rather than realloc: the old contents need no copy */
        free(s->scratch[which]);
        s->scratch[which] = amp_malloc((size_t)need);
        s->scratch_cap[which] = s->scratch[which] ? need : 0;
    }
    return s->scratch[which];
}

void amp_coll_scratch_trim(amp_file_t *f)
{
    struct amp_coll_state *s = f->coll;
    for (int i = 0; i < AMP_COLL_SCRATCH_COUNT; i++)
        if (s->scratch_cap[i] > AMP_COLL_SCRATCH_KEEP) {
            free(s->scratch[i]);
            s->scratch[i] = NULL;
            s->scratch_cap[i] = 0;
        }
}

int amp_coll_pick_aggregators(amp_file_t *f, int n, int *out, int *count)
{
    *count = 0;
    struct amp_coll_state *s = f->coll;
    int per_node = 0; /* cb_config_list "*:N" caps aggregators per node */
    const char *list = f->cfg.str[AMP_CFG_CB_CONFIG_LIST];
    if (list && strncmp(list, "*:", 2) == 0)
        per_node = atoi(list + 2);
    return amp_coll_place_aggregators(s->node, s->nnodes, f->nprocs, per_node, n, out, count);
}

/* ---- choices ---- */

static int amp_coll_choose(amp_file_t *f, amp_coll_call_t *c, int write)
{
    int fcoll = (int)amp_cfg_num(&f->cfg, AMP_CFG_AMPIO_FCOLL);
    int cb = (int)amp_cfg_num(&f->cfg, write ? AMP_CFG_ROMIO_CB_WRITE : AMP_CFG_ROMIO_CB_READ);
    c->why = "set by hint";
    if (!amp_cfg_num(&f->cfg, AMP_CFG_COLLECTIVE_BUFFERING) || cb == AMP_CFG_DISABLE) {
        c->why = "collective buffering disabled by hint";
        return AMP_FCOLL_INDIVIDUAL;
    }
    if (__atomic_load_n(&f->atomic, __ATOMIC_ACQUIRE)) {
        c->why = "atomic mode: each access locks its own range";
        return AMP_FCOLL_INDIVIDUAL;
    }
    /* Requests this large need no aggregation: each rank accesses its own, as the Lustre
     * driver does past big_req_size (on average over all contiguous requests of the call). */
    int64_t big = amp_cfg_num(&f->cfg, AMP_CFG_BIG_REQ_SIZE), runs = 0;
    for (int r = 0; big > 0 && r < c->nprocs; r++)
        runs += c->ranks[r].runs;
    if (big > 0 && runs > 0 && c->gbytes / runs >= big) {
        c->why = "contiguous requests at least big_req_size on average: accessed by their owners";
        return AMP_FCOLL_INDIVIDUAL;
    }
    if (fcoll != AMP_FCOLL_AUTO)
        return fcoll;
    c->why = "collective buffering enabled by hint";
    if (cb == AMP_CFG_ENABLE)
        return AMP_FCOLL_TWO_PHASE;
    return amp_coll_choose_shape(c, write);
}

/* Whether the hints leave ampio the choice of a read's algorithm (the same on every rank). */
static int amp_coll_choice_free(amp_file_t *f)
{
    return amp_cfg_num(&f->cfg, AMP_CFG_AMPIO_FCOLL) == AMP_FCOLL_AUTO &&
           amp_cfg_num(&f->cfg, AMP_CFG_ROMIO_CB_READ) != AMP_CFG_ENABLE &&
           amp_cfg_num(&f->cfg, AMP_CFG_COLLECTIVE_BUFFERING) &&
           !__atomic_load_n(&f->atomic, __ATOMIC_ACQUIRE);
}

/* Stripe-contiguous domains: about k bytes per aggregator (or the hint's count), at most the
 * client/OST ratio per target. */
static int amp_coll_stripe_naggr(amp_file_t *f, amp_coll_call_t *c)
{
    static __thread char why[160];
    int64_t set = amp_cfg_num(&f->cfg, AMP_CFG_AMPIO_NUM_AGGREGATORS);
    if (set <= 0)
        set = amp_cfg_num(&f->cfg, AMP_CFG_CB_NODES);
    int64_t k = amp_cfg_num(&f->cfg, AMP_CFG_AMPIO_SATURATION_K);
    int64_t co = amp_cfg_num(&f->cfg, AMP_CFG_ROMIO_LUSTRE_CO_RATIO);
    int64_t want = set > 0 ? set : (c->gbytes + k / 2) / k;
    int n = amp_stripe_naggr(want, c->nprocs, c->layout->count, co);
    snprintf(why, sizeof(why), "%s; %lld aggregator(s) %s, at most %lld per target of %lld", c->why,
             (long long)want, set > 0 ? "by hint" : "of about k bytes each", (long long)co,
             (long long)c->layout->count);
    c->why = why;
    return n;
}

static int amp_coll_naggr(amp_file_t *f, amp_coll_call_t *c)
{
    int n = (int)amp_cfg_num(&f->cfg, AMP_CFG_AMPIO_NUM_AGGREGATORS);
    if (n <= 0)
        n = (int)amp_cfg_num(&f->cfg, AMP_CFG_CB_NODES);
    if (n <= 0) {
        /* groups of about k bytes each. Only a new plan can fail (memory), and every rank
         * makes one in the same calls, so only then do they agree: a rank that could not
         * plan makes every rank drop the plan and fall back to one aggregator per collective
         * buffer, so that the kept plans stay the same everywhere */
        amp_coll_auto_t *a = f->coll->autosel;
        if (amp_coll_auto_cached(c, a))
            return c->groups->n;
        int ok = amp_coll_auto_plan(c, a) == MPI_SUCCESS, all_ok = 0;
        if (amp_task_agree_allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, f->comm) != MPI_SUCCESS)
            all_ok = 0;
        if (all_ok)
            return c->groups->n;
        amp_coll_auto_forget(a);
        c->groups = NULL;
        n = (int)((c->gbytes + c->cb - 1) / c->cb);
    }
    if (n < 1)
        n = 1;
    return n > c->nprocs ? c->nprocs : n;
}

/* ---- reporting ---- */

static void amp_coll_explain(const amp_coll_call_t *c, int fcoll)
{
    if (c->rank != 0 || !amp_cfg_num(&c->f->cfg, AMP_CFG_AMPIO_EXPLAIN))
        return;
    char list[256] = "";
    size_t at = 0;
    for (int a = 0; a < c->naggr && at + 16 < sizeof(list); a++)
        at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%d", a ? "," : "", c->aggr[a]);
    if (at + 16 >= sizeof(list))
        snprintf(list + at, sizeof(list) - at, ",...");
    char why[768];
    if (fcoll == AMP_FCOLL_INDIVIDUAL || fcoll == AMP_FCOLL_STRIPE)
        snprintf(why, sizeof(why), "%s", c->why ? c->why : "no aggregation");
    else
        amp_coll_auto_describe(c, c->f->coll->autosel, why, sizeof(why));
    char layout[128];
    amp_fs_layout_describe(c->layout, layout, sizeof(layout));
    fprintf(stderr,
            "ampio explain: %s \"%s\": %lld bytes from %d ranks in [%lld, %lld); fcoll=%s "
            "aggregators=%d [%s] cb_buffer_size=%lld align=%lld layout=%s; %s\n",
            c->io->write ? "write" : "read", c->f->path, (long long)c->gbytes, c->nprocs,
            (long long)c->glo, (long long)c->ghi, amp_fcoll_names[fcoll], c->naggr, list,
            (long long)c->cb, (long long)c->align, layout, why);
}

static void amp_coll_record(amp_coll_call_t *c, int fcoll)
{
    struct amp_coll_state *s = c->f->coll;
    amp_coll_stat_t *st = &s->stats[c->io->write][fcoll];
    st->calls++;
    st->bytes += c->gbytes;
    st->rounds += c->count.rounds;
    st->aggregators += c->naggr;
    st->bytes_io += c->count.bytes_io;
    st->t_total += c->count.t_total;
    st->t_io += c->count.t_io;
    s->last_fcoll = fcoll;
    s->last_naggr = c->naggr;
    int *list = amp_realloc(s->last_aggr, (size_t)(c->naggr > 0 ? c->naggr : 1) * sizeof(int));
    if (list) {
        memcpy(list, c->aggr, (size_t)c->naggr * sizeof(int));
        s->last_aggr = list;
    }
}

int amp_coll_info(amp_file_t *f, MPI_Info info)
{
    struct amp_coll_state *s = f->coll;
    if (!s || s->last_fcoll < 0)
        return MPI_SUCCESS;
    char text[MPI_MAX_INFO_VAL + 1];
    snprintf(text, sizeof(text), "%d", s->last_naggr);
    int rc = PMPI_Info_set(info, "cb_nodes", text);
    size_t at = 0;
    text[0] = '\0';
    for (int a = 0; a < s->last_naggr && at + 12 < sizeof(text); a++)
        at += (size_t)snprintf(text + at, sizeof(text) - at, "%s%d", a ? "," : "", s->last_aggr[a]);
    if (rc == MPI_SUCCESS && at > 0)
        rc = PMPI_Info_set(info, "ampio_aggregators", text);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Info_set(info, "ampio_fcoll", amp_fcoll_names[s->last_fcoll]);
    /* the node layout the aggregators were picked from: the node of every rank, when it fits */
    snprintf(text, sizeof(text), "%d", s->nnodes);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Info_set(info, "ampio_nodes", text);
    at = 0;
    int r = 0;
    for (; r < f->nprocs && at + 12 < sizeof(text); r++)
        at += (size_t)snprintf(text + at, sizeof(text) - at, "%s%d", r ? "," : "", s->node[r]);
    if (rc == MPI_SUCCESS && r == f->nprocs)
        rc = PMPI_Info_set(info, "ampio_node_of_rank", text);
    return rc;
}

/* `text` as a JSON string: quotes, backslashes and control characters escaped (a file name may
 * hold any byte but '/' and NUL). */
static void amp_coll_json_string(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

void amp_coll_stats_report(amp_file_t *f)
{
    struct amp_coll_state *s = f->coll;
    const char *where = f->cfg.str[AMP_CFG_AMPIO_STATS];
    if (!s || !where || !*where || strcmp(where, "0") == 0)
        return;
    enum { N = 2 * AMP_FCOLL_COUNT };
    double t[2 * N], tmax[2 * N];
    for (int i = 0; i < N; i++) {
        t[2 * i] = s->stats[i / AMP_FCOLL_COUNT][i % AMP_FCOLL_COUNT].t_total;
        t[2 * i + 1] = s->stats[i / AMP_FCOLL_COUNT][i % AMP_FCOLL_COUNT].t_io;
    }
    /* statistics only: without the others' times there is nothing true to print */
    if (PMPI_Reduce(t, tmax, 2 * N, MPI_DOUBLE, MPI_MAX, 0, f->comm) != MPI_SUCCESS || f->rank != 0)
        return;
    int json = strcmp(where, "1") != 0;
    FILE *out = json ? fopen(where, "a") : stderr;
    if (!out)
        return;
    long long plans = (long long)amp_coll_auto_plans(s->autosel);
    if (json) {
        fputs("{\"file\":", out);
        amp_coll_json_string(out, f->path);
        fprintf(out, ",\"nprocs\":%d,\"aggregator_plans\":%lld,\"calls\":[", f->nprocs, plans);
    } else if (plans > 0)
        fprintf(out, "ampio stats \"%s\": %lld aggregator plan(s) made\n", f->path, plans);
    int first = 1;
    for (int i = 0; i < N; i++) {
        const amp_coll_stat_t *st = &s->stats[i / AMP_FCOLL_COUNT][i % AMP_FCOLL_COUNT];
        if (!st->calls)
            continue;
        const char *op = i / AMP_FCOLL_COUNT ? "write" : "read";
        double total = tmax[2 * i], io = tmax[2 * i + 1];
        if (json)
            fprintf(out,
                    "%s{\"operation\":\"%s\",\"algorithm\":\"%s\",\"calls\":%lld,"
                    "\"bytes\":%lld,\"aggregators_avg\":%.2f,\"rounds\":%lld,"
                    "\"seconds\":%.6f,\"seconds_exchange\":%.6f,\"seconds_file\":%.6f}",
                    first ? "" : ",", op, amp_fcoll_names[i % AMP_FCOLL_COUNT],
                    (long long)st->calls, (long long)st->bytes,
                    (double)st->aggregators / (double)st->calls, (long long)st->rounds, total,
                    total - io > 0 ? total - io : 0, io);
        else
            fprintf(out,
                    "ampio stats \"%s\": %s %s: %lld calls, %lld bytes, %.1f aggregators, "
                    "%lld rounds on rank 0, %.6f s (exchange %.6f s, file access %.6f s)\n",
                    f->path, op, amp_fcoll_names[i % AMP_FCOLL_COUNT], (long long)st->calls,
                    (long long)st->bytes, (double)st->aggregators / (double)st->calls,
                    (long long)st->rounds, total, total - io > 0 ? total - io : 0, io);
        first = 0;
    }
    if (json) {
        fprintf(out, "]}\n");
        fclose(out);
    }
}

/* ---- the call ---- */

static int amp_coll_individual(amp_coll_call_t *c, MPI_Count *done)
{
    const amp_coll_io_t *io = c->io;
    if (io->failed || io->nbytes == 0)
        return MPI_SUCCESS;
    amp_xfer_t x = {.f = c->f,
                    .write = io->write,
                    .pos = io->pos,
                    .nbytes = io->nbytes,
                    .mem = io->mem,
                    .mdt = io->mdt,
                    /* locks as an independent access takes them, even when the ranks'
                     * ranges are disjoint: another rank's nonblocking independent write started
                     * before this call may still be writing into the holes of this range, which
                     * a read-modify-write without the lock would put back as they were */
                    .lock_held = 0};
    amp_xfer_job_t job = {.x = &x};
    double t0 = MPI_Wtime();
    int rc = amp_worker_run(amp_xfer_job, &job); /* inside a task, on an I/O thread */
    c->count.t_io += MPI_Wtime() - t0;
    *done = job.done;
    c->count.bytes_io += *done;
    return rc;
}

/* The file extent of this rank's part of the call. */
static amp_coll_rank_t amp_coll_mine(amp_file_t *f, const amp_coll_io_t *io)
{
    amp_coll_rank_t mine = {0, 0, 0, AMP_COLL_OWN_PENDING, 0};
    if (!io->failed && io->nbytes > 0) {
        mine.lo = amp_view_offset(&f->view, io->pos);
        mine.hi = amp_view_offset(&f->view, io->pos + io->nbytes - 1) + 1;
        mine.bytes = io->nbytes;
        if (amp_cfg_num(&f->cfg, AMP_CFG_BIG_REQ_SIZE) > 0) /* the average request size */
            mine.runs = mine.hi - mine.lo == mine.bytes
                            ? 1
                            : amp_coll_count_runs(&f->view, io->pos, io->nbytes);
    }
    return mine;
}

/* Every rank's extent, gathered, and what they add up to. The description decides every
 * rank's next steps, and with owners first it is also the agreement on their accesses: it
 * is exempt from injected communication faults, as the agreement is. A failure leaves the
 * call without data on this rank (returned). */
static void amp_coll_described(amp_coll_call_t *c);

static int amp_coll_describe(amp_coll_call_t *c, const amp_coll_rank_t *mine)
{
    amp_file_t *f = c->f;
    amp_coll_rank_t *ranks = f->coll->ranks;
    int rc = amp_task_agree_allgather(mine, AMP_COLL_RANK_WORDS, MPI_INT64_T, ranks,
                                      AMP_COLL_RANK_WORDS, MPI_INT64_T, f->comm);
    if (rc != MPI_SUCCESS)
        memset(ranks, 0, (size_t)f->nprocs * sizeof(*ranks));
    amp_coll_described(c);
    return rc;
}

/* The call's totals and buffers, from the description gathered in the file's state. */
static void amp_coll_described(amp_coll_call_t *c)
{
    amp_file_t *f = c->f;
    c->ranks = f->coll->ranks;
    c->aggr = f->coll->aggr;
    amp_coll_summarize(c);
    c->cb = amp_coll_cycle_buffer(&f->cfg, &f->layout);
    c->layout = &f->layout;
    c->align = f->layout.unit;
    /* Pipelined, a round fills a sub-buffer of one stripe (1 MiB without one) of the cycle
     * buffer, as pipelined two-phase I/O does: more rounds overlap more, and a round stays in
     * cache. Tile writes measured 1.5-4x faster here with 1 MiB rounds than with 16 MiB ones. */
    MPI_Offset sub = f->layout.source != AMP_LAYOUT_BLOCK ? f->layout.unit : AMP_COLL_SUB_BUFFER;
    if (amp_cfg_num(&f->cfg, AMP_CFG_AMPIO_PIPELINE) && c->cb > sub)
        c->cb = sub;
}

/* The ranks that access their own data: all with data. */
static void amp_coll_owners(amp_coll_call_t *c)
{
    c->naggr = 0;
    for (int r = 0; r < c->nprocs; r++)
        if (c->ranks[r].bytes > 0)
            c->aggr[c->naggr++] = r;
}

/* The call, from a description made here, or (`described`) already gathered in the file's
 * state. */
static int amp_coll_run(amp_file_t *f, const amp_coll_io_t *io, MPI_Count *done, int described)
{
    *done = 0;
    double t0 = MPI_Wtime();
    int rc = MPI_SUCCESS;
    amp_coll_call_t c = {.f = f, .io = io, .comm = f->comm, .rank = f->rank, .nprocs = f->nprocs};
    if (described) {
        amp_coll_described(&c);
    } else {
        amp_coll_rank_t mine = amp_coll_mine(f, io);
        rc = amp_coll_describe(&c, &mine);
    }
    if (rc != MPI_SUCCESS || c.gbytes == 0)
        return rc;
    /* a size this rank cannot learn fails the call, after the protocol (the others wait) */
    int size_rc = io->write ? MPI_SUCCESS : amp_fs_size(&f->fs, &c.file_size);

    int fcoll = amp_coll_choose(f, &c, io->write);
    f->coll->start[io->write] =
        fcoll == AMP_FCOLL_INDIVIDUAL ? AMP_COLL_START_OWNERS : AMP_COLL_START_DESCRIBE;
    if (fcoll == AMP_FCOLL_INDIVIDUAL) {
        amp_coll_owners(&c);
        amp_coll_explain(&c, fcoll);
        rc = amp_coll_individual(&c, done);
    } else {
        int want = fcoll == AMP_FCOLL_STRIPE ? amp_coll_stripe_naggr(f, &c) : amp_coll_naggr(f, &c);
        rc = amp_coll_pick_aggregators(f, want, c.aggr, &c.naggr);
        /* segmentation writes each group's data where it lies: when groups interleave in the
         * file, file domains (two-phase) keep every block with one aggregator */
        int disjoint = 1;
        if (rc == MPI_SUCCESS && (fcoll == AMP_FCOLL_DYNAMIC_SEG || fcoll == AMP_FCOLL_STATIC_SEG))
            rc = amp_coll_groups_disjoint(&c, c.naggr, &disjoint);
        if (!disjoint)
            fcoll = AMP_FCOLL_TWO_PHASE;
        amp_coll_plan_t plan = {.mine = -1};
        const amp_fcoll_t *alg = amp_fcoll_table[fcoll];
        if (rc == MPI_SUCCESS)
            rc = alg->plan(&c, &plan);
        if (rc == MPI_SUCCESS)
            amp_coll_explain(&c, fcoll);
        /* a rank that could not plan must not leave the others waiting in the exchange: agree
         * first. A rank that planned returns success when another did not: the agreement on
         * the call's errors gives it the other's error */
        int planned = rc == MPI_SUCCESS, all_planned = 0;
        int arc = amp_task_agree_allreduce(&planned, &all_planned, 1, MPI_INT, MPI_LAND, f->comm);
        if (rc == MPI_SUCCESS)
            rc = arc;
        if (all_planned && rc == MPI_SUCCESS) {
            int xrc = alg->exchange ? alg->exchange(&c, &plan) : amp_coll_exchange_runs(&c, &plan);
            rc = io->write ? amp_coll_engine_write(&c, &plan, xrc)
                           : amp_coll_engine_read(&c, &plan, xrc);
            if (xrc != MPI_SUCCESS)
                rc = xrc;
        }
        amp_coll_plan_free(&plan);
        if (!io->failed) {
            *done = io->nbytes;
            if (!io->write) {
                MPI_Count before = amp_coll_bytes_before(&c, c.file_size);
                *done = before < io->nbytes ? before : io->nbytes;
            }
        }
    }
    c.count.t_total = MPI_Wtime() - t0;
    amp_coll_record(&c, fcoll);
    return rc != MPI_SUCCESS ? rc : size_rc;
}

/* Owners first. When the owners made the last call of this direction, a rank whose data form
 * one contiguous range of the file accesses it before any message: it needs nobody (no holes,
 * no sieving, and its bytes are its own). The one allgather that describes the call then also
 * carries how every access went, so that a call the owners make again costs one collective
 * instead of two (the description and the agreement on errors). The choice is made again from
 * that description for the next call; ranks with scattered data, if any, take the full path
 * from the same description, in which those that are done take part without data.
 * The first read of a file starts so too, for contiguous parts of at least a cycle buffer:
 * the choice would leave them to their owners (an aggregator would move no more per round),
 * and a restart file is often read in one call per open.
 * Returns whether every rank succeeded, which makes a further agreement needless. */
static int amp_coll_run_owners_first(amp_file_t *f, const amp_coll_io_t *io, amp_coll_start_t start,
                                     MPI_Count *done, int *rc)
{
    double t0 = MPI_Wtime();
    amp_coll_call_t c = {.f = f, .io = io, .comm = f->comm, .rank = f->rank, .nprocs = f->nprocs};
    amp_coll_rank_t mine = amp_coll_mine(f, io);
    *done = 0;
    *rc = MPI_SUCCESS;
    if (io->failed) {
        mine.state = AMP_COLL_OWN_FAILED;
    } else if (mine.bytes > 0 && mine.hi - mine.lo == mine.bytes &&
               (start == AMP_COLL_START_OWNERS ||
                mine.bytes >= amp_coll_cycle_buffer(&f->cfg, &f->layout))) {
        /* nothing is known of the others yet (c.disjoint is 0): writes lock as independent
         * ones do, since a peer may still be inside an independent sieved write */
        *rc = amp_coll_individual(&c, done);
        mine.state = *rc == MPI_SUCCESS ? AMP_COLL_OWN_DONE : AMP_COLL_OWN_FAILED;
    }
    int drc = amp_coll_describe(&c, &mine);
    if (drc != MPI_SUCCESS) { /* what the others did is unknown here: the agreement tells */
        if (*rc == MPI_SUCCESS)
            *rc = drc;
        return 0;
    }
    int pending = 0, failed = 0;
    for (int r = 0; r < f->nprocs; r++) {
        pending |= c.ranks[r].bytes > 0 && c.ranks[r].state == AMP_COLL_OWN_PENDING;
        failed |= c.ranks[r].state == AMP_COLL_OWN_FAILED;
    }
    if (pending) {
        /* the rest of the call, from this description: those done (or failed) take part
         * without data, as a description of the rest would show them */
        for (int r = 0; r < f->nprocs; r++)
            if (c.ranks[r].state != AMP_COLL_OWN_PENDING)
                f->coll->ranks[r] = (amp_coll_rank_t){.state = AMP_COLL_OWN_PENDING};
        amp_coll_io_t rest = *io;
        if (mine.state != AMP_COLL_OWN_PENDING)
            rest.nbytes = 0;
        MPI_Count more = 0;
        int prc = amp_coll_run(f, &rest, &more, 1);
        if (*rc == MPI_SUCCESS)
            *rc = prc;
        *done += more;
        return 0;
    }
    if (c.gbytes > 0) {
        int fcoll = amp_coll_choose(f, &c, io->write);
        f->coll->start[io->write] =
            fcoll == AMP_FCOLL_INDIVIDUAL ? AMP_COLL_START_OWNERS : AMP_COLL_START_DESCRIBE;
        c.why = start == AMP_COLL_START_OWNERS
                    ? "the owners accessed their contiguous ranges first, as in the last call"
                    : "the owners read their contiguous ranges of a cycle buffer or more first "
                      "(the file's first read)";
        amp_coll_owners(&c);
        amp_coll_explain(&c, AMP_FCOLL_INDIVIDUAL);
        c.count.t_total = MPI_Wtime() - t0;
        amp_coll_record(&c, AMP_FCOLL_INDIVIDUAL);
    }
    return !failed;
}

int amp_coll_access(amp_file_t *f, const amp_coll_io_t *io, MPI_Count *done, int *agreed)
{
    *agreed = 0;
    /* every rank counts every collective call: the ids agree */
    __atomic_store_n(&f->fs.call, f->fs.ncalls++, __ATOMIC_RELAXED);
    int rc;
    amp_coll_start_t start = f->coll->start[io->write];
    if (start == AMP_COLL_START_LARGE && !amp_coll_choice_free(f))
        start = AMP_COLL_START_DESCRIBE;
    if (start != AMP_COLL_START_DESCRIBE)
        *agreed = amp_coll_run_owners_first(f, io, start, done, &rc);
    else
        rc = amp_coll_run(f, io, done, 0);
    __atomic_store_n(&f->fs.call, -1LL, __ATOMIC_RELAXED);
    return rc;
}
