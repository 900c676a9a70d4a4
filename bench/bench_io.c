/* ampio-bench-io: runs access patterns of MPI-IO benchmarks (mpi-tile-io, IOR, ROMIO coll_perf,
 * NPB BT-IO, FLASH-IO, a per-step latency pattern, a 4-D lattice checkpoint) through the MPI-IO of
 * the process, collective calls only, and prints one JSON line per repetition and operation on rank
 * 0.
 *
 *   ampio-bench-io --pattern tile,btio|all --op write|read|both --dir DIR --reps N [sizes]
 *
 * The time is the largest, over ranks, of open .. close after a barrier. Written data are read
 * back with POSIX calls after close and compared with the expected bytes; read data are compared
 * in memory. An untimed collective access to a scratch file comes first, and before every
 * timed write a scratch file of the same size is written and deleted (--no-warmup: neither).
 * With --variant LABEL:key=value[,key=value...] (repeated), every repetition runs each variant,
 * its hints added to the file's, in an order drawn anew for every repetition: configurations
 * compared in one launch share its conditions (here launches differ by up to 2x), and none is
 * always first or last. With --cold-reads every rank drops its node's cached pages of the file
 * before each timed read, untimed, as a restart by a new job finds them; otherwise the write's
 * check has just read the file through that cache, which an implementation that must drop it
 * (ampio where clients' caches are not coherent) cannot use. The file-per-process row then reads
 * the files written on the next node (IOR -C, bench_fpp.c): a client may keep a file it alone
 * wrote in a cache of its own that dropping the node's pages does not reach. The exit status is 1
 * when any data were wrong. Linked with the host MPI only: ampio comes in through LD_PRELOAD
 * (ampiorun). */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_io.h"

enum { MAX_VARIANTS = 128 };

typedef struct {
    const char *spec; /* LABEL:key=value,... as given */
    char label[64];
    MPI_Info info; /* the file's hints with the variant's own */
} variant_t;

typedef struct {
    const char *patterns, *op, *dir;
    int reps, keep, no_warmup, cold_reads, nvariants, seed;
    MPI_Info info;
    variant_t variants[MAX_VARIANTS];
    bench_params_t p;
} options_t;

static int rank, nprocs, failures; /* failures: runs whose data were wrong */

static void die(const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "ampio-bench-io: rank %d: %s: %s\n", rank, what, msg);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS)
        die(what, rc);
}

static void usage(void)
{
    if (rank == 0)
        printf(
            "usage: ampio-bench-io --pattern P[,P...]|all [--op write|read|both] [--dir DIR]\n"
            "  [--reps N] [--keep] [--no-warmup] [--cold-reads] [--hint key=value]...\n"
            "  [--variant LABEL:key=value[,key=value...]]... [--seed N (order of the variants)]\n"
            "  (--variant file-per-process: each rank its own file, POSIX calls; with\n"
            "   --cold-reads it reads the file of a rank on the next node;\n"
            "   --variant limit: the shared file by the best hand-written code, bench_limit.c)\n"
            "  tile:        --tiles-x N --tiles-y N --tile-x N --tile-y N --elem BYTES\n"
            "  ior-seg:     --block B --transfer B --segments N\n"
            "  ior-strided: --strided-transfer B --strided-segments N\n"
            "  collperf:    --coll-n N\n"
            "  btio:        --bt-class S|W|A|B|C --bt-steps N\n"
            "  latency:     --lat-seg B --lat-segs N --lat-steps N\n"
            "  flash:       --flash-vars N --flash-blocks N --flash-block-size B\n"
            "  restart:     --restart-block B\n"
            "  lattice:     --lattice-local N (sites per rank and dimension) --lattice-site B\n"
            "               --lattice-split slow|fast (the process grid splits those dims most)\n"
            "sizes take K, M, G suffixes (powers of 1024)\n");
}

static long parse_size(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end == 'k' || *end == 'K')
        v <<= 10;
    else if (*end == 'm' || *end == 'M')
        v <<= 20;
    else if (*end == 'g' || *end == 'G')
        v <<= 30;
    return v;
}

/* Adds "key=value" to info; returns 0 when it is not of that form. */
static int add_hint(MPI_Info info, const char *text, size_t len)
{
    char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
    const char *sep = memchr(text, '=', len);
    if (!sep || sep == text || sep - text > MPI_MAX_INFO_KEY ||
        len - (size_t)(sep - text) - 1 > MPI_MAX_INFO_VAL)
        return 0;
    snprintf(key, sizeof(key), "%.*s", (int)(sep - text), text);
    snprintf(val, sizeof(val), "%.*s", (int)(len - (size_t)(sep - text) - 1), sep + 1);
    MPI_Info_set(info, key, val);
    return 1;
}

