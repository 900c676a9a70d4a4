/* Threads of one process on one file handle (MPI_THREAD_MULTIPLE), on every rank:
 * - individual file pointer: two threads append records with MPI_File_write; each record must
 *   land once, none overwritten by the other thread (the pointer is read and advanced as one
 *   step);
 * - atomic mode: one thread rewrites a 4 MiB range with a new byte value each time while
 *   another reads it; every read must see one value only (file locks never exclude threads of
 *   the process that holds them). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amptest.h"

#define RECORDS 400 /* per thread */
#define REC     64
#define BIG     ((int)4 << 20)
#define ROUNDS  60

static MPI_File fh;
static int failures;

typedef struct {
    int id;
    int rc;
} arg_t;

static void *append(void *p)
{
    arg_t *a = p;
    unsigned char rec[REC];
    for (int i = 0; i < RECORDS && a->rc == MPI_SUCCESS; i++) {
        memset(rec, 0, sizeof(rec));
        snprintf((char *)rec, sizeof(rec), "rank %d thread %d record %d", amptest_rank, a->id, i);
        a->rc = MPI_File_write(fh, rec, REC, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    return NULL;
}

static void records(void)
{
    char name[64];
    snprintf(name, sizeof(name), "records.%d.dat", amptest_rank);
    if (!amptest_ok(MPI_File_open(MPI_COMM_SELF, amptest_path(name),
                                  MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
                    "open records"))
        return;
    pthread_t t[2];
    arg_t a[2] = {{0, MPI_SUCCESS}, {1, MPI_SUCCESS}};
    for (int k = 0; k < 2; k++)
        pthread_create(&t[k], NULL, append, &a[k]);
    for (int k = 0; k < 2; k++) {
        pthread_join(t[k], NULL);
        amptest_ok(a[k].rc, "write with the individual pointer");
    }
    MPI_Offset size = 0;
    amptest_ok(MPI_File_get_size(fh, &size), "get_size");
    amptest_check(size == 2 * RECORDS * REC, "%lld bytes written, %d expected", (long long)size,
                  2 * RECORDS * REC);
    unsigned char *all = calloc(2 * RECORDS, REC);
    amptest_ok(MPI_File_read_at(fh, 0, all, 2 * RECORDS * REC, MPI_BYTE, MPI_STATUS_IGNORE),
               "read back");
    char *seen = calloc(2 * RECORDS, 1);
    int bad = 0;
    for (int i = 0; i < 2 * RECORDS; i++) {
        int r = -1, id = -1, n = -1;
        if (sscanf((char *)all + (size_t)i * REC, "rank %d thread %d record %d", &r, &id, &n) !=
                3 ||
            r != amptest_rank || id < 0 || id > 1 || n < 0 || n >= RECORDS)
            bad++;
        else
            seen[id * RECORDS + n]++;
    }
    int missing = 0;
    for (int i = 0; i < 2 * RECORDS; i++)
        missing += seen[i] != 1;
    amptest_check(bad == 0 && missing == 0,
                  "individual pointer shared by two threads: %d slots hold no record, %d records "
                  "are not there exactly once",
                  bad, missing);
    free(seen);
    free(all);
    amptest_ok(MPI_File_close(&fh), "close records");
}

static void *rewrite(void *p)
{
    arg_t *a = p;
    unsigned char *buf = malloc(BIG);
    for (int i = 1; i <= ROUNDS && a->rc == MPI_SUCCESS; i++) {
        memset(buf, i, BIG);
        a->rc = MPI_File_write_at(fh, 0, buf, BIG, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    free(buf);
    return NULL;
}

static void *reread(void *p)
{
    arg_t *a = p;
    unsigned char *buf = malloc(BIG);
    for (int i = 0; i < ROUNDS && a->rc == MPI_SUCCESS; i++) {
        a->rc = MPI_File_read_at(fh, 0, buf, BIG, MPI_BYTE, MPI_STATUS_IGNORE);
        for (int k = 1; k < BIG && a->rc == MPI_SUCCESS; k++)
            if (buf[k] != buf[0]) {
                __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
                break;
            }
    }
    free(buf);
    return NULL;
}

static void atomic_rewrites(void)
{
    char name[64];
    snprintf(name, sizeof(name), "atomic.%d.dat", amptest_rank);
    if (!amptest_ok(MPI_File_open(MPI_COMM_SELF, amptest_path(name),
                                  MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
                    "open atomic"))
        return;
    amptest_ok(MPI_File_set_atomicity(fh, 1), "set_atomicity");
    unsigned char *zero = calloc(1, BIG);
    amptest_ok(MPI_File_write_at(fh, 0, zero, BIG, MPI_BYTE, MPI_STATUS_IGNORE), "first write");
    free(zero);
    pthread_t t[2];
    arg_t a[2] = {{0, MPI_SUCCESS}, {1, MPI_SUCCESS}};
    pthread_create(&t[0], NULL, rewrite, &a[0]);
    pthread_create(&t[1], NULL, reread, &a[1]);
    for (int k = 0; k < 2; k++) {
        pthread_join(t[k], NULL);
        amptest_ok(a[k].rc, k ? "atomic read" : "atomic write");
    }
    amptest_check(failures == 0, "atomic mode: %d of %d reads saw two writes at once", failures,
                  ROUNDS);
    amptest_ok(MPI_File_close(&fh), "close atomic");
}

/* The test library calls MPI_Init; the threads need MPI_THREAD_MULTIPLE. */
int MPI_Init(int *argc, char ***argv)
{
    int provided;
    return MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    int provided = 0;
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (amptest_rank == 0)
            printf("SKIP: the MPI library gives no MPI_THREAD_MULTIPLE\n");
        return amptest_finish();
    }
    records();
    atomic_rewrites();
    return amptest_finish();
}
