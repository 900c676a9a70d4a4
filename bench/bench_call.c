/* ampio-bench-call: the cost of one collective call and of the open and close around it. Every
 * rank opens the file, reads (or writes) BYTES at rank * BYTES with one read_at_all (write_at_all),
 * and closes it, N times; rank 0 prints the medians, over the N times, of each step's time on the
 * slowest rank. Reads are checked against the bytes written first.
 *
 *   ampio-bench-call PATH BYTES N read|write
 *
 * Linked with the host MPI only: ampio comes in through LD_PRELOAD (ampiorun). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "ampio-bench-call: %s failed\n", what);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* One open .. call .. close; `steps` gets this rank's time of each. */
static void one_call(const char *path, int write, MPI_Offset at, char *buf, int bytes,
                     double steps[3])
{
    MPI_File fh;
    int amode = write ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
    double t0 = MPI_Wtime();
    check(MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh), "MPI_File_open");
    double t1 = MPI_Wtime();
    check(write ? MPI_File_write_at_all(fh, at, buf, bytes, MPI_BYTE, MPI_STATUS_IGNORE)
                : MPI_File_read_at_all(fh, at, buf, bytes, MPI_BYTE, MPI_STATUS_IGNORE),
          write ? "MPI_File_write_at_all" : "MPI_File_read_at_all");
    double t2 = MPI_Wtime();
    check(MPI_File_close(&fh), "MPI_File_close");
    steps[0] = t1 - t0;
    steps[1] = t2 - t1;
    steps[2] = MPI_Wtime() - t2;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 5 || atol(argv[2]) <= 0 || atol(argv[2]) > (1L << 30) || atoi(argv[3]) <= 0) {
        if (rank == 0)
            fprintf(stderr, "usage: ampio-bench-call PATH BYTES N read|write\n");
        MPI_Finalize();
        return 2;
    }
    const char *path = argv[1];
    int bytes = (int)atol(argv[2]), n = atoi(argv[3]), write = strcmp(argv[4], "write") == 0;
    MPI_Offset at = (MPI_Offset)rank * bytes;
    char *buf = malloc((size_t)bytes), *expect = malloc((size_t)bytes);
    double *times = malloc(3 * (size_t)n * sizeof(double));
    if (!buf || !expect || !times)
        check(MPI_ERR_NO_MEM, "malloc");
    memset(expect, 'a' + rank % 26, (size_t)bytes);
    memcpy(buf, expect, (size_t)bytes);
    double steps[3], most[3];
    if (!write)
        one_call(path, 1, at, buf, bytes, steps);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        one_call(path, write, at, buf, bytes, steps);
        bad |= !write && memcmp(buf, expect, (size_t)bytes) != 0;
        MPI_Reduce(steps, most, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        for (int k = 0; k < 3; k++)
            times[k * n + i] = most[k];
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int k = 0; k < 3; k++)
            qsort(times + k * n, (size_t)n, sizeof(double), compare_doubles);
        printf("open %.3f ms  %s %.3f ms  close %.3f ms  (medians of %d, slowest rank)%s\n",
               times[n / 2] * 1e3, write ? "write_at_all" : "read_at_all", times[n + n / 2] * 1e3,
               times[2 * n + n / 2] * 1e3, n, bad ? "  DATA WRONG" : "");
    }
    free(buf);
    free(expect);
    free(times);
    MPI_Finalize();
    return bad;
}
