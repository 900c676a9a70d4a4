/* One run of the fault sweep (fault_sweep.sh sets AMPIO_FAULT_* so that one call of ampio
 * fails). The workload covers the collective algorithms (two-phase, dynamic and static
 * segmentation, each with several rounds), the shared file pointer (write_shared,
 * write_ordered, read_ordered) and nonblocking accesses, each op on a region of its own.
 * Checked here:
 *   - a collective op fails on every rank or on none, and a failure has the class the fault
 *     kind (argv[2]) allows; EINTR and short transfers allow none;
 *   - every op reported successful left its bytes in the file (read back with POSIX calls
 *     after the close, when the fault has fired and nothing fails any more);
 *   - the descriptors open before the file was opened are all that remain after its close.
 * Rank 0 writes the number of ops that failed to "calls-failed" in the output directory.
 * A hang is the sweep's timeout. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amptest.h"

#define B    6000 /* bytes per rank and op: several rounds of the 4 KiB collective buffer */
#define NOPS 64

static const char *kind;
static int op_ok[NOPS];
static int nops;
static int calls_failed; /* ops that failed on some rank: the same count on every rank */

/* The classes a failure may have under the fault kind. */
static int allowed(int cls)
{
    if (strcmp(kind, "alloc") == 0)
        return cls == MPI_ERR_NO_MEM;
    if (strcmp(kind, "eio") == 0)
        return cls == MPI_ERR_IO;
    if (strcmp(kind, "enospc") == 0)
        return cls == MPI_ERR_NO_SPACE;
    if (strcmp(kind, "comm") == 0)
        return cls == MPI_ERR_OTHER;
    return 0; /* eintr, short, none: nothing may fail */
}

static int class_of(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

/* Records op `what`: collective ops fail everywhere or nowhere. Returns whether it succeeded
 * on every rank (then its bytes are checked at the end). */
static int judge(int rc, int collective, const char *what)
{
    int cls = class_of(rc), failed = rc != MPI_SUCCESS, nfailed = 0;
    if (failed) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        printf("rank %d: %s failed: %s\n", amptest_rank, what, text);
        amptest_check(allowed(cls), "%s: class %d is not one the fault kind %s allows (%s)", what,
                      cls, kind, text);
    }
    MPI_Allreduce(&failed, &nfailed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (collective)
        amptest_check(nfailed == 0 || nfailed == amptest_size,
                      "%s: failed on %d of %d ranks of a collective call", what, nfailed,
                      amptest_size);
    calls_failed += nfailed > 0;
    if (nops < NOPS)
        op_ok[nops++] = nfailed == 0;
    return nfailed == 0;
}

static int count_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static unsigned char *pattern(int op, int rank)
{
    static unsigned char buf[B];
    for (int i = 0; i < B; i++)
        buf[i] = amptest_byte(rank + 31 * op, i);
    return buf;
}

/* Collective writes through one algorithm: blocks in rank order (op a), then chunks of 500
 * bytes dealt round robin (op a + 1), read back at once through the same view. */
static void collective_ops(MPI_File fh, int op, MPI_Offset base)
{
    int np = amptest_size, r = amptest_rank;
    static unsigned char back[B];
    unsigned char *mine = pattern(op, r);
    int rc =
        MPI_File_write_at_all(fh, base + (MPI_Offset)r * B, mine, B, MPI_BYTE, MPI_STATUS_IGNORE);
    judge(rc, 1, "write_at_all blocks");
    rc = MPI_File_read_at_all(fh, base + (MPI_Offset)r * B, back, B, MPI_BYTE, MPI_STATUS_IGNORE);
    if (judge(rc, 1, "read_at_all blocks") && op_ok[nops - 2])
        amptest_check(memcmp(back, mine, B) == 0, "read_at_all blocks: wrong bytes");

    MPI_Datatype chunks, file;
    MPI_Type_vector(B / 500, 500, 500 * np, MPI_BYTE, &chunks);
    MPI_Type_create_resized(chunks, 0, (MPI_Aint)B * np, &file);
    MPI_Type_commit(&file);
    MPI_Type_free(&chunks);
    mine = pattern(op + 1, r);
    rc = MPI_File_set_view(fh, base + (MPI_Offset)np * B + 500 * r, MPI_BYTE, file, "native",
                           MPI_INFO_NULL);
    if (judge(rc, 1, "set_view")) {
        rc = MPI_File_write_at_all(fh, 0, mine, B, MPI_BYTE, MPI_STATUS_IGNORE);
        judge(rc, 1, "write_at_all chunks");
        rc = MPI_File_read_at_all(fh, 0, back, B, MPI_BYTE, MPI_STATUS_IGNORE);
        if (judge(rc, 1, "read_at_all chunks") && op_ok[nops - 2])
            amptest_check(memcmp(back, mine, B) == 0, "read_at_all chunks: wrong bytes");
        judge(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), 1,
              "set_view back");
    } else {
        nops += 3; /* not run: not checked */
    }
    MPI_Type_free(&file);
}

