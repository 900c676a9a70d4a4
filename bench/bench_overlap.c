/* ampio-bench-overlap DIR LABEL [options]: how much of a nonblocking access's time hides behind
 * computation. For each operation (iwrite_all, iread_all: 64 KiB chunks interleaved between
 * the ranks through a file view, so that the collective path aggregates and exchanges messages;
 * iwrite_at: each rank's own contiguous block) and each way of computing (with or without an
 * MPI_Test every --test-us microseconds), every repetition measures, each as the slowest rank's
 * time after a barrier:
 *   io    the access started and waited for at once
 *   comp  the computation alone, sized to last as long as io did (a fixed number of operations,
 *         from the speed the previous measurement showed)
 *   step  the access started, the same computation, then MPI_Wait
 * and prints   overlap LABEL OP tests=0|1 np=N thread=LEVEL io=S comp=S step=S fraction=F
 * where fraction = (io + comp - step) / min(io, comp): 1 when the step takes only as long as the
 * longer of the two, 0 when nothing overlapped. Data are verified after each read.
 *
 *   --mib N        MiB per rank per access (default 64)
 *   --reps R       repetitions (default 5)
 *   --test-us U    microseconds of computation between two MPI_Test calls (default 200)
 *   --thread multiple|single   the thread level requested (default single)
 *   --ops LIST     comma-separated operations (default iwrite_all,iread_all,iwrite_at) */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK (64 << 10)

static int rank, nprocs;
static volatile double sink;

/* The computation: a dependent chain of floating-point operations, `iters` of them, with an
 * MPI_Test of `req` every `every` iterations when `every` > 0. */
static void compute(long long iters, long long every, MPI_Request *req)
{
    double x = 1.0 + rank;
    long long next = every > 0 ? every : iters + 1;
    for (long long i = 0; i < iters; i++) {
        x = x * 1.0000001 + 1e-9;
        if (i == next) {
            int flag;
            if (*req != MPI_REQUEST_NULL)
                MPI_Test(req, &flag, MPI_STATUS_IGNORE);
            next += every;
        }
    }
    sink = x;
}

/* Iterations per second of compute(), the median of five measurements, agreed by all ranks
 * (the slowest). */
static double calibrate(void)
{
    double rates[5];
    MPI_Request none = MPI_REQUEST_NULL;
    for (int k = 0; k < 5; k++) {
        long long n = 20000000;
        double t0 = MPI_Wtime();
        compute(n, 0, &none);
        rates[k] = (double)n / (MPI_Wtime() - t0);
    }
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++)
            if (rates[j] < rates[i]) {
                double t = rates[i];
                rates[i] = rates[j];
                rates[j] = t;
            }
    double mine = rates[2], slowest;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    return slowest;
}

static double slowest(double t)
{
    double m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

static unsigned char pattern(long long i)
{
    return (unsigned char)(i * 131 + rank * 7 + (i >> 16));
}

static int start(MPI_File fh, const char *op, unsigned char *buf, long long bytes, MPI_Request *req)
{
    if (!strcmp(op, "iwrite_all"))
        return MPI_File_iwrite_at_all(fh, 0, buf, (int)bytes, MPI_BYTE, req);
    if (!strcmp(op, "iread_all"))
        return MPI_File_iread_at_all(fh, 0, buf, (int)bytes, MPI_BYTE, req);
    return MPI_File_iwrite_at(fh, (MPI_Offset)rank * bytes, buf, (int)bytes, MPI_BYTE, req);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr,
                "usage: %s DIR LABEL [--mib N] [--reps R] [--test-us U] "
                "[--thread multiple|single] [--ops LIST]\n",
                argv[0]);
        return 2;
    }
    const char *dir = argv[1], *label = argv[2];
    long long mib = 64;
    int reps = 5, multiple = 0;
    double test_us = 200;
    char ops[256] = "iwrite_all,iread_all,iwrite_at";
    for (int i = 3; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mib"))
            mib = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps"))
            reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--test-us"))
            test_us = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--thread"))
            multiple = !strcmp(argv[i + 1], "multiple");
        else if (!strcmp(argv[i], "--ops"))
            snprintf(ops, sizeof(ops), "%s", argv[i + 1]);
    }
    int provided = MPI_THREAD_SINGLE;
    if (multiple)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Query_thread(&provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *level = provided == MPI_THREAD_MULTIPLE ? "multiple" : "single";

    long long bytes = mib << 20;
    unsigned char *buf = malloc((size_t)bytes), *back = malloc((size_t)bytes);
    for (long long i = 0; i < bytes; i++)
        buf[i] = pattern(i);
    char path[4096];
    snprintf(path, sizeof(path), "%s/overlap-%s.dat", dir, label);
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, path,
                      MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                      &fh) != MPI_SUCCESS) {
        fprintf(stderr, "cannot open %s\n", path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* the collective operations: 64 KiB chunks round-robin over the ranks, from byte 0 */
    MPI_Datatype vec, ft;
    MPI_Type_vector((int)(bytes / CHUNK), CHUNK, CHUNK * nprocs, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)bytes * nprocs, &ft);
    MPI_Type_commit(&ft);
    /* the independent one goes through the same view's bytes: set per operation below */
    double rate = calibrate();
    long long every = (long long)(rate * test_us * 1e-6);
    if (every < 1)
        every = 1;
    int failed = 0;

    char list[256];
    snprintf(list, sizeof(list), "%s", ops);
    for (char *save = NULL, *op = strtok_r(list, ",", &save); op; op = strtok_r(NULL, ",", &save)) {
        int coll = strcmp(op, "iwrite_at") != 0, reading = !strcmp(op, "iread_all");
        MPI_File_set_view(fh, coll ? (MPI_Offset)rank * CHUNK : 0, MPI_BYTE, coll ? ft : MPI_BYTE,
                          "native", MPI_INFO_NULL);
        unsigned char *mem = reading ? back : buf;
        if (reading) { /* the data to read, written once */
            MPI_File_write_at_all(fh, 0, buf, (int)bytes, MPI_BYTE, MPI_STATUS_IGNORE);
            MPI_File_sync(fh);
        }
        MPI_Request req = MPI_REQUEST_NULL; /* a warm-up of the access */
        start(fh, op, mem, bytes, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int r = 0; r < reps; r++) {
            for (int tests = 0; tests < 2; tests++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                start(fh, op, mem, bytes, &req);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
                double io = slowest(MPI_Wtime() - t0);
                long long iters = (long long)(io * rate);

                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
                compute(iters, 0, &req);
                double comp = slowest(MPI_Wtime() - t0);
                if (comp > 0) /* the next repetition sizes its computation from this one */
                    rate = (double)iters / comp;

                if (reading)
                    memset(back, 0, (size_t)bytes);
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
                start(fh, op, mem, bytes, &req);
                compute(iters, tests ? every : 0, &req);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
                double step = slowest(MPI_Wtime() - t0);
                if (reading && memcmp(back, buf, (size_t)bytes) != 0)
                    failed = 1;
                double lo = io < comp ? io : comp;
                if (rank == 0)
                    printf("overlap %s %s tests=%d np=%d thread=%s io=%.4f comp=%.4f step=%.4f "
                           "fraction=%.3f\n",
                           label, op, tests, nprocs, level, io, comp, step,
                           (io + comp - step) / lo);
                fflush(stdout);
            }
        }
    }
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("overlap %s verified=%s\n", label, any ? "no" : "yes");
    MPI_File_close(&fh);
    MPI_Type_free(&vec);
    MPI_Type_free(&ft);
    free(buf);
    free(back);
    MPI_Finalize();
    return any;
}
