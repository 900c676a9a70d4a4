/* ampio-bench-plan: the planning of one collective call at scale, without MPI. Feeds ampio's
 * own planner (src/coll: the summary of the description every rank allgathers, the automatic
 * choice and grouping, the placement of aggregators, the file domains or segments of a rank, an
 * aggregator's rounds from its members' runs) synthetic descriptions of the tile, IOR and 4-D
 * lattice patterns at any number of ranks, and prints the CPU time and the memory per rank of one
 * call: the first (the plan is made) and a repeated one (the plan of the last call is reused).
 *
 *   ampio-bench-plan [--ranks 1000,10000,100000] [--patterns tile,ior-seg,...]
 *                    [--fcoll auto|two_phase|dynamic_seg|static_seg|stripe]
 *                    [--stripe-count N] [--ranks-per-node N] [--reps N] [--check]
 *
 * Memory is what the heap holds for the call on the busiest rank sampled: the description (one
 * record per rank), the automatic plan kept for the next call, and the peak of the plan itself.
 * A rank's own runs (from its file view) are not included: they depend on its data only. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll/coll_internal.h"
#include "coll/stripe_map.h"

/* ---- heap accounting: every allocation of the process goes through these ---- */

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static long long heap_now, heap_peak;

static void heap_add(void *p, int sign)
{
    if (!p)
        return;
    heap_now += sign * (long long)malloc_usable_size(p);
    if (heap_now > heap_peak)
        heap_peak = heap_now;
}

void *malloc(size_t n)
{
    void *p = __libc_malloc(n);
    heap_add(p, 1);
    return p;
}

void *calloc(size_t n, size_t m)
{
    void *p = __libc_calloc(n, m);
    heap_add(p, 1);
    return p;
}

void *realloc(void *old, size_t n)
{
    heap_add(old, -1);
    void *p = __libc_realloc(old, n);
    heap_add(p ? p : old, 1);
    return p;
}

void free(void *p)
{
    heap_add(p, -1);
    __libc_free(p);
}

/* CPU time of this thread (user and system, page faults included): on a machine shared with
 * other work, elapsed time would also count the time slices others took. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- synthetic descriptions: the ampio-bench patterns at their default sizes ---- */

typedef struct {
    const char *name;
    int P;
    int dims[4];             /* process grid, slowest first */
    int64_t local[4];        /* elements per rank and dimension, slowest first */
    int64_t elem;            /* bytes of one element */
    int nd;                  /* dimensions of the array (0: IOR) */
    int64_t block, transfer; /* IOR: block per rank and segment, bytes per call */
} pattern_t;

/* Balanced factors of P into n dimensions, largest first (as MPI_Dims_create). */
static void factor(int P, int n, int *dims)
{
    for (int d = 0; d < n; d++)
        dims[d] = 1;
    int f = 2, left = P, primes[64], np = 0;
    while (left > 1 && np < 64) {
        while (left % f == 0 && np < 64) {
            primes[np++] = f;
            left /= f;
        }
        f++;
    }
    for (int i = np - 1; i >= 0; i--) { /* largest prime to the smallest dimension */
        int m = 0;
        for (int d = 1; d < n; d++)
            if (dims[d] < dims[m])
                m = d;
        dims[m] *= primes[i];
    }
    for (int i = 0; i < n; i++) /* descending */
        for (int j = i + 1; j < n; j++)
            if (dims[j] > dims[i]) {
                int t = dims[i];
                dims[i] = dims[j];
                dims[j] = t;
            }
}

static int pattern_init(pattern_t *p, const char *name, int P)
{
    memset(p, 0, sizeof(*p));
    p->name = name;
    p->P = P;
    if (strcmp(name, "tile") == 0) { /* 256 x 256 tiles of 8-byte elements */
        p->nd = 2;
        factor(P, 2, p->dims);
        p->local[0] = p->local[1] = 256;
        p->elem = 8;
    } else if (strcmp(name, "ior-seg") == 0) {
        p->block = 1 << 20;
        p->transfer = 256 << 10;
    } else if (strcmp(name, "ior-strided") == 0) {
        p->block = p->transfer = 4096;
    } else if (strncmp(name, "lattice", 7) == 0) {
        /* 8^4 sites of an SU(3) gauge field (4 x 3 x 3 complex doubles) per rank, x fastest;
         * lattice-slow splits the slowest dimensions most, lattice-fast the fastest */
        p->nd = 4;
        factor(P, 4, p->dims);
        if (strcmp(name, "lattice-fast") == 0)
            for (int i = 0; i < 2; i++) {
                int t = p->dims[i];
                p->dims[i] = p->dims[3 - i];
                p->dims[3 - i] = t;
            }
        else if (strcmp(name, "lattice-slow") != 0)
            return -1;
        for (int d = 0; d < 4; d++)
            p->local[d] = 8;
        p->elem = 4 * 3 * 3 * 16;
    } else {
        return -1;
    }
    return 0;
}

