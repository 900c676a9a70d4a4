/* Which rank touched which file block in each collective write: with every aggregating
 * algorithm, no block of the stripe unit may be written by two ranks in one call, and no rank
 * may read (read-modify-write) a block that another rank writes in that call. ampio logs its
 * system calls (hint ampio_trace); the native run has no log and checks only the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amptest.h"

#define UNIT   8192 /* the stripe unit the domains must respect */
#define RECORD 100  /* interleaved records that straddle every unit boundary */
#define NREC   300

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
static int check_log(const char *what, const access_t *a, int n, int P)
{
    long long last_call = -1, writes = 0;
    for (int k = 0; k < n; k++)
        if (a[k].call > last_call)
            last_call = a[k].call;
    for (long long call = 0; call <= last_call; call++) {
        /* owner[block] = the rank that writes it in this call */
        int nblocks = (int)((long long)NREC * RECORD * P / UNIT + 2);
        int *owner = malloc(sizeof(int) * (size_t)nblocks);
        for (int b = 0; b < nblocks; b++)
            owner[b] = -1;
        for (int k = 0; k < n; k++) {
            if (a[k].call != call || a[k].op != 'w' || a[k].len == 0)
                continue;
            writes++;
            for (long long b = a[k].off / UNIT; b <= (a[k].off + a[k].len - 1) / UNIT; b++) {
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
            for (long long b = a[k].off / UNIT; b <= (a[k].off + a[k].len - 1) / UNIT; b++)
                if (b < nblocks && owner[b] >= 0 && owner[b] != a[k].rank)
                    amptest_fail("%s call %lld: rank %d read block %lld that rank %d writes", what,
                                 call, a[k].rank, b, owner[b]);
        }
        free(owner);
    }
    return (int)writes;
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
    if (amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name),
                                 MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh),
                   name)) {
        MPI_Status st;
        amptest_ok(MPI_File_set_view(fh, disp + (MPI_Offset)r * RECORD, MPI_BYTE, ft, "native",
                                     info),
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
            int writes = check_log(name, log, n, P);
            amptest_check(writes > 0, "%s: the trace recorded no writes", name);
            free(log);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&ft);
    MPI_Info_free(&info);
    free(buf);
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    const char *fcolls[] = {"auto", "two_phase", "dynamic_seg", "static_seg"};
    char all[16];
    snprintf(all, sizeof(all), "%d", amptest_size);
    const char *naggrs[] = {"2", all};
    const char *cbs[] = {"4096", "65536"};
    for (int f = 0; f < 4; f++)
        for (int a = 0; a < 2; a++)
            for (int c = 0; c < 2; c++)
                run(fcolls[f], naggrs[a], cbs[c]);
    return amptest_finish();
}