/* The bytes of rank q's write with pattern `pat` are in `name` at `base`: blocks in rank order,
 * or (`chunked`) chunks of 500 bytes dealt round robin. Rank 0, after the close. */
static void check_file(const char *name, int pat, MPI_Offset base, int chunked)
{
    int np = amptest_size;
    FILE *f = fopen(amptest_path(name), "rb");
    if (!amptest_check(f != NULL, "cannot open %s", name))
        return;
    unsigned char *got = calloc((size_t)np * B, 1);
    size_t n = fseek(f, (long)base, SEEK_SET) == 0 ? fread(got, 1, (size_t)np * B, f) : 0;
    fclose(f);
    int ok = n == (size_t)np * B;
    for (int q = 0; ok && q < np; q++) {
        const unsigned char *want = pattern(pat, q);
        for (int i = 0; ok && i < B; i++) {
            size_t pos = !chunked
                             ? (size_t)q * B + (size_t)i
                             : (size_t)(i / 500) * 500 * (size_t)np + (size_t)q * 500 + i % 500;
            ok = got[pos] == want[i];
        }
    }
    amptest_check(ok, "%s: bytes of pattern %d, reported written, are not in the file", name, pat);
    free(got);
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    kind = argc > 2 ? argv[2] : "none";
    setvbuf(stdout, NULL, _IOLBF, 0);
    int fds_before = count_fds();
    static const char *algs[] = {"two_phase", "dynamic_seg", "static_seg"};
    int first[3] = {0};
    int opened[3] = {0};
    for (int a = 0; a < 3; a++) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "ampio_fcoll", algs[a]);
        MPI_Info_set(info, "cb_buffer_size", "4096");
        MPI_Info_set(info, "ampio_pipeline", a == 1 ? "false" : "true");
        char name[64];
        snprintf(name, sizeof(name), "coll_%s.dat", algs[a]);
        MPI_File fh = MPI_FILE_NULL;
        int rc = MPI_File_open(MPI_COMM_WORLD, amptest_path(name), MPI_MODE_RDWR | MPI_MODE_CREATE,
                               info, &fh);
        MPI_Info_free(&info);
        opened[a] = judge(rc, 1, "open");
        first[a] = nops; /* ops of this file start after its open */
        if (opened[a]) {
            collective_ops(fh, first[a], 0);
            judge(MPI_File_close(&fh), 1, "close");
        } else if (fh != MPI_FILE_NULL) {
            MPI_File_close(&fh);
        }
    }

    /* shared file pointer and nonblocking accesses */
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, amptest_path("sfp.dat"), MPI_MODE_RDWR | MPI_MODE_CREATE,
                           MPI_INFO_NULL, &fh);
    int sfp_open = judge(rc, 1, "open sfp.dat");
    int ordered_op = -1, shared_op = -1, nb_op = -1, nball_op = -1;
    MPI_Offset region = (MPI_Offset)amptest_size * B;
    if (sfp_open) {
        unsigned char *mine = pattern(100, amptest_rank);
        static unsigned char back[B];
        ordered_op = nops;
        rc = MPI_File_write_ordered(fh, mine, B, MPI_BYTE, MPI_STATUS_IGNORE);
        if (judge(rc, 1, "write_ordered")) {
            judge(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), 1, "seek_shared");
            rc = MPI_File_read_ordered(fh, back, B, MPI_BYTE, MPI_STATUS_IGNORE);
            if (judge(rc, 1, "read_ordered") && op_ok[nops - 2])
                amptest_check(memcmp(back, mine, B) == 0, "read_ordered: wrong bytes");
        }
        rc = MPI_File_seek_shared(fh, region, MPI_SEEK_SET);
        if (judge(rc, 1, "seek_shared to the shared region")) {
            shared_op = nops;
            mine = pattern(101, amptest_rank);
            judge(MPI_File_write_shared(fh, mine, B, MPI_BYTE, MPI_STATUS_IGNORE), 0,
                  "write_shared");
        }
        judge(MPI_File_sync(fh), 1, "sync"); /* deferred shared data takes its place */
        MPI_Request req = MPI_REQUEST_NULL;
        nb_op = nops;
        mine = pattern(102, amptest_rank);
        rc = MPI_File_iwrite_at(fh, 2 * region + (MPI_Offset)amptest_rank * B, mine, B, MPI_BYTE,
                                &req);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        judge(rc, 0, "iwrite_at");
        nball_op = nops;
        unsigned char *mine2 = pattern(103, amptest_rank);
        rc = MPI_File_iwrite_at_all(fh, 3 * region + (MPI_Offset)amptest_rank * B, mine2, B,
                                    MPI_BYTE, &req);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        judge(rc, 1, "iwrite_at_all");
        judge(MPI_File_close(&fh), 1, "close sfp.dat");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int fds_after = count_fds();
    amptest_check(fds_after == fds_before, "%d descriptors before the files, %d after", fds_before,
                  fds_after);

    if (amptest_rank == 0) {
        for (int a = 0; a < 3; a++) {
            char name[64];
            snprintf(name, sizeof(name), "coll_%s.dat", algs[a]);
            if (opened[a] && op_ok[first[a]])
                check_file(name, first[a], 0, 0);
            if (opened[a] && op_ok[first[a] + 2] && op_ok[first[a] + 3])
                check_file(name, first[a] + 1, (MPI_Offset)amptest_size * B, 1);
        }
    }
    if (sfp_open && amptest_rank == 0) {
        /* ordered: blocks in rank order at 0; shared: each rank's block once in the region;
         * nonblocking: blocks in rank order */
        FILE *f = fopen(amptest_path("sfp.dat"), "rb");
        unsigned char *got = malloc((size_t)4 * region);
        size_t n = f ? fread(got, 1, (size_t)4 * region, f) : 0;
        if (f)
            fclose(f);
        int ops[3] = {ordered_op, nb_op, nball_op}, pats[3] = {100, 102, 103};
        MPI_Offset at[3] = {0, 2 * region, 3 * region};
        for (int k = 0; k < 3; k++) {
            if (ops[k] < 0 || !op_ok[ops[k]])
                continue;
            for (int q = 0; q < amptest_size; q++) {
                size_t pos = (size_t)(at[k] + (MPI_Offset)q * B);
                amptest_check(n >= pos + B && memcmp(got + pos, pattern(pats[k], q), B) == 0,
                              "sfp.dat: the block of rank %d of op %d is not in the file", q,
                              ops[k]);
            }
        }
        if (shared_op >= 0 && op_ok[shared_op]) {
            for (int q = 0; q < amptest_size; q++) {
                int found = 0;
                for (int s = 0; s < amptest_size; s++)
                    found += n >= (size_t)(region + (MPI_Offset)(s + 1) * B) &&
                             memcmp(got + region + (size_t)s * B, pattern(101, q), B) == 0;
                amptest_check(found == 1, "sfp.dat: write_shared block of rank %d found %d times",
                              q, found);
            }
        }
        free(got);
    }
    /* for the sweep, in a file: launchers interleave the ranks' output streams within lines */
    if (amptest_rank == 0) {
        FILE *f = fopen(amptest_path("calls-failed"), "w");
        amptest_check(f && fprintf(f, "%d\n", calls_failed) > 0 && fclose(f) == 0,
                      "cannot record the failed calls");
    }
    return amptest_finish();
}
