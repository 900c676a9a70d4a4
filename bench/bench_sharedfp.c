/* Shared file pointer bandwidth and latency of every ampio_sharedfp component, or once of the
 * native MPI-IO (which ignores the hint). Per component every rank makes N calls of
 * MPI_File_write_shared of B bytes, then the MPI_File_sync that merges deferred data (the
 * individual and single components defer; for the others it is a plain sync), then N/10 calls
 * of MPI_File_write_ordered of B bytes. A phase is timed from a barrier to a barrier after it,
 * on the slowest rank; MB/s are of all ranks' data, microseconds per call are the phase's time
 * over one rank's calls.
 *
 * Every record is self-describing (magic, rank, sequence number, operation, then bytes derived
 * from them), so rank 0 verifies the file after the close: every write_shared record of every
 * rank appears exactly once, each rank's records in the order of its calls, and every
 * write_ordered call fills its region in rank order.
 *
 *   ampio-bench-sharedfp DIR LABEL COMPONENTS BYTES CALLS
 *
 * COMPONENTS: comma-separated values of ampio_sharedfp; "addproc-spawn" and "addproc-thread"
 * also set ampio_sharedfp_addproc. Ignored natively. One line per component and operation:
 *
 *   sfpb label=.. component=.. method=.. np=.. bytes=.. calls=.. op=.. seconds=.. mbps=..
 *        us_per_call=.. open_s=.. close_s=.. verified=yes|no [error=..] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { HEADER = 16, MAGIC = 0x53465042, OP_SHARED = 1, OP_ORDERED = 2 };

static int rank, nprocs;

static int under_ampio(void)
{
    return dlsym(RTLD_DEFAULT, "ampio_version") != NULL;
}

static unsigned char payload(uint32_t r, uint32_t seq, uint32_t op, int i)
{
    return (unsigned char)(r * 131u + seq * 31u + op * 17u + (uint32_t)i * 7u);
}

static void fill_record(unsigned char *rec, int bytes, uint32_t seq, uint32_t op)
{
    uint32_t head[4] = {MAGIC, (uint32_t)rank, seq, op};
    memcpy(rec, head, HEADER);
    for (int i = HEADER; i < bytes; i++)
        rec[i] = payload((uint32_t)rank, seq, op, i);
}

/* Whether rec is an intact record; its rank, sequence number and operation. */
static int parse_record(const unsigned char *rec, int bytes, uint32_t *r, uint32_t *seq,
                        uint32_t *op)
{
    uint32_t head[4];
    memcpy(head, rec, HEADER);
    if (head[0] != MAGIC || head[1] >= (uint32_t)nprocs)
        return 0;
    *r = head[1], *seq = head[2], *op = head[3];
    for (int i = HEADER; i < bytes; i++)
        if (rec[i] != payload(*r, *seq, *op, i))
            return 0;
    return 1;
}

/* Rank 0, after the close: the file against the model. Returns the regions found faulty (the
 * write_shared records, the write_ordered ones) and a description of the first fault of each. */
enum { FAULT_SHARED = 1, FAULT_ORDERED = 2 };

