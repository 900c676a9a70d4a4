/* MPI_THREAD_MULTIPLE: several threads of each rank start nonblocking accesses on one file at
 * once and complete them each its own way (MPI_Wait, a loop of MPI_Test, MPI_Waitall of all
 * its requests), while thread 0 also runs nonblocking collective writes of its own region (the
 * only thread that calls collectives on the file, so every rank calls them in one order).
 * Every thread writes its own regions, then reads them back; the file against the model and
 * the native MPI-IO. Both families grant MPI_THREAD_MULTIPLE: not granted, the test fails. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amptest.h"

#define NT   4 /* threads per rank */
#define NOPS 8 /* accesses per thread */
#define BLK  16384

static MPI_File fh;
static int failures[NT];
static char first[NT][256];

/* The region of access k of thread t on rank r; collective ones follow all independent ones. */
static MPI_Offset region(int r, int t, int k)
{
    return (((MPI_Offset)k * NT + t) * amptest_size + r) * BLK;
}

static unsigned char datum(int r, int t, int k, int i)
{
    return amptest_byte(r, ((long long)k * NT + t) * BLK + i);
}

static void fail(int t, const char *what, int rc)
{
    if (!failures[t]++)
        snprintf(first[t], sizeof(first[t]), "thread %d: %s (rc %d)", t, what, rc);
}

static void *thread_main(void *arg)
{
    int t = (int)(long)arg, r = amptest_rank;
    unsigned char *buf = malloc((size_t)NOPS * BLK), *back = calloc(NOPS, BLK);
    MPI_Request req[NOPS];
    for (int k = 0; k < NOPS; k++)
        for (int i = 0; i < BLK; i++)
            buf[(size_t)k * BLK + i] = datum(r, t, k, i);
    /* writes: collective ones on thread 0, independent ones elsewhere; completed by Waitall */
    for (int k = 0; k < NOPS; k++) {
        int rc = t == 0 ? MPI_File_iwrite_at_all(fh, region(r, t, k), buf + (size_t)k * BLK, BLK,
                                                 MPI_BYTE, &req[k])
                        : MPI_File_iwrite_at(fh, region(r, t, k), buf + (size_t)k * BLK, BLK,
                                             MPI_BYTE, &req[k]);
        if (rc != MPI_SUCCESS)
            fail(t, "write start", rc);
    }
    int rc = MPI_Waitall(NOPS, req, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS)
        fail(t, "Waitall of the writes", rc);
    /* reads: independent, each completed by MPI_Wait (even k) or a loop of MPI_Test (odd k) */
    for (int k = 0; k < NOPS; k++) {
        rc = MPI_File_iread_at(fh, region(r, t, k), back + (size_t)k * BLK, BLK, MPI_BYTE, &req[k]);
        if (rc != MPI_SUCCESS)
            fail(t, "read start", rc);
    }
    for (int k = 0; k < NOPS; k++) {
        MPI_Status st;
        int flag = 0, n = -1;
        if (k % 2 == 0)
            rc = MPI_Wait(&req[k], &st);
        else
            for (rc = MPI_SUCCESS; rc == MPI_SUCCESS && !flag;)
                rc = MPI_Test(&req[k], &flag, &st);
        if (rc != MPI_SUCCESS)
            fail(t, "read completion", rc);
        MPI_Get_count(&st, MPI_BYTE, &n);
        if (n != BLK)
            fail(t, "read status count", n);
    }
    if (memcmp(buf, back, (size_t)NOPS * BLK) != 0)
        fail(t, "data read back differ from the data written", 0);
    free(buf);
    free(back);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    amptest_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (!amptest_check(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not granted (%d)",
                       provided))
        return amptest_finish();
    if (!amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path("threads.dat"),
                                  MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                    "open"))
        return amptest_finish();
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        pthread_create(&th[t], NULL, thread_main, (void *)(long)t);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < NT; t++)
        amptest_check(failures[t] == 0, "%d failure(s), the first: %s", failures[t], first[t]);
    amptest_ok(MPI_File_close(&fh), "close");
    MPI_Barrier(MPI_COMM_WORLD);
    if (amptest_rank == 0) {
        size_t len = (size_t)region(0, 0, NOPS);
        unsigned char *m = malloc(len);
        for (int k = 0; k < NOPS; k++)
            for (int t = 0; t < NT; t++)
                for (int r = 0; r < amptest_size; r++)
                    for (int i = 0; i < BLK; i++)
                        m[region(r, t, k) + i] = datum(r, t, k, i);
        amptest_compare_file("threads.dat", m, len);
        free(m);
    }
    return amptest_finish();
}