/* Coordinates of rank q in the process grid (row-major: the last dimension fastest). */
static void coords(const pattern_t *p, int q, int *c)
{
    for (int d = p->nd - 1; d >= 0; d--) {
        c[d] = q % p->dims[d];
        q /= p->dims[d];
    }
}

/* File offset of global element g (slowest first). */
static int64_t element_offset(const pattern_t *p, const int64_t *g)
{
    int64_t off = 0;
    for (int d = 0; d < p->nd; d++)
        off = off * p->dims[d] * p->local[d] + g[d];
    return off * p->elem;
}

static amp_coll_rank_t describe(const pattern_t *p, int q)
{
    amp_coll_rank_t x = {0, 0, 0, AMP_COLL_OWN_PENDING, 0};
    if (p->nd == 0) { /* the first call of segment 0 */
        x.lo = (int64_t)q * p->block;
        x.hi = x.lo + p->transfer;
        x.bytes = p->transfer;
        return x;
    }
    int c[4];
    int64_t first[4], last[4];
    coords(p, q, c);
    x.bytes = p->elem;
    for (int d = 0; d < p->nd; d++) {
        first[d] = c[d] * p->local[d];
        last[d] = first[d] + p->local[d] - 1;
        x.bytes *= p->local[d];
    }
    x.lo = element_offset(p, first);
    x.hi = element_offset(p, last) + p->elem;
    return x;
}

/* The file runs of rank q, merged where adjacent: what it sends its aggregator. */
static int64_t *runs_of(const pattern_t *p, int q, size_t *n)
{
    if (p->nd == 0) {
        int64_t *v = malloc(2 * sizeof(int64_t));
        amp_coll_rank_t x = describe(p, q);
        v[0] = x.lo;
        v[1] = x.bytes;
        *n = 1;
        return v;
    }
    int c[4], last = p->nd - 1;
    coords(p, q, c);
    int64_t lines = 1;
    for (int d = 0; d < last; d++)
        lines *= p->local[d];
    int64_t *v = malloc((size_t)(2 * lines) * sizeof(int64_t));
    size_t k = 0;
    for (int64_t i = 0; i < lines; i++) {
        int64_t g[4], rest = i;
        for (int d = last - 1; d >= 0; d--) {
            g[d] = c[d] * p->local[d] + rest % p->local[d];
            rest /= p->local[d];
        }
        g[last] = c[last] * p->local[last];
        int64_t off = element_offset(p, g), len = p->local[last] * p->elem;
        if (k > 0 && v[2 * k - 2] + v[2 * k - 1] == off) {
            v[2 * k - 1] += len;
            continue;
        }
        v[2 * k] = off;
        v[2 * k + 1] = len;
        k++;
    }
    *n = k;
    return v;
}

/* ---- one call ---- */

typedef struct {
    const char *fcoll_opt; /* "auto" or a forced algorithm */
    int64_t stripe_count, rpn;
    int check;
} options_t;

typedef struct {
    double t_shared, t_rank; /* seconds: the part every rank does alike, the busiest rank's */
    long long peak, kept;    /* bytes: the call's peak on the busiest rank, kept afterwards */
    int fcoll, naggr, nwork, failed;
} result_t;

static const char *fcoll_names[AMP_FCOLL_COUNT] = {"auto",        "individual", "two_phase",
                                                   "dynamic_seg", "static_seg", "stripe"};

static const amp_fcoll_t *fcoll_table(int f)
{
    switch (f) {
    case AMP_FCOLL_TWO_PHASE:
        return &amp_fcoll_two_phase;
    case AMP_FCOLL_DYNAMIC_SEG:
        return &amp_fcoll_dynamic_seg;
    case AMP_FCOLL_STATIC_SEG:
        return &amp_fcoll_static_seg;
    case AMP_FCOLL_STRIPE:
        return &amp_fcoll_stripe;
    default:
        return NULL;
    }
}

