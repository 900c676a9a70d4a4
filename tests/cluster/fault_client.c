/* A node loses its file system client in the middle of collective writes: every rank on every
 * node must return an error from the same collective call, and nobody may hang.
 *
 *   fault_client OUTDIR MARKER
 *
 * Every rank writes interleaved 64 KiB blocks with MPI_File_write_at_all, over and over on the
 * same 4 MiB of the file (the object stores keep data in memory), two-phase with one aggregator
 * per node (cb_nodes), so that the node that loses its client writes in every call. After the third
 * call rank 0 creates MARKER (a path outside the cluster's file system); the test script then kills
 * one node's client. The calls go on until one fails; the failing call must be the same on every
 * rank, and then every rank's close returns (whatever it returns). A run in which no call fails
 * within the limit fails. Under the native MPI-IO the same checks run: a rank that returns
 * success where others failed is recorded, not fatal (run.sh runs this under ampio only). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amptest.h"

#define BLOCK    (64 * 1024)
#define PER_CALL 4 /* blocks per rank and call */
#define MAX_CALL 400

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    if (argc < 3) {
        amptest_fail("usage: fault_client OUTDIR MARKER");
        return amptest_finish();
    }
    const char *marker = argv[2];
    char host[256] = "", (*hosts)[256] = calloc((size_t)amptest_size, 256);
    gethostname(host, sizeof(host) - 1);
    MPI_Allgather(host, 256, MPI_CHAR, hosts, 256, MPI_CHAR, MPI_COMM_WORLD);
    int nnodes = 0;
    for (int r = 0; r < amptest_size; r++) {
        int seen = 0;
        for (int q = 0; q < r; q++)
            seen |= !strcmp(hosts[q], hosts[r]);
        nnodes += !seen;
    }
    free(hosts);
    MPI_Info info;
    MPI_Info_create(&info);
    char v[16];
    snprintf(v, sizeof(v), "%d", nnodes);
    MPI_Info_set(info, "cb_nodes", v);
    MPI_Info_set(info, "ampio_fcoll", "two_phase");
    /* stripes small enough that every aggregator's domain holds some of each call's 4 MiB */
    MPI_Info_set(info, "striping_unit", "65536");
    MPI_Info_set(info, "striping_factor", "2");
    MPI_File fh;
    if (!amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path("fault.dat"),
                                  MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
                    "open"))
        return amptest_finish();
    MPI_Info_free(&info);
    MPI_Datatype ft;
    MPI_Type_vector(PER_CALL, BLOCK, BLOCK * amptest_size, MPI_BYTE, &ft);
    MPI_Type_commit(&ft);
    amptest_ok(MPI_File_set_view(fh, (MPI_Offset)amptest_rank * BLOCK, MPI_BYTE, ft, "native",
                                 MPI_INFO_NULL),
               "set_view");
    unsigned char *buf = malloc(BLOCK * PER_CALL);
    for (int i = 0; i < BLOCK * PER_CALL; i++)
        buf[i] = amptest_byte(amptest_rank, i);
    int failed_at = -1, rc = MPI_SUCCESS;
    double t0 = MPI_Wtime();
    for (int call = 0; call < MAX_CALL && failed_at < 0; call++) {
        MPI_Status st;
        rc = MPI_File_write_at_all(fh, 0, buf, BLOCK * PER_CALL, MPI_BYTE, &st);
        if (rc != MPI_SUCCESS)
            failed_at = call;
        if (call == 2 && amptest_rank == 0) {
            int fd = open(marker, O_CREAT | O_WRONLY, 0644);
            if (fd >= 0)
                close(fd);
        }
    }
    double secs = MPI_Wtime() - t0;
    /* the same call failed on every rank */
    int lo = 0, hi = 0;
    MPI_Allreduce(&failed_at, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&failed_at, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0, cls = -1;
    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, msg, &len);
        MPI_Error_class(rc, &cls);
    }
    printf("rank %d on %s: %s at call %d (class %d): %s\n", amptest_rank, host,
           failed_at < 0 ? "no error" : "error", failed_at, cls, msg);
    fflush(stdout);
    if (amptest_under_ampio()) {
        amptest_check(failed_at >= 0, "no collective write failed in %d calls (%.0f s)", MAX_CALL,
                      secs);
        amptest_check(lo == hi, "the failing call differs between ranks: %d to %d", lo, hi);
        amptest_check(rc == MPI_SUCCESS || cls == MPI_ERR_IO || cls == MPI_ERR_FILE ||
                          cls == MPI_ERR_ACCESS || cls == MPI_ERR_NO_SPACE || cls == MPI_ERR_OTHER,
                      "error of class %d: %s", cls, msg);
    } else if (lo != hi) {
        fprintf(stderr, "NATIVE-DEFECT [rank %d]: the failing call differs between ranks\n",
                amptest_rank);
    }
    MPI_File_close(&fh); /* must return; on the node without its client it cannot succeed */
    MPI_Type_free(&ft);
    free(buf);
    return amptest_finish();
}