static int verify(const char *path, int bytes, int calls, int ordered, char why[2][256])
{
    long long shared = (long long)nprocs * calls, total = shared + (long long)nprocs * ordered;
    struct stat st;
    if (stat(path, &st) != 0 || st.st_size != total * bytes) {
        long long size = stat(path, &st) ? -1LL : (long long)st.st_size;
        for (int i = 0; i < 2; i++)
            snprintf(why[i], 256, "size %lld, expected %lld", size, total * bytes);
        return FAULT_SHARED | FAULT_ORDERED;
    }
    FILE *f = fopen(path, "rb");
    unsigned char *rec = malloc((size_t)bytes);
    char *seen = calloc((size_t)shared, 1);
    long long *last = malloc((size_t)nprocs * sizeof(*last)); /* each rank's last sequence */
    if (!f || !rec || !seen || !last) {
        for (int i = 0; i < 2; i++)
            snprintf(why[i], 256, "cannot read back the file");
        total = 0;
    }
    int faults = total ? 0 : FAULT_SHARED | FAULT_ORDERED;
    for (int r = 0; last && r < nprocs; r++)
        last[r] = -1;
    for (long long k = 0; k < total; k++) {
        uint32_t r, seq, op;
        int region = k < shared ? FAULT_SHARED : FAULT_ORDERED, bad = 0;
        char what[256];
        if (fread(rec, 1, (size_t)bytes, f) != (size_t)bytes ||
            !parse_record(rec, bytes, &r, &seq, &op)) {
            snprintf(what, sizeof(what), "record %lld unreadable or damaged", k);
            bad = 1;
        } else if (k < shared) {
            long long id = (long long)r * calls + seq;
            bad = op != OP_SHARED || seq >= (uint32_t)calls || seen[id] || seq <= last[r];
            if (bad)
                snprintf(what, sizeof(what), "record %lld: rank %u seq %u op %u (%s)", k, r, seq,
                         op,
                         op != OP_SHARED || seq >= (uint32_t)calls ? "unexpected"
                         : seen[id]                                ? "duplicate"
                                                                   : "out of call order");
            else
                seen[id] = 1, last[r] = seq;
        } else {
            long long j = (k - shared) / nprocs, want = (k - shared) % nprocs;
            bad = op != OP_ORDERED || r != (uint32_t)want || seq != (uint32_t)j;
            if (bad)
                snprintf(what, sizeof(what),
                         "ordered record %lld: rank %u seq %u op %u, expected rank %lld seq %lld",
                         k, r, seq, op, want, j);
        }
        if (bad && !(faults & region))
            snprintf(why[region == FAULT_ORDERED], 256, "%s", what);
        if (bad)
            faults |= region;
    }
    if (f)
        fclose(f);
    free(rec), free(seen), free(last);
    return faults;
}