static int fcoll_of(const char *name)
{
    for (int f = 0; f < AMP_FCOLL_COUNT; f++)
        if (strcmp(name, fcoll_names[f]) == 0 && f != AMP_FCOLL_INDIVIDUAL)
            return f;
    return -1;
}

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "check failed: " __VA_ARGS__);                                         \
            fprintf(stderr, "\n");                                                                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* Checks of a rank's plan against the description: it is a member of the works whose range
 * holds its data, the aggregator of the work it aggregates, and an aggregator's members are
 * exactly the ranks with data in its range. */
static void check_plan(const amp_coll_call_t *c, const amp_coll_plan_t *p, int fcoll)
{
    const amp_coll_rank_t *me = &c->ranks[c->rank];
    int is_agg = 0;
    for (int a = 0; a < c->naggr; a++)
        is_agg |= c->aggr[a] == c->rank;
    CHECK(is_agg == (p->mine >= 0), "rank %d aggregates (%d) but has no work of its own", c->rank,
          is_agg);
    if (p->mine >= 0)
        CHECK(p->work[p->mine].agg == c->rank, "rank %d: its work has aggregator %d", c->rank,
              p->work[p->mine].agg);
    MPI_Count covered = 0;
    for (int i = 0; i < p->nwork; i++) {
        const amp_coll_work_t *w = &p->work[i];
        if (fcoll != AMP_FCOLL_TWO_PHASE || w->nrounds == 0)
            continue;
        MPI_Offset dlo = w->bounds[0], dhi = w->bounds[w->nrounds];
        CHECK(w->member == (me->bytes > 0 && me->lo < dhi && me->hi > dlo),
              "rank %d: membership of the domain of %d", c->rank, w->agg);
        if (i == p->mine) { /* the aggregator's members: the ranks with data in its domain */
            int k = 0;
            for (int q = 0; q < c->nprocs; q++) {
                const amp_coll_rank_t *o = &c->ranks[q];
                if (o->bytes > 0 && o->lo < dhi && o->hi > dlo)
                    CHECK(k < w->nmembers && w->members[k++] == q, "aggregator %d: rank %d missing",
                          c->rank, q);
            }
            CHECK(k == w->nmembers, "aggregator %d: %d members, %d expected", c->rank, w->nmembers,
                  k);
        }
        if (w->member) {
            MPI_Offset lo = me->lo > dlo ? me->lo : dlo, hi = me->hi < dhi ? me->hi : dhi;
            covered += hi - lo;
        }
    }
    if (fcoll == AMP_FCOLL_TWO_PHASE && me->bytes > 0)
        CHECK(covered == me->hi - me->lo, "rank %d: domains cover %lld of its %lld-byte extent",
              c->rank, (long long)covered, (long long)(me->hi - me->lo));
    if ((fcoll == AMP_FCOLL_DYNAMIC_SEG || fcoll == AMP_FCOLL_STATIC_SEG) && me->bytes > 0)
        CHECK(p->nwork == 1, "rank %d: in %d groups", c->rank, p->nwork);
}

/* The busiest of the sampled ranks: the first, middle and last rank and aggregator. */
static int sample_ranks(const amp_coll_call_t *c, int *out)
{
    int cand[6] = {0, c->nprocs / 2, c->nprocs - 1, 0, 0, 0}, n = 0;
    if (c->naggr > 0) {
        cand[3] = c->aggr[0];
        cand[4] = c->aggr[c->naggr / 2];
        cand[5] = c->aggr[c->naggr - 1];
    }
    for (int i = 0; i < 6; i++) {
        int dup = 0;
        for (int j = 0; j < n; j++)
            dup |= out[j] == cand[i];
        if (!dup)
            out[n++] = cand[i];
    }
    return n;
}

/* One call as amp_coll_run plans it (coll.c), for every sampled rank. `a` carries the plan of
 * the last call. */