/* Builds each variant's hints: the file's (--hint), then its own. */
static int build_variants(options_t *o)
{
    for (int v = 0; v < o->nvariants; v++) {
        variant_t *var = &o->variants[v];
        const char *colon = strchr(var->spec, ':');
        if (!colon || colon == var->spec || colon - var->spec >= (long)sizeof(var->label))
            return 0;
        snprintf(var->label, sizeof(var->label), "%.*s", (int)(colon - var->spec), var->spec);
        MPI_Info_dup(o->info, &var->info);
        for (const char *h = colon + 1; *h;) {
            size_t len = strcspn(h, ",");
            if (len && !add_hint(var->info, h, len))
                return 0;
            h += len + (h[len] == ',');
        }
    }
    return 1;
}

static void parse(int argc, char **argv, options_t *o)
{
    bench_params_t *p = &o->p;
    *o = (options_t){.patterns = "all", .op = "both", .dir = "/tmp", .reps = 1, .seed = 1};
    *p = (bench_params_t){.tile_x = 256,
                          .tile_y = 256,
                          .elem = 8,
                          .ior_block = 1 << 20,
                          .ior_transfer = 256 << 10,
                          .ior_segments = 2,
                          .strided_transfer = 4096,
                          .strided_segments = 128,
                          .coll_n = 48,
                          .bt_class = 'W',
                          .bt_steps = 5,
                          .lat_seg = 16384,
                          .lat_segs = 1,
                          .lat_steps = 32,
                          .flash_vars = 24,
                          .flash_blocks = 20,
                          .flash_block_sz = 4096,
                          .restart_block = 8 << 20,
                          .lat_local = 8,
                          .lat_site = 576};
    MPI_Info_create(&o->info);
    struct {
        const char *name;
        long *l;
        int *i;
    } opts[] = {
        {"tiles-x", NULL, &p->tiles_x},
        {"tiles-y", NULL, &p->tiles_y},
        {"tile-x", NULL, &p->tile_x},
        {"tile-y", NULL, &p->tile_y},
        {"elem", NULL, &p->elem},
        {"block", &p->ior_block, NULL},
        {"transfer", &p->ior_transfer, NULL},
        {"segments", &p->ior_segments, NULL},
        {"strided-transfer", &p->strided_transfer, NULL},
        {"strided-segments", &p->strided_segments, NULL},
        {"coll-n", NULL, &p->coll_n},
        {"bt-steps", NULL, &p->bt_steps},
        {"lat-seg", &p->lat_seg, NULL},
        {"lat-segs", &p->lat_segs, NULL},
        {"lat-steps", &p->lat_steps, NULL},
        {"flash-vars", NULL, &p->flash_vars},
        {"flash-blocks", NULL, &p->flash_blocks},
        {"flash-block-size", NULL, &p->flash_block_sz},
        {"restart-block", &p->restart_block, NULL},
        {"lattice-local", NULL, &p->lat_local},
        {"lattice-site", NULL, &p->lat_site},
        {"reps", NULL, &o->reps},
        {"seed", NULL, &o->seed},
    };
    for (int a = 1; a < argc; a++) {
        char name[64];
        const char *arg = argv[a], *val = NULL, *eq = strchr(arg, '=');
        if (strncmp(arg, "--", 2) != 0)
            goto bad;
        snprintf(name, sizeof(name), "%.*s", (int)(eq ? eq - arg - 2 : (long)strlen(arg + 2)),
                 arg + 2);
        if (strcmp(name, "help") == 0) {
            usage();
            MPI_Finalize();
            exit(0);
        }
        int *flag = strcmp(name, "keep") == 0         ? &o->keep
                    : strcmp(name, "no-warmup") == 0  ? &o->no_warmup
                    : strcmp(name, "cold-reads") == 0 ? &o->cold_reads
                                                      : NULL;
        if (flag) {
            *flag = 1;
            continue;
        }
        val = eq ? eq + 1 : (a + 1 < argc ? argv[++a] : NULL);
        if (!val)
            goto bad;
        if (strcmp(name, "pattern") == 0) {
            o->patterns = val;
        } else if (strcmp(name, "op") == 0) {
            o->op = val;
        } else if (strcmp(name, "dir") == 0) {
            o->dir = val;
        } else if (strcmp(name, "bt-class") == 0) {
            p->bt_class = val[0];
        } else if (strcmp(name, "lattice-split") == 0) {
            if (strcmp(val, "slow") != 0 && strcmp(val, "fast") != 0)
                goto bad;
            p->lat_fast = strcmp(val, "fast") == 0;
        } else if (strcmp(name, "hint") == 0) {
            if (!add_hint(o->info, val, strlen(val)))
                goto bad;
        } else if (strcmp(name, "variant") == 0) {
            if (o->nvariants == MAX_VARIANTS)
                goto bad;
            o->variants[o->nvariants++].spec = val;
        } else {
            size_t k = 0;
            while (k < sizeof(opts) / sizeof(opts[0]) && strcmp(opts[k].name, name) != 0)
                k++;
            if (k == sizeof(opts) / sizeof(opts[0]))
                goto bad;
            if (opts[k].l)
                *opts[k].l = parse_size(val);
            else
                *opts[k].i = (int)parse_size(val);
        }
        continue;
    bad:
        if (rank == 0)
            fprintf(stderr, "ampio-bench-io: bad argument '%s'\n", arg);
        usage();
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
        long v = opts[k].l ? *opts[k].l : *opts[k].i;
        if (v < 0 || (v == 0 && strncmp(opts[k].name, "tiles-", 6) != 0)) {
            if (rank == 0)
                fprintf(stderr, "ampio-bench-io: --%s must be positive\n", opts[k].name);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (strcmp(o->op, "write") != 0 && strcmp(o->op, "read") != 0 && strcmp(o->op, "both") != 0) {
        if (rank == 0)
            fprintf(stderr, "ampio-bench-io: --op must be write, read or both\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (!build_variants(o)) {
        if (rank == 0)
            fprintf(stderr, "ampio-bench-io: --variant takes LABEL:key=value[,key=value...]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (o->nvariants == 0) { /* one unnamed variant: the file's hints */
        o->variants[0].label[0] = '\0';
        MPI_Info_dup(o->info, &o->variants[0].info);
        o->nvariants = 1;
    }
}

static void fill(const bench_plan_t *plan, unsigned char *buf, unsigned seed)
{
    for (size_t i = 0; i < plan->nruns; i++)
        for (MPI_Offset k = 0; k < plan->runs[i].len; k++)
            *buf++ = bench_byte(plan->runs[i].off + k, seed);
}

/* Compares `buf` (the rank's data in buffer order) with the expected bytes. */
static int matches(const bench_plan_t *plan, const unsigned char *buf, unsigned seed)
{
    for (size_t i = 0; i < plan->nruns; i++)
        for (MPI_Offset k = 0; k < plan->runs[i].len; k++)
            if (*buf++ != bench_byte(plan->runs[i].off + k, seed))
                return 0;
    return 1;
}

/* Reads this rank's ranges of the closed file with POSIX calls, into `buf`. */
static int posix_read(const char *path, const bench_plan_t *plan, unsigned char *buf)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    for (size_t i = 0; i < plan->nruns; i++) {
        ssize_t n = pread(fd, buf, (size_t)plan->runs[i].len, (off_t)plan->runs[i].off);
        if (n != (ssize_t)plan->runs[i].len) {
            close(fd);
            return 0;
        }
        buf += n;
    }
    close(fd);
    return 1;
}

/* Writes the expected file contents with POSIX calls (the input of a read-only run). */
static void posix_prepare(const char *path, const bench_plan_t *plan, unsigned char *buf,
                          unsigned seed)
{
    if (rank == 0) {
        unlink(path);
        int fd = open(path, O_WRONLY | O_CREAT, 0644);
        if (fd < 0 || ftruncate(fd, (off_t)plan->file_size) != 0)
            die(path, MPI_SUCCESS);
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fill(plan, buf, seed);
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        die(path, MPI_SUCCESS);
    for (size_t i = 0; i < plan->nruns; i++) {
        if (pwrite(fd, buf, (size_t)plan->runs[i].len, (off_t)plan->runs[i].off) !=
            (ssize_t)plan->runs[i].len)
            die(path, MPI_SUCCESS);
        buf += plan->runs[i].len;
    }
    close(fd);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Writes and deletes a scratch file of this rank's data size before a timed write. The pages
 * a fresh write takes come from memory that may not have been touched for a while, and the
 * first touch of such memory can cost far more than the copy (in a virtual machine the host
 * faults it in): here a 256 MiB write took 0.07 s or 0.3-0.8 s from one run to the next, dd
 * alike. After this, the timed write takes pages that were just in use, whichever MPI-IO makes
 * it, and every run measures the MPI-IO rather than that first touch. */
static void prefault_page_cache(const char *dir, const bench_plan_t *plan, unsigned char *buf)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/ampio-bench-prefault.%d", dir, rank);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        for (size_t i = 0; i < plan->nruns; i++)
            if (pwrite(fd, buf, (size_t)plan->runs[i].len, (off_t)plan->runs[i].off) < 0)
                break;
        close(fd);
        unlink(path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Drops this node's cached pages of a file (fsync first: dirty pages would stay), then waits for
 * every rank, so that the timed read that follows finds none of them (--cold-reads). Read-only:
 * an open for writing on every node would hand each client write capabilities that the timed
 * open must then recall (CephFS). */
static void drop_node_cache(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        fsync(fd);
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

typedef struct {
    double seconds, open_s, close_s; /* whole access; its open and its close alone */
    char fcoll[64], cb_nodes[64], aggregators[MPI_MAX_INFO_VAL + 1];
} timing_t;

static void info_get(MPI_Info info, const char *key, char *val, int len, const char *dflt)
{
    int flag = 0;
    if (info != MPI_INFO_NULL)
        MPI_Info_get(info, key, len - 1, val, &flag);
    if (!flag)
        snprintf(val, (size_t)len, "%s", dflt);
}

/* One timed open .. collective calls .. close. */
static void timed_access(MPI_Info info, const char *path, const bench_plan_t *plan,
                         unsigned char *buf, int write, timing_t *t)
{
    MPI_File fh;
    int amode = write ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
    MPI_Offset disp = -1;
    MPI_Datatype ftype = MPI_DATATYPE_NULL;
    MPI_Status st;
    MPI_Info used = MPI_INFO_NULL;

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    check(MPI_File_open(MPI_COMM_WORLD, path, amode, info, &fh), "MPI_File_open");
    double t_open = MPI_Wtime() - t0;
    for (int i = 0; i < plan->ncalls; i++) {
        const bench_call_t *c = &plan->calls[i];
        if (c->disp != disp || c->ftype != ftype) {
            check(MPI_File_set_view(fh, c->disp, MPI_BYTE, c->ftype, "native", info),
                  "MPI_File_set_view");
            disp = c->disp;
            ftype = c->ftype;
        }
        if (c->bytes > (size_t)INT_MAX)
            die("a call of more than 2 GiB per rank: use smaller sizes", MPI_SUCCESS);
        int count = (int)c->bytes;
        int rc = write ? MPI_File_write_at_all(fh, c->at, buf + c->buf_off, count, MPI_BYTE, &st)
                       : MPI_File_read_at_all(fh, c->at, buf + c->buf_off, count, MPI_BYTE, &st);
        check(rc, write ? "MPI_File_write_at_all" : "MPI_File_read_at_all");
        int got;
        MPI_Get_count(&st, MPI_BYTE, &got);
        if (got != count)
            die(write ? "short collective write" : "short collective read", MPI_SUCCESS);
    }
    MPI_File_get_info(fh, &used);
    double t1 = MPI_Wtime();
    check(MPI_File_close(&fh), "MPI_File_close");
    double t2 = MPI_Wtime();
    double mine[3] = {t2 - t0, t_open, t2 - t1}, most[3];
    MPI_Reduce(mine, most, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    t->seconds = most[0];
    t->open_s = most[1];
    t->close_s = most[2];
    info_get(used, "ampio_fcoll", t->fcoll, sizeof(t->fcoll), "native");
    info_get(used, "cb_nodes", t->cb_nodes, sizeof(t->cb_nodes), "");
    info_get(used, "ampio_aggregators", t->aggregators, sizeof(t->aggregators), "");
    if (used != MPI_INFO_NULL)
        MPI_Info_free(&used);
}

/* The file-per-process row (bench_fpp.c), timed as the MPI-IO variants are: the slowest rank. */
static const char *const fpp_label = "file-per-process";

static int fpp_timed(bench_fpp_t *f, const unsigned char *buf, int write, timing_t *t)
{
    double times[3], most[3];
    int ok = write ? bench_fpp_write(f, buf, times) : bench_fpp_read(f, times);
    MPI_Reduce(times, most, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    *t = (timing_t){.seconds = most[0], .open_s = most[1], .close_s = most[2]};
    snprintf(t->fcoll, sizeof(t->fcoll), "posix");
    return ok;
}

/* The limit row (bench_limit.c) on the shared file, timed as the MPI-IO variants are. */
static const char *const limit_label = "limit";

static int limit_timed(bench_limit_t *l, const char *path, unsigned char *buf, int write,
                       timing_t *t)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), times[3], most[3];
    int ok = bench_limit_access(l, path, buf, write, &times[1], &times[2]);
    times[0] = MPI_Wtime() - t0;
    MPI_Reduce(times, most, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD); /* every owner has written before anyone reads back */
    *t = (timing_t){.seconds = most[0], .open_s = most[1], .close_s = most[2]};
    snprintf(t->fcoll, sizeof(t->fcoll), "posix");
    return ok;
}

/* One timed access of a variant: MPI-IO with its hints, or the hand-written limit. */
static int variant_timed(const variant_t *var, bench_limit_t *limit, const char *path,
                         const bench_plan_t *plan, unsigned char *buf, int write, timing_t *t)
{
    if (strcmp(var->label, limit_label) == 0)
        return limit_timed(limit, path, buf, write, t);
    timed_access(var->info, path, plan, buf, write, t);
    return 1;
}

static void report(const char *pattern, const char *op, const char *variant,
                   const bench_plan_t *plan, long long total, int rep, const timing_t *t,
                   int verified)
{
    if (rank != 0)
        return;
    printf(
        "{\"bench\":\"ampio-bench-io\",\"pattern\":\"%s\",\"operation\":\"%s\","
        "\"variant\":\"%s\",\"nprocs\":%d,\"rep\":%d,\"bytes\":%lld,\"calls\":%d,\"seconds\":%.6f,"
        "\"bandwidth_mbps\":%.3f,\"open_s\":%.6f,\"close_s\":%.6f,\"verified\":%d,"
        "\"fcoll\":\"%s\",\"cb_nodes\":\"%s\",\"aggregators\":\"%s\",\"params\":\"%s\"}\n",
        pattern, op, variant, nprocs, rep, total, plan->ncalls, t->seconds,
        t->seconds > 0 ? (double)total / t->seconds / 1e6 : 0.0, t->open_s, t->close_s, verified,
        t->fcoll, t->cb_nodes, t->aggregators, plan->params);
    fflush(stdout);
}

static int all_true(int ok)
{
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

static void run_pattern(const options_t *o, const bench_pattern_t *pat)
{
    bench_plan_t plan;
    memset(&plan, 0, sizeof(plan));
    const char *why = pat->build(&o->p, MPI_COMM_WORLD, &plan);
    if (why) {
        if (rank == 0) {
            printf("{\"bench\":\"ampio-bench-io\",\"pattern\":\"%s\",\"nprocs\":%d,"
                   "\"skipped\":\"%s\"}\n",
                   pat->name, nprocs, why);
            fflush(stdout);
        }
        bench_plan_free(&plan);
        return;
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/ampio-bench-%s.dat", o->dir, pat->name);
    long long mine = (long long)plan.bytes, total;
    MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    unsigned char *buf = malloc(plan.bytes ? plan.bytes : 1);
    unsigned char *back = malloc(plan.bytes ? plan.bytes : 1);
    if (!buf || !back)
        die("out of memory", MPI_SUCCESS);
    int do_write = strcmp(o->op, "read") != 0, do_read = strcmp(o->op, "write") != 0;
    timing_t t;

    bench_limit_t *limit = NULL; /* worked out before any timing, as a program would */
    for (int v = 0; v < o->nvariants; v++)
        if (strcmp(o->variants[v].label, limit_label) == 0 && !limit)
            limit = bench_limit_new(&plan, MPI_COMM_WORLD);
    bench_fpp_t *fpp = NULL;
    for (int v = 0; v < o->nvariants; v++)
        if (strcmp(o->variants[v].label, fpp_label) == 0 && !fpp)
            fpp = bench_fpp_new(path, &plan, o->cold_reads, MPI_COMM_WORLD);

    int order[MAX_VARIANTS];
    for (int v = 0; v < o->nvariants; v++)
        order[v] = v;
    unsigned long long draw = (unsigned long long)o->seed * 0x9E3779B97F4A7C15ull + 1;
    for (int rep = 0; rep < o->reps; rep++) {
        unsigned seed = (unsigned)rep * 7919u + 17u;
        for (int v = o->nvariants - 1; v > 0; v--) { /* the same draw on every rank */
            draw = draw * 6364136223846793005ull + 1442695040888963407ull;
            int w = (int)((draw >> 33) % (unsigned long long)(v + 1)), tmp = order[v];
            order[v] = order[w];
            order[w] = tmp;
        }
        for (int i = 0; i < o->nvariants; i++) {
            const variant_t *var = &o->variants[order[i]];
            if (strcmp(var->label, fpp_label) == 0) {
                fill(&plan, buf, seed);
                int ok = fpp_timed(fpp, buf, 1, &t);
                if (do_write) {
                    ok = all_true(ok && bench_fpp_verify_write(fpp, buf, back));
                    failures += !ok;
                    report(pat->name, "write", var->label, &plan, total, rep, &t, ok);
                }
                if (do_read) {
                    if (o->cold_reads)
                        drop_node_cache(bench_fpp_read_path(fpp));
                    ok = all_true(fpp_timed(fpp, buf, 0, &t));
                    failures += !ok;
                    report(pat->name, "read", var->label, &plan, total, rep, &t, ok);
                }
                MPI_Barrier(MPI_COMM_WORLD); /* every reader is done with the file */
                bench_fpp_remove(fpp);
                continue;
            }
            if (do_write) {
                if (rank == 0)
                    unlink(path);
                fill(&plan, buf, seed);
                if (!o->no_warmup)
                    prefault_page_cache(o->dir, &plan, buf);
                int ok = variant_timed(var, limit, path, &plan, buf, 1, &t);
                ok = ok && posix_read(path, &plan, back) && matches(&plan, back, seed);
                if (rank == 0) {
                    struct stat sb;
                    ok = ok && stat(path, &sb) == 0 && sb.st_size == plan.file_size;
                }
                ok = all_true(ok);
                failures += !ok;
                report(pat->name, "write", var->label, &plan, total, rep, &t, ok);
            } else {
                posix_prepare(path, &plan, buf, seed);
            }
            if (do_read) {
                memset(buf, 0, plan.bytes);
                if (o->cold_reads)
                    drop_node_cache(path);
                int ok = variant_timed(var, limit, path, &plan, buf, 0, &t);
                ok = all_true(ok && matches(&plan, buf, seed));
                failures += !ok;
                report(pat->name, "read", var->label, &plan, total, rep, &t, ok);
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && !o->keep)
        unlink(path);
    if (limit)
        bench_limit_free(limit);
    bench_fpp_free(fpp);
    free(buf);
    free(back);
    bench_plan_free(&plan);
}

/* An untimed collective write and read of a scratch file: the first open of a process sets
 * up what later ones reuse (in ampio: shared memory windows, hint tables; in the native
 * MPI-IO: components), which is not what a repeated measurement should see. */
static void warm_up(const options_t *o)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/ampio-bench-warmup.dat", o->dir);
    MPI_File fh;
    char byte = (char)rank;
    check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, o->info, &fh),
          "MPI_File_open (warm-up)");
    check(MPI_File_write_at_all(fh, rank, &byte, 1, MPI_CHAR, MPI_STATUS_IGNORE),
          "MPI_File_write_at_all (warm-up)");
    check(MPI_File_read_at_all(fh, rank, &byte, 1, MPI_CHAR, MPI_STATUS_IGNORE),
          "MPI_File_read_at_all (warm-up)");
    check(MPI_File_close(&fh), "MPI_File_close (warm-up)");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(path);
}

int main(int argc, char **argv)
{
    options_t o;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    parse(argc, argv, &o);
    if (!o.no_warmup)
        warm_up(&o);

    char list[1024];
    snprintf(list, sizeof(list), "%s", o.patterns);
    for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (int i = 0; i < bench_npatterns; i++)
            if (strcmp(name, "all") == 0 || strcmp(name, bench_patterns[i].name) == 0 ||
                (strcmp(name, "ior") == 0 && strcmp(bench_patterns[i].name, "ior-seg") == 0)) {
                run_pattern(&o, &bench_patterns[i]);
                found = 1;
            }
        if (!found && rank == 0)
            printf("{\"bench\":\"ampio-bench-io\",\"pattern\":\"%s\",\"nprocs\":%d,"
                   "\"skipped\":\"unknown pattern\"}\n",
                   name, nprocs);
    }
    for (int v = 0; v < o.nvariants; v++)
        MPI_Info_free(&o.variants[v].info);
    MPI_Info_free(&o.info);
    MPI_Finalize();
    return failures ? 1 : 0;
}
