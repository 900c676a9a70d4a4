/* Every nonblocking data access routine, completed with every completion routine: MPI_Wait, a
 * loop of MPI_Test, MPI_Waitall/Testall over the access and ordinary requests, MPI_Waitany,
 * MPI_Testany, MPI_Waitsome, MPI_Testsome, MPI_Request_get_status then MPI_Wait, and (writes)
 * MPI_Request_free right after the start, the write then completing by close. One file per
 * completion routine; each routine writes its own region, then reads it back with the matching
 * read routine. Files against a model and the native MPI-IO (diff.sh); reads against the model;
 * statuses count the bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amptest.h"

#define BLK 8192

enum { R_AT, R_INDIV, R_AT_ALL, R_ALL, R_SHARED, R_AT_C, R_INDIV_C, R_AT_ALL_C, R_ALL_C, NR };
static const char *rname[NR] = {"i*_at",   "i*",   "i*_at_all",   "i*_all",  "i*_shared",
                                "i*_at_c", "i*_c", "i*_at_all_c", "i*_all_c"};

enum {
    C_WAIT,
    C_TEST,
    C_WAITALL,
    C_TESTALL,
    C_WAITANY,
    C_TESTANY,
    C_WAITSOME,
    C_TESTSOME,
    C_GETSTATUS,
    C_FREE,
    NC
};
static const char *cname[NC] = {"wait",    "test",     "waitall",  "testall",   "waitany",
                                "testany", "waitsome", "testsome", "getstatus", "free"};

static int have_large(void)
{
#if MPI_VERSION >= 4
    return 1;
#else
    return 0;
#endif
}

/* The region of routine r, rank `rank` (shared-pointer writes go in rank order). */
static MPI_Offset region(int r, int rank)
{
    return ((MPI_Offset)r * amptest_size + rank) * BLK;
}

static unsigned char datum(int c, int r, int rank, int i)
{
    return amptest_byte(rank, ((long long)c * NR + r) * BLK + i);
}

static int start(MPI_File fh, int r, int write, void *buf, MPI_Request *req)
{
    MPI_Offset at = region(r, amptest_rank);
    if (r == R_INDIV || r == R_ALL || r == R_INDIV_C || r == R_ALL_C)
        MPI_File_seek(fh, at, MPI_SEEK_SET);
    switch (r) {
    case R_AT:
        return write ? MPI_File_iwrite_at(fh, at, buf, BLK, MPI_BYTE, req)
                     : MPI_File_iread_at(fh, at, buf, BLK, MPI_BYTE, req);
    case R_INDIV:
        return write ? MPI_File_iwrite(fh, buf, BLK, MPI_BYTE, req)
                     : MPI_File_iread(fh, buf, BLK, MPI_BYTE, req);
    case R_AT_ALL:
        return write ? MPI_File_iwrite_at_all(fh, at, buf, BLK, MPI_BYTE, req)
                     : MPI_File_iread_at_all(fh, at, buf, BLK, MPI_BYTE, req);
    case R_ALL:
        return write ? MPI_File_iwrite_all(fh, buf, BLK, MPI_BYTE, req)
                     : MPI_File_iread_all(fh, buf, BLK, MPI_BYTE, req);
    case R_SHARED:
        return write ? MPI_File_iwrite_shared(fh, buf, BLK, MPI_BYTE, req)
                     : MPI_File_iread_shared(fh, buf, BLK, MPI_BYTE, req);
#if MPI_VERSION >= 4
    case R_AT_C:
        return write ? MPI_File_iwrite_at_c(fh, at, buf, BLK, MPI_BYTE, req)
                     : MPI_File_iread_at_c(fh, at, buf, BLK, MPI_BYTE, req);
    case R_INDIV_C:
        return write ? MPI_File_iwrite_c(fh, buf, BLK, MPI_BYTE, req)
                     : MPI_File_iread_c(fh, buf, BLK, MPI_BYTE, req);
    case R_AT_ALL_C:
        return write ? MPI_File_iwrite_at_all_c(fh, at, buf, BLK, MPI_BYTE, req)
                     : MPI_File_iread_at_all_c(fh, at, buf, BLK, MPI_BYTE, req);
    case R_ALL_C:
        return write ? MPI_File_iwrite_all_c(fh, buf, BLK, MPI_BYTE, req)
                     : MPI_File_iread_all_c(fh, buf, BLK, MPI_BYTE, req);
#endif
    }
    return MPI_ERR_ARG;
}

static void check_count(MPI_Status *st, const char *what)
{
    int n = -1;
    MPI_Get_count(st, MPI_BYTE, &n);
    amptest_check(n == BLK, "%s: status counts %d bytes, expected %d", what, n, BLK);
}

/* Completes `io` with completion routine c, together with an ordinary exchange around the ring
 * for the routines that take several requests. */
