/* Which rank touched which file block in each collective write: with every aggregating
 * algorithm, no block of the stripe unit may be written by two ranks in one call, and no rank
 * may read (read-modify-write) a block that another rank writes in that call. ampio logs its
 * system calls (hint ampio_trace); the native run has no log and checks only the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amptest.h"

#define UNIT   8192          /* the stripe unit the domains must respect */
#define RECORD 100           /* interleaved records that straddle every unit boundary */
static long long NREC = 300; /* records per rank; argv[2] multiplies them (larger stripes) */

typedef struct {
    long long call, off, len;
    int rank;
    char op;
} access_t;

static int load(const char *prefix, int P, access_t **out)
{
    int n = 0, cap = 1024;
    access_t *a = malloc(sizeof(*a) * (size_t)cap);
    for (int q = 0; q < P; q++) {
        char name[4200];
        snprintf(name, sizeof(name), "%s.%d", prefix, q);
        FILE *f = fopen(name, "r");
        if (!f)
            continue;
        access_t x;
        while (fscanf(f, "%lld %c %lld %lld", &x.call, &x.op, &x.off, &x.len) == 4) {
            x.rank = q;
            if (n == cap)
                a = realloc(a, sizeof(*a) * (size_t)(cap *= 2));
            a[n++] = x;
        }
        fclose(f);
        unlink(name);
    }
    *out = a;
    return n;
}

/* Checks every collective call of the log; returns the number of writes seen. */
static int check_log(const char *what, const access_t *a, int n, int P, long long unit)
{
    long long last_call = -1, writes = 0;
    for (int k = 0; k < n; k++)
        if (a[k].call > last_call)
            last_call = a[k].call;
    for (long long call = 0; call <= last_call; call++) {
        /* owner[block] = the rank that writes it in this call */
        int nblocks = (int)((long long)NREC * RECORD * P / unit + 2);
        int *owner = malloc(sizeof(int) * (size_t)nblocks);
        for (int b = 0; b < nblocks; b++)
            owner[b] = -1;
        for (int k = 0; k < n; k++) {
            if (a[k].call != call || a[k].op != 'w' || a[k].len == 0)
                continue;
            writes++;
            for (long long b = a[k].off / unit; b <= (a[k].off + a[k].len - 1) / unit; b++) {
                if (b >= nblocks)
                    break;
                if (owner[b] >= 0 && owner[b] != a[k].rank) {
                    amptest_fail("%s call %lld: ranks %d and %d both wrote block %lld", what, call,
                                 owner[b], a[k].rank, b);
                    free(owner);
                    return (int)writes;
                }
                owner[b] = a[k].rank;
            }
        }
        for (int k = 0; k < n; k++) {
            if (a[k].call != call || a[k].op != 'r' || a[k].len == 0)
                continue;
            for (long long b = a[k].off / unit; b <= (a[k].off + a[k].len - 1) / unit; b++)
                if (b < nblocks && owner[b] >= 0 && owner[b] != a[k].rank)
                    amptest_fail("%s call %lld: rank %d read block %lld that rank %d writes", what,
                                 call, a[k].rank, b, owner[b]);
        }
        free(owner);
    }
    return (int)writes;
}

/* Stripe-contiguous domains (the file's layout: by hint on local disk): in every call each writer's
 * stripes lie on a fixed set of targets, disjoint between writers while there are no more writers
 * than targets, one target each otherwise; a stripe the data cover is written whole by one writer,
 * each byte once, in one system call when the cycle buffer holds a stripe. */
static void check_stripes(const char *what, const access_t *a, int n, int P, long long unit,
                          long long count, int one_call)
{
    long long last_call = -1;
    for (int k = 0; k < n; k++)
        if (a[k].call > last_call)
            last_call = a[k].call;
    for (long long call = 0; call <= last_call; call++) {
        unsigned targets[64] = {0}; /* bit t: the rank wrote on target t */
        int writers = 0;
        long long nstripes = (long long)NREC * RECORD * P / unit + 2;
        long long *bytes = calloc((size_t)nstripes, sizeof(long long));
        int *calls = calloc((size_t)nstripes, sizeof(int));
        for (int k = 0; k < n; k++) {
            if (a[k].call != call || a[k].op != 'w' || a[k].len == 0)
                continue;
            if (!targets[a[k].rank])
                writers++;
            for (long long s = a[k].off / unit; s <= (a[k].off + a[k].len - 1) / unit; s++) {
                targets[a[k].rank] |= 1u << (s % count);
                long long lo = s * unit > a[k].off ? s * unit : a[k].off;
                long long hi =
                    (s + 1) * unit < a[k].off + a[k].len ? (s + 1) * unit : a[k].off + a[k].len;
                if (s < nstripes) {
                    bytes[s] += hi - lo;
                    calls[s]++;
                }
            }
        }
        for (int q = 0; q < P; q++) {
            int many = __builtin_popcount(targets[q]);
            if (writers <= count)
                amptest_check(many <= (count + writers - 1) / writers,
                              "%s call %lld: rank %d wrote on %d targets", what, call, q, many);
            else
                amptest_check(many <= 1, "%s call %lld: rank %d wrote on %d targets", what, call, q,
                              many);
            for (int o = 0; o < P && writers <= count; o++)
                amptest_check(o == q || !(targets[q] & targets[o]),
                              "%s call %lld: ranks %d and %d share a target", what, call, q, o);
        }
        /* stripes inside the data of the call (disp 37; each call writes one half) */
        long long half = (long long)NREC * RECORD * P / 2, from = 37 + call % 2 * half;
        for (long long s = from / unit + 1; s < (from + half) / unit && s < nstripes; s++) {
            amptest_check(bytes[s] == unit, "%s call %lld: stripe %lld got %lld bytes", what, call,
                          s, bytes[s]);
            if (one_call)
                amptest_check(calls[s] == 1, "%s call %lld: stripe %lld in %d writes", what, call,
                              s, calls[s]);
        }
        free(bytes);
        free(calls);
    }
}