static double slowest(double t)
{
    double m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

static void report(const char *label, const char *comp, const char *method, int bytes, int calls,
                   const char *op, double seconds, double open_s, double close_s, int verified,
                   const char *why)
{
    double mbps = seconds > 0 ? (double)bytes * calls * nprocs / seconds / 1e6 : 0;
    printf("sfpb label=%s component=%s method=%s np=%d bytes=%d calls=%d op=%s seconds=%.6f "
           "mbps=%.2f us_per_call=%.2f open_s=%.6f close_s=%.6f verified=%s%s%s\n",
           label, comp, method, nprocs, bytes, calls, op, seconds, mbps,
           calls > 0 ? seconds * 1e6 / calls : 0, open_s, close_s, verified ? "yes" : "no",
           why[0] ? " error=" : "", why);
    fflush(stdout);
}

static void bench(const char *dir, const char *label, const char *comp, int bytes, int calls)
{
    int ordered = calls / 10 > 0 ? calls / 10 : 1, errors = 0;
    char path[4096], why[512] = "", method[MPI_MAX_INFO_VAL + 1] = "native";
    snprintf(path, sizeof(path), "%s/sfpb.%s.%s.%d.dat", dir, label, comp, nprocs);
    if (rank == 0)
        unlink(path);
    MPI_Info info;
    MPI_Info_create(&info);
    const char *variant = strchr(comp, '-');
    if (variant && strncmp(comp, "addproc", 7) == 0) {
        MPI_Info_set(info, "ampio_sharedfp", "addproc");
        MPI_Info_set(info, "ampio_sharedfp_addproc", variant + 1);
    } else {
        MPI_Info_set(info, "ampio_sharedfp", comp);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fh;
    double t0 = MPI_Wtime();
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh);
    double open_s = slowest(MPI_Wtime() - t0);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        int n;
        MPI_Error_string(rc, why, &n);
        for (char *c = why; *c; c++)
            *c = *c == ' ' ? '_' : *c;
        if (rank == 0)
            report(label, comp, "-", bytes, calls, "write_shared", 0, open_s, 0, 0, why);
        return;
    }
    MPI_Info got;
    int flag = 0;
    MPI_File_get_info(fh, &got);
    MPI_Info_get(got, "ampio_sharedfp_method", MPI_MAX_INFO_VAL, method, &flag);
    MPI_Info_free(&got);
    if (!flag)
        snprintf(method, sizeof(method), "native");
    unsigned char *recs = malloc((size_t)bytes * (size_t)(calls + ordered));
    if (!recs) {
        fprintf(stderr, "ampio-bench-sharedfp: out of memory for %d records\n", calls + ordered);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < calls; i++)
        fill_record(recs + (size_t)i * bytes, bytes, (uint32_t)i, OP_SHARED);
    for (int i = 0; i < ordered; i++)
        fill_record(recs + (size_t)(calls + i) * bytes, bytes, (uint32_t)i, OP_ORDERED);

    /* a phase lasts until every rank is done: with more ranks than cores a rank may run its
     * loop alone, so its own loop time alone would hide the others' */
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < calls; i++)
        errors += MPI_File_write_shared(fh, recs + (size_t)i * bytes, bytes, MPI_BYTE,
                                        MPI_STATUS_IGNORE) != MPI_SUCCESS;
    MPI_Barrier(MPI_COMM_WORLD);
    double shared = MPI_Wtime() - t0;
    errors += MPI_File_sync(fh) != MPI_SUCCESS;
    MPI_Barrier(MPI_COMM_WORLD);
    double merged = MPI_Wtime() - t0;
    t0 = MPI_Wtime();
    for (int i = 0; i < ordered; i++)
        errors += MPI_File_write_ordered(fh, recs + (size_t)(calls + i) * bytes, bytes, MPI_BYTE,
                                         MPI_STATUS_IGNORE) != MPI_SUCCESS;
    MPI_Barrier(MPI_COMM_WORLD);
    double ordered_s = MPI_Wtime() - t0;
    t0 = MPI_Wtime();
    errors += MPI_File_close(&fh) != MPI_SUCCESS;
    double close_s = slowest(MPI_Wtime() - t0);
    free(recs);
    shared = slowest(shared), merged = slowest(merged), ordered_s = slowest(ordered_s);

    int all_errors;
    MPI_Allreduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        char why2[2][256] = {"", ""};
        int faults = FAULT_SHARED | FAULT_ORDERED;
        if (all_errors)
            for (int i = 0; i < 2; i++)
                snprintf(why2[i], sizeof(why2[i]), "%d calls failed", all_errors);
        else
            faults = verify(path, bytes, calls, ordered, why2);
        for (int i = 0; i < 2; i++)
            for (char *c = why2[i]; *c; c++)
                *c = *c == ' ' ? '_' : *c;
        int shared_ok = !(faults & FAULT_SHARED), ordered_ok = !(faults & FAULT_ORDERED);
        report(label, comp, method, bytes, calls, "write_shared", shared, open_s, close_s,
               shared_ok, why2[0]);
        report(label, comp, method, bytes, calls, "write_shared+merge", merged, open_s, close_s,
               shared_ok, why2[0]);
        report(label, comp, method, bytes, ordered, "write_ordered", ordered_s, open_s, close_s,
               ordered_ok, why2[1]);
        unlink(path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int provided; /* the service-thread variant of addproc needs MPI_THREAD_MULTIPLE */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc != 6 || atoi(argv[4]) < HEADER || atoi(argv[5]) < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: %s DIR LABEL COMPONENTS BYTES(>=%d) CALLS\n", argv[0], HEADER);
        MPI_Finalize();
        return 2;
    }
    const char *dir = argv[1], *label = argv[2];
    int bytes = atoi(argv[4]), calls = atoi(argv[5]);
    if (!under_ampio()) {
        bench(dir, label, label, bytes, calls);
    } else {
        char *list = strdup(argv[3]);
        for (char *save, *comp = strtok_r(list, ",", &save); comp;
             comp = strtok_r(NULL, ",", &save))
            bench(dir, label, comp, bytes, calls);
        free(list);
    }
    MPI_Finalize();
    return 0;
}
