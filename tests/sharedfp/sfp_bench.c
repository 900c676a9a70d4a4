/* Shared file pointer benchmark (not a test). For each component of ampio_sharedfp (under
 * ampio) or once (on the native MPI-IO, which ignores the hint), every rank makes N calls of
 * MPI_File_write_shared of B bytes, then M calls of MPI_File_write_ordered of B bytes. Prints
 * the slowest rank's time of each phase; write_shared is timed up to the last call and again
 * including the MPI_File_sync that merges deferred data (individual).
 *
 *   ampiorun -n 2 sfp_bench DIR [N=2000] [B=64] [M=200]   (and mpiexec -n 2 ... for native) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amptest.h"

int MPI_Init(int *argc, char ***argv)
{
    int provided; /* the service-thread component needs MPI_THREAD_MULTIPLE */
    return MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
}

static double slowest(double t)
{
    double m;
    MPI_Reduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return m;
}

static void bench(const char *comp, int n, int b, int m)
{
    char name[64];
    snprintf(name, sizeof(name), "bench_%s.dat", comp);
    char path[4096];
    snprintf(path, sizeof(path), "%s", amptest_path(name));
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "ampio_sharedfp", comp);
    MPI_File fh;
    double t0 = MPI_Wtime();
    if (!amptest_ok(
            MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh),
            "MPI_File_open"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    double open = MPI_Wtime() - t0;
    MPI_Info_free(&info);
    char method[MPI_MAX_INFO_VAL + 1] = "-";
    MPI_Info got;
    int flag = 0;
    MPI_File_get_info(fh, &got);
    MPI_Info_get(got, "ampio_sharedfp_method", MPI_MAX_INFO_VAL, method, &flag);
    MPI_Info_free(&got);
    char *buf = malloc((size_t)b);
    memset(buf, 'a' + amptest_rank % 26, (size_t)b);

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < n; i++)
        MPI_File_write_shared(fh, buf, b, MPI_BYTE, MPI_STATUS_IGNORE);
    double shared = MPI_Wtime() - t0;
    MPI_File_sync(fh);
    double synced = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < m; i++)
        MPI_File_write_ordered(fh, buf, b, MPI_BYTE, MPI_STATUS_IGNORE);
    double ordered = MPI_Wtime() - t0;
    t0 = MPI_Wtime();
    MPI_File_close(&fh);
    double close = MPI_Wtime() - t0;
    free(buf);
    open = slowest(open), shared = slowest(shared), synced = slowest(synced);
    ordered = slowest(ordered), close = slowest(close);
    if (amptest_rank == 0) {
        printf("%-12s %-11s open %7.2f ms  write_shared %8.2f ms (%6.2f us/call)  +sync %8.2f "
               "ms  write_ordered %8.2f ms (%6.2f us/call)  close %6.2f ms\n",
               amptest_under_ampio() ? comp : "native", flag ? method : "-", open * 1e3,
               shared * 1e3, shared * 1e6 / n, synced * 1e3, ordered * 1e3, ordered * 1e6 / m,
               close * 1e3);
        fflush(stdout);
        MPI_File_delete(path, MPI_INFO_NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    int n = argc > 2 ? atoi(argv[2]) : 2000, b = argc > 3 ? atoi(argv[3]) : 64;
    int m = argc > 4 ? atoi(argv[4]) : 200;
    static const char *comps[] = {"auto", "shm", "rma", "lockedfile", "addproc", "individual"};
    if (amptest_rank == 0)
        printf("%d ranks, %d x write_shared and %d x write_ordered of %d bytes per rank\n",
               amptest_size, n, m, b);
    for (int c = 0; c < (amptest_under_ampio() ? 6 : 1); c++)
        bench(comps[c], n, b, m);
    return amptest_finish();
}
