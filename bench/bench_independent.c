/* Independent I/O bandwidth: every rank writes then reads its own part of a shared file with
 * MPI_File_write_at/read_at, contiguous (large transfers) and noncontiguous (a vector view of
 * small blocks, which data sieving serves); and the fixed cost of a file: microseconds per
 * MPI_File_open and per MPI_File_close. Prints one line per case; run it natively and under
 * ampio (bench/independent.sh does both) to compare. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double run_case(const char *path, int noncontig, long long per_rank, int block, int write,
                       int *verified)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *buf = malloc((size_t)per_rank);
    for (long long i = 0; i < per_rank; i++)
        buf[i] = write ? (char)(rank * 31 + i * 7) : 0;
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, write ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY,
                  MPI_INFO_NULL, &fh);
    MPI_Datatype ft = MPI_BYTE;
    MPI_Offset disp = (MPI_Offset)rank * per_rank;
    if (noncontig) { /* blocks of `block` bytes, ranks interleaved */
        MPI_Datatype t;
        MPI_Type_contiguous(block, MPI_BYTE, &t);
        MPI_Type_create_resized(t, 0, (MPI_Aint)block * size, &ft);
        MPI_Type_commit(&ft);
        MPI_Type_free(&t);
        disp = (MPI_Offset)rank * block;
    }
    MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native", MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    long long chunk = 4LL << 20;
    for (long long off = 0; off < per_rank; off += chunk) {
        int n = (int)(per_rank - off < chunk ? per_rank - off : chunk);
        if (write)
            MPI_File_write_at(fh, off, buf + off, n, MPI_BYTE, MPI_STATUS_IGNORE);
        else
            MPI_File_read_at(fh, off, buf + off, n, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    MPI_File_close(&fh);
    double t = MPI_Wtime() - t0, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int ok = 1;
    if (!write)
        for (long long i = 0; i < per_rank && ok; i++)
            ok = buf[i] == (char)(rank * 31 + i * 7);
    MPI_Allreduce(&ok, verified, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (ft != MPI_BYTE)
        MPI_Type_free(&ft);
    free(buf);
    return (double)per_rank * size / tmax / 1e6;
}

/* The fixed cost of a file: the mean over `n` opens and closes of one file, in microseconds. */
static void time_open_close(const char *path, int n, double *open_us, double *close_us)
{
    double t_open = 0, t_close = 0;
    for (int i = 0; i < n; i++) {
        MPI_File fh;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        double t1 = MPI_Wtime();
        MPI_File_close(&fh);
        t_open += t1 - t0;
        t_close += MPI_Wtime() - t1;
    }
    double local[2] = {t_open, t_close}, worst[2];
    MPI_Allreduce(local, worst, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    *open_us = worst[0] / n * 1e6;
    *close_us = worst[1] / n * 1e6;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    const char *label = argc > 2 ? argv[2] : "run";
    int reps = argc > 3 ? atoi(argv[3]) : 3;
    char path[4096];
    snprintf(path, sizeof(path), "%s/independent.%s.dat", dir, label);
    struct {
        const char *name;
        int noncontig;
        long long per_rank;
        int block;
    } cases[] = {{"contiguous-1MiB", 0, 64LL << 20, 0},
                 {"noncontig-4KiB", 1, 16LL << 20, 4096},
                 {"noncontig-256B", 1, 4LL << 20, 256}};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
        for (int write = 1; write >= 0; write--) {
            double best = 0;
            int verified = 1;
            for (int r = 0; r < reps; r++) {
                int v = 1;
                double bw = run_case(path, cases[c].noncontig, cases[c].per_rank, cases[c].block,
                                     write, &v);
                verified &= v;
                if (bw > best)
                    best = bw;
                if (write && r + 1 < reps) /* the read cases read the last write */
                    continue;
            }
            if (rank == 0)
                printf("%-10s %-16s %-5s np=%d %10.1f MB/s %s\n", label, cases[c].name,
                       write ? "write" : "read", size, best, write || verified ? "" : "WRONG DATA");
        }
    double open_us, close_us;
    time_open_close(path, 10, &open_us, &close_us); /* warm-up: the first open of a group */
    time_open_close(path, 200, &open_us, &close_us);
    if (rank == 0) {
        printf("%-10s %-16s %-5s np=%d %10.1f us\n", label, "file", "open", size, open_us);
        printf("%-10s %-16s %-5s np=%d %10.1f us\n", label, "file", "close", size, close_us);
        remove(path);
    }
    MPI_Finalize();
    return 0;
}