static void one_call(const pattern_t *pt, const options_t *o, amp_coll_rank_t *ranks, int *aggr,
                     const int *node, int nnodes, amp_coll_auto_t *a, result_t *res)
{
    amp_fs_layout_t layout = {.unit = o->stripe_count > 1 ? 1 << 20 : 4096,
                              .count = o->stripe_count > 1 ? o->stripe_count : 1};
    amp_coll_auto_in_t in = {4 << 20, 0, ""}; /* ampio_saturation_k's default, a view */
    amp_coll_call_t c = {.rank = 0, .nprocs = pt->P, .ranks = ranks, .aggr = aggr};
    long long base = heap_now;
    heap_peak = heap_now;
    double t0 = now();
    amp_coll_summarize(&c);
    c.layout = &layout;
    c.align = layout.unit;
    /* ampio_pipeline: rounds of one stripe, or 1 MiB */
    c.cb = layout.count > 1 ? layout.unit : 1 << 20;
    int forced = strcmp(o->fcoll_opt, "auto") != 0;
    int fcoll = forced ? fcoll_of(o->fcoll_opt) : amp_coll_choose_shape(&c, 1); /* a write */
    res->fcoll = fcoll;
    res->nwork = 0;
    if (fcoll == AMP_FCOLL_INDIVIDUAL) { /* amp_coll_owners */
        c.naggr = 0;
        for (int r = 0; r < c.nprocs; r++)
            if (c.ranks[r].bytes > 0)
                c.aggr[c.naggr++] = r;
        res->t_shared = now() - t0;
        res->t_rank = 0;
        res->naggr = c.naggr;
        res->peak = heap_peak - base;
        res->kept = heap_now - base;
        return;
    }
    int want;
    if (fcoll == AMP_FCOLL_STRIPE) {
        want = amp_stripe_naggr((c.gbytes + in.k / 2) / in.k, c.nprocs, layout.count, 1);
    } else if (amp_coll_auto_cached_in(&c, a, &in)) {
        want = c.groups->n;
    } else if (amp_coll_auto_plan_in(&c, a, &in) == MPI_SUCCESS) {
        want = c.groups->n;
    } else {
        res->failed = 1;
        return;
    }
    int disjoint = 1;
    if (amp_coll_place_aggregators(node, nnodes, c.nprocs, 0, want, c.aggr, &c.naggr) !=
            MPI_SUCCESS ||
        ((fcoll == AMP_FCOLL_DYNAMIC_SEG || fcoll == AMP_FCOLL_STATIC_SEG) &&
         amp_coll_groups_disjoint(&c, c.naggr, &disjoint) != MPI_SUCCESS)) {
        res->failed = 1;
        return;
    }
    if (!disjoint)
        fcoll = AMP_FCOLL_TWO_PHASE;
    res->fcoll = fcoll;
    res->naggr = c.naggr;
    res->t_shared = now() - t0;
    long long shared_peak = heap_peak - base, kept = heap_now - base;

    int sample[6], ns = sample_ranks(&c, sample);
    res->t_rank = 0;
    res->peak = shared_peak;
    for (int i = 0; i < ns; i++) {
        long long before = heap_now;
        heap_peak = heap_now;
        amp_coll_call_t rc = c;
        rc.rank = sample[i];
        amp_coll_plan_t plan = {0};
        double t1 = now();
        int err = fcoll_table(fcoll)->domains(&rc, &plan);
        double t_rank = now() - t1;
        if (err != MPI_SUCCESS)
            res->failed = 1;
        /* the aggregator of a dynamic segment cuts rounds from its members' runs */
        if (err == MPI_SUCCESS && fcoll == AMP_FCOLL_DYNAMIC_SEG && plan.mine >= 0) {
            amp_coll_work_t *w = &plan.work[plan.mine];
            w->mruns = calloc((size_t)w->nmembers + 1, sizeof(int64_t *));
            w->mnruns = calloc((size_t)w->nmembers + 1, sizeof(size_t));
            for (int k = 0; k < w->nmembers; k++)
                w->mruns[k] = runs_of(pt, w->members[k], &w->mnruns[k]);
            double t2 = now();
            if (amp_coll_dynseg_rounds(&rc, w) != MPI_SUCCESS)
                res->failed = 1;
            t_rank += now() - t2;
        }
        if (o->check && err == MPI_SUCCESS)
            check_plan(&rc, &plan, fcoll);
        if (t_rank > res->t_rank)
            res->t_rank = t_rank;
        if (shared_peak + heap_peak - before > res->peak)
            res->peak = shared_peak + heap_peak - before;
        if (plan.nwork > res->nwork)
            res->nwork = plan.nwork;
        amp_coll_plan_free(&plan);
    }
    res->kept = kept;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void run(const char *name, int P, const options_t *o, int reps)
{
    pattern_t pt;
    if (pattern_init(&pt, name, P) != 0) {
        fprintf(stderr, "ampio-bench-plan: unknown pattern %s\n", name);
        exit(2);
    }
    long long base = heap_now;
    amp_coll_rank_t *ranks = malloc((size_t)P * sizeof(*ranks)); /* the allgathered records */
    long long desc = heap_now - base;
    int *aggr = malloc((size_t)P * sizeof(int)), *node = malloc((size_t)P * sizeof(int));
    for (int q = 0; q < P; q++) {
        ranks[q] = describe(&pt, q);
        node[q] = (int)(q / o->rpn);
    }
    int nnodes = (int)((P + o->rpn - 1) / o->rpn);
    double first[64], again[64];
    result_t r1 = {0}, r2 = {0};
    for (int i = 0; i < reps; i++) {
        amp_coll_auto_t *a;
        amp_coll_auto_new(0, NULL, &a);
        one_call(&pt, o, ranks, aggr, node, nnodes, a, &r1);
        first[i] = r1.t_shared + r1.t_rank;
        one_call(&pt, o, ranks, aggr, node, nnodes, a, &r2);
        again[i] = r2.t_shared + r2.t_rank;
        amp_coll_auto_free(a);
    }
    char grid[48] = "";
    for (int d = 0; d < pt.nd; d++)
        snprintf(grid + strlen(grid), sizeof(grid) - strlen(grid), "%s%d", d ? "x" : "",
                 pt.dims[d]);
    printf("%-12s %7d %-11s %-11s %7d %6d %9.3f %9.3f %8.2f %8.2f %8.2f%s\n", name, P,
           pt.nd ? grid : "-", fcoll_names[r1.fcoll], r1.naggr, r1.nwork, 1e3 * median(first, reps),
           1e3 * median(again, reps), desc / 1048576.0, r1.peak / 1048576.0,
           (desc + r1.peak) / 1048576.0, r1.failed || r2.failed ? "  (a plan failed)" : "");
    fflush(stdout);
    if (r1.failed || r2.failed)
        failures++;
    free(ranks);
    free(aggr);
    free(node);
}

int main(int argc, char **argv)
{
    const char *ranks = "1000,10000,100000";
    const char *patterns = "tile,ior-seg,ior-strided,lattice-slow,lattice-fast";
    options_t o = {"auto", 1, 64, 0};
    int reps = 5;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--check") == 0) {
            o.check = 1;
            continue;
        }
        if (!val) {
            fprintf(stderr,
                    "usage: %s [--ranks 1000,10000,100000] [--patterns LIST] "
                    "[--fcoll NAME] [--stripe-count N] [--ranks-per-node N] "
                    "[--reps N] [--check]\n",
                    argv[0]);
            return 2;
        }
        if (strcmp(arg, "--ranks") == 0)
            ranks = val;
        else if (strcmp(arg, "--patterns") == 0)
            patterns = val;
        else if (strcmp(arg, "--fcoll") == 0)
            o.fcoll_opt = val;
        else if (strcmp(arg, "--stripe-count") == 0)
            o.stripe_count = atoll(val);
        else if (strcmp(arg, "--ranks-per-node") == 0)
            o.rpn = atoll(val) > 0 ? atoll(val) : 1;
        else if (strcmp(arg, "--reps") == 0)
            reps = atoi(val) < 1 ? 1 : atoi(val) > 64 ? 64 : atoi(val);
        else {
            fprintf(stderr, "ampio-bench-plan: unknown option %s\n", arg);
            return 2;
        }
        i++;
    }
    if (strcmp(o.fcoll_opt, "auto") != 0 && fcoll_of(o.fcoll_opt) < 0) {
        fprintf(stderr, "ampio-bench-plan: unknown algorithm %s\n", o.fcoll_opt);
        return 2;
    }
    printf("# one collective call per rank: CPU time (median of %d) and memory of the busiest of "
           "the sampled ranks; %lld ranks per node, %s\n",
           reps, (long long)o.rpn,
           o.stripe_count > 1 ? "striped file (1 MiB units)" : "file on one target");
    printf("%-12s %7s %-11s %-11s %7s %6s %9s %9s %8s %8s %8s\n", "pattern", "ranks", "grid",
           "algorithm", "aggrs", "works", "first_ms", "again_ms", "desc_MiB", "plan_MiB",
           "total_MiB");
    char *plist = strdup(patterns), *save = NULL;
    for (char *pn = strtok_r(plist, ",", &save); pn; pn = strtok_r(NULL, ",", &save)) {
        char *rlist = strdup(ranks), *rsave = NULL;
        for (char *rn = strtok_r(rlist, ",", &rsave); rn; rn = strtok_r(NULL, ",", &rsave))
            run(pn, atoi(rn), &o, reps);
        free(rlist);
    }
    free(plist);
    if (failures)
        fprintf(stderr, "ampio-bench-plan: %d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