static void run(const char *fcoll, const char *naggr, const char *cb)
{
    int P = amptest_size, r = amptest_rank;
    char name[96], trace[4200];
    snprintf(name, sizeof(name), "trace.%s.a%s.cb%s.dat", fcoll, naggr, cb);
    snprintf(trace, sizeof(trace), "%s", amptest_path(name));
    strcat(trace, ".log");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "ampio_fcoll", fcoll);
    MPI_Info_set(info, "cb_nodes", naggr);
    MPI_Info_set(info, "cb_buffer_size", cb);
    MPI_Info_set(info, "striping_unit", "8192");
    MPI_Info_set(info, "ampio_trace", trace);
    int stripe = strcmp(fcoll, "stripe") == 0;
    if (stripe) {
        MPI_Info_set(info, "striping_factor", "3");
        MPI_Info_set(info, "romio_lustre_co_ratio", "2");
    }

    /* records of RECORD bytes, rank-interleaved, after an odd header */
    MPI_Datatype rec, ft;
    MPI_Type_contiguous(RECORD, MPI_BYTE, &rec);
    MPI_Type_create_resized(rec, 0, (MPI_Aint)RECORD * P, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&rec);
    int disp = 37;
    size_t mine = (size_t)NREC * RECORD;
    unsigned char *buf = malloc(mine);
    for (size_t i = 0; i < mine; i++)
        buf[i] = amptest_byte(r, (long long)i);

    MPI_File fh;
    long long unit = UNIT, count = 3; /* the layout in use: the file system's where it stripes */
    if (amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name),
                                 MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh),
                   name)) {
        MPI_Status st;
        MPI_Info used;
        char value[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        if (amptest_under_ampio() && MPI_File_get_info(fh, &used) == MPI_SUCCESS) {
            MPI_Info_get(used, "striping_unit", MPI_MAX_INFO_VAL, value, &flag);
            unit = flag ? atoll(value) : unit;
            MPI_Info_get(used, "striping_factor", MPI_MAX_INFO_VAL, value, &flag);
            count = flag && stripe ? atoll(value) : count;
            MPI_Info_free(&used);
        }
        amptest_ok(
            MPI_File_set_view(fh, disp + (MPI_Offset)r * RECORD, MPI_BYTE, ft, "native", info),
            "set_view");
        /* two calls: the whole first half, then the second half */
        amptest_ok(MPI_File_write_all(fh, buf, (int)mine / 2, MPI_BYTE, &st), "write_all 1");
        amptest_ok(MPI_File_write_all(fh, buf + mine / 2, (int)(mine - mine / 2), MPI_BYTE, &st),
                   "write_all 2");
        amptest_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0) {
        size_t len = disp + mine * P;
        unsigned char *model = calloc(len, 1);
        for (int q = 0; q < P; q++)
            for (size_t i = 0; i < mine; i++)
                model[disp + (i / RECORD * P + q) * RECORD + i % RECORD] =
                    amptest_byte(q, (long long)i);
        amptest_compare_file(name, model, len);
        free(model);
        if (amptest_under_ampio()) {
            access_t *log;
            int n = load(trace, P, &log);
            int writes = check_log(name, log, n, P, stripe ? unit : UNIT);
            if (stripe)
                check_stripes(name, log, n, P, unit, count, atoi(cb) >= unit);
            amptest_check(writes > 0, "%s: the trace recorded no writes", name);
            free(log);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&ft);
    MPI_Info_free(&info);
    free(buf);
}

/* ds_in_coll: an aggregator fills the holes between its pieces by read-modify-write, so that a
 * round is one write; the holes keep what the file held (written before by rank 0). Without it
 * a collective write reads nothing. Each rank writes 6 of the 10 ints of its tile, tiles of all
 * ranks interleaved. */
#define TILES 250

static void run_sieve(const char *fcoll, int ds)
{
    int P = amptest_size, r = amptest_rank;
    char name[96], trace[4200];
    snprintf(name, sizeof(name), "sieve.%s.ds%d.dat", fcoll, ds);
    snprintf(trace, sizeof(trace), "%s.log", amptest_path(name));
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "ampio_fcoll", fcoll);
    MPI_Info_set(info, "ds_in_coll", ds ? "enable" : "disable");
    MPI_Info_set(info, "cb_nodes", "2");
    MPI_Info_set(info, "cb_buffer_size", "4096");
    MPI_Info_set(info, "striping_unit", "4096");
    MPI_Info_set(info, "striping_factor", "2");
    MPI_Info_set(info, "ampio_trace", trace);
    int bl[3] = {2, 3, 1}, dp[3] = {0, 4, 8};
    MPI_Datatype idx, ft;
    MPI_Type_indexed(3, bl, dp, MPI_INT, &idx);
    MPI_Type_create_resized(idx, 0, (MPI_Aint)P * 40, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&idx);
    size_t len = (size_t)TILES * P * 40;
    int n = TILES * 6, *data = malloc(sizeof(int) * (size_t)n);
    for (int k = 0; k < n; k++)
        data[k] = r * 1000003 + k;
    unsigned char *old = malloc(len);
    memset(old, 0x5a, len);
    MPI_File fh;
    if (amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name),
                                 MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
                   name)) {
        MPI_Status st;
        if (r == 0)
            amptest_ok(MPI_File_write_at(fh, 0, old, (int)len, MPI_BYTE, &st), "fill");
        amptest_ok(MPI_File_sync(fh), "sync");
        MPI_Barrier(MPI_COMM_WORLD);
        amptest_ok(MPI_File_sync(fh), "sync");
        /* CephFS through ceph-fuse serves a locked read from its cache: no read-modify-write */
        MPI_Info used;
        char layout[MPI_MAX_INFO_VAL + 1] = "";
        int flag = 0;
        if (amptest_under_ampio() && MPI_File_get_info(fh, &used) == MPI_SUCCESS) {
            MPI_Info_get(used, "ampio_layout", MPI_MAX_INFO_VAL, layout, &flag);
            MPI_Info_free(&used);
        }
        if (flag && strncmp(layout, "cephfs", 6) == 0)
            ds = 0;
        amptest_ok(MPI_File_set_view(fh, (MPI_Offset)r * 40, MPI_INT, ft, "native", info),
                   "set_view");
        amptest_ok(MPI_File_write_all(fh, data, n, MPI_INT, &st), "write_all");
        amptest_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0) {
        for (int q = 0; q < P; q++)
            for (int t = 0, k = 0; t < TILES; t++)
                for (int b = 0; b < 3; b++)
                    for (int i = 0; i < bl[b]; i++, k++) {
                        int v = q * 1000003 + k;
                        memcpy(old + ((size_t)t * P + q) * 40 + (dp[b] + i) * 4, &v, 4);
                    }
        amptest_compare_file(name, old, len);
        if (amptest_under_ampio()) {
            access_t *log;
            int m = load(trace, P, &log), reads = 0, writes = 0;
            for (int k = 0; k < m; k++) {
                reads += log[k].call == 0 && log[k].op == 'r';
                writes += log[k].call == 0 && log[k].op == 'w';
            }
            check_log(name, log, m, P, 4096);
            /* 3 runs per rank and tile without it; about a write per 4 KiB round with it */
            if (ds)
                amptest_check(reads > 0 && writes <= (int)(len / 4096) + 2 * P,
                              "%s: %d reads and %d writes", name, reads, writes);
            else
                amptest_check(reads == 0 && writes >= TILES, "%s: %d reads and %d writes", name,
                              reads, writes);
            free(log);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&ft);
    MPI_Info_free(&info);
    free(old);
    free(data);
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    if (argc > 2) /* more records: stripes of a parallel file system hold many */
        NREC *= atoll(argv[2]);
    const char *fcolls[] = {"auto", "two_phase", "dynamic_seg", "static_seg", "stripe"};
    char all[16];
    snprintf(all, sizeof(all), "%d", amptest_size);
    const char *naggrs[] = {"2", all};
    const char *cbs[] = {"4096", "65536"};
    for (int f = 0; f < 5; f++)
        for (int a = 0; a < 2; a++)
            for (int c = 0; c < 2; c++)
                run(fcolls[f], naggrs[a], cbs[c]);
    for (int ds = 0; ds < 2; ds++) {
        run_sieve("two_phase", ds);
        run_sieve("stripe", ds);
    }
    return amptest_finish();
}