static void complete(int c, MPI_Request io, int ring, const char *what)
{
    MPI_Request req[3] = {io, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st[3], one;
    int n = 1, in = -1, out = amptest_rank, flag = 0, idx = -1, cnt = 0, ind[3];
    int left = (amptest_rank + amptest_size - 1) % amptest_size;
    int right = (amptest_rank + 1) % amptest_size;
    if (ring && c >= C_WAITALL && c <= C_TESTSOME) {
        MPI_Irecv(&in, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &req[1]);
        MPI_Isend(&out, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &req[2]);
        n = 3;
    }
    int io_done = 0, left_count = n;
    switch (c) {
    case C_WAIT:
        amptest_ok(MPI_Wait(&req[0], &one), what);
        check_count(&one, what);
        break;
    case C_TEST:
        while (!flag)
            amptest_ok(MPI_Test(&req[0], &flag, &one), what);
        check_count(&one, what);
        break;
    case C_WAITALL:
        amptest_ok(MPI_Waitall(n, req, st), what);
        check_count(&st[0], what);
        break;
    case C_TESTALL:
        while (!flag)
            amptest_ok(MPI_Testall(n, req, &flag, st), what);
        check_count(&st[0], what);
        break;
    case C_WAITANY:
    case C_TESTANY:
        while (left_count > 0) {
            flag = 1;
            if (c == C_WAITANY)
                amptest_ok(MPI_Waitany(n, req, &idx, &one), what);
            else
                amptest_ok(MPI_Testany(n, req, &idx, &flag, &one), what);
            if (!flag)
                continue;
            amptest_check(idx >= 0 && idx < n, "%s: index %d", what, idx);
            if (idx == 0) {
                io_done = 1;
                check_count(&one, what);
            }
            left_count--;
        }
        amptest_check(io_done, "%s: the access never completed", what);
        break;
    case C_WAITSOME:
    case C_TESTSOME:
        while (left_count > 0) {
            if (c == C_WAITSOME)
                amptest_ok(MPI_Waitsome(n, req, &cnt, ind, st), what);
            else
                amptest_ok(MPI_Testsome(n, req, &cnt, ind, st), what);
            for (int k = 0; k < cnt; k++)
                if (ind[k] == 0) {
                    io_done = 1;
                    check_count(&st[k], what);
                }
            left_count -= cnt;
        }
        amptest_check(io_done, "%s: the access never completed", what);
        break;
    case C_GETSTATUS:
        while (!flag)
            amptest_ok(MPI_Request_get_status(req[0], &flag, &one), what);
        check_count(&one, what);
        amptest_ok(MPI_Wait(&req[0], MPI_STATUS_IGNORE), what);
        break;
    case C_FREE:
        amptest_ok(MPI_Request_free(&req[0]), what);
        break;
    }
    for (int k = 0; k < n; k++)
        amptest_check(req[k] == MPI_REQUEST_NULL, "%s: request %d left active", what, k);
    if (n == 3)
        amptest_check(in == left, "%s: the ordinary message carried %d", what, in);
}

/* Routine r on file fh, written or read, completed by c. Shared-pointer accesses take turns. */
static void one(MPI_File fh, int c, int r, int write, unsigned char *buf)
{
    char what[96];
    snprintf(what, sizeof(what), "%s %s completed by %s", rname[r], write ? "write" : "read",
             cname[c]);
    int coll = r == R_AT_ALL || r == R_ALL || r == R_AT_ALL_C || r == R_ALL_C;
    if (!write && c == C_FREE)
        c = C_WAIT; /* a freed read leaves no way to know when the buffer is filled */
    if (r == R_SHARED) {
        MPI_File_seek_shared(fh, region(r, 0), MPI_SEEK_SET);
        for (int turn = 0; turn < amptest_size; turn++) {
            if (turn == amptest_rank) {
                MPI_Request req;
                if (amptest_ok(start(fh, r, write, buf, &req), what))
                    complete(c == C_FREE ? C_WAIT : c, req, 0, what);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        return;
    }
    MPI_Request req = MPI_REQUEST_NULL;
    if (amptest_ok(start(fh, r, write, buf, &req), what))
        complete(c, req, 1, what);
    else if (coll)
        MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    int nr = have_large() ? NR : R_SHARED + 1;
    unsigned char *buf = malloc(BLK);
    char name[32];
    for (int c = 0; c < NC; c++) {
        snprintf(name, sizeof(name), "%s.dat", cname[c]);
        MPI_File fh;
        if (!amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name),
                                      MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                        name))
            break;
        /* a freed write keeps its buffer until the file is closed */
        unsigned char *wbuf[NR];
        for (int r = 0; r < nr; r++) {
            wbuf[r] = malloc(BLK);
            for (int i = 0; i < BLK; i++)
                wbuf[r][i] = datum(c, r, amptest_rank, i);
            one(fh, c, r, 1, wbuf[r]);
        }
        /* a freed write is complete once the file is closed; every one is complete at a sync */
        if (c == C_FREE) {
            MPI_File_close(&fh);
            MPI_File_open(MPI_COMM_WORLD, amptest_path(name), MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        }
        MPI_File_sync(fh);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_File_sync(fh);
        for (int r = 0; r < nr; r++)
            free(wbuf[r]);
        for (int r = 0; r < nr; r++) {
            memset(buf, 0, BLK);
            one(fh, c, r, 0, buf);
            int rank = amptest_rank;
            for (int i = 0; i < BLK; i++)
                if (buf[i] != datum(c, r, rank, i)) {
                    amptest_fail("%s read back by %s: byte %d is %u, expected %u", name, rname[r],
                                 i, buf[i], datum(c, r, rank, i));
                    break;
                }
        }
        amptest_ok(MPI_File_close(&fh), "close");
        MPI_Barrier(MPI_COMM_WORLD);
        if (amptest_rank == 0) {
            size_t len = (size_t)region(nr, 0);
            unsigned char *m = malloc(len);
            for (int r = 0; r < nr; r++)
                for (int rank = 0; rank < amptest_size; rank++)
                    for (int i = 0; i < BLK; i++)
                        m[region(r, rank) + i] = datum(c, r, rank, i);
            amptest_compare_file(name, m, len);
            free(m);
        }
    }
    free(buf);
    return amptest_finish();
}
