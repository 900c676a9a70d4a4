/* Failures of the file system itself, on a small tmpfs mounted by fs_run.sh (argv[1]).
 *
 *   err_fs DIR full        DIR is a 1 MiB file system: writes past it fail with
 *                          MPI_ERR_NO_SPACE (collective ones on every rank), nothing hangs,
 *                          and what was written before (or fitted) is intact; a
 *                          nonblocking collective write reports it at MPI_Wait (or in the
 *                          status of MPI_Waitall) on every rank
 *   err_fs DIR ro-prepare  writes ro.dat, which ro-check expects
 *   err_fs DIR ro-check    DIR is mounted read-only: opening for writing, creating and
 *                          deleting fail with MPI_ERR_READ_ONLY; reading works */
#include "errtest.h"

#define MiB      (1 << 20)
#define HEADER   (64 << 10) /* written first, must survive everything */
#define PIECE    4096       /* interleaving unit of the collective writes */
#define RO_BLOCK 4096

static char dir[4096];

static const char *in_dir(const char *name)
{
    static char path[4608];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return path;
}

/* Byte `i` of the file "full" tests write: a pattern of the file offset. */
static unsigned char full_byte(long long i)
{
    return amptest_byte(7, i);
}

/* Reads `name` (POSIX) and checks: the header intact, the ranges in `whole` (start, end pairs,
 * -1 ended) intact, every other byte either what was meant or zero (never written). */
static void check_full_file(const char *name, const long long *whole, const char *what)
{
    int fd = open(in_dir(name), O_RDONLY);
    if (!amptest_check(fd >= 0, "%s: cannot open %s", what, name))
        return;
    unsigned char *buf = malloc(4 * MiB);
    ssize_t n = read(fd, buf, 4 * MiB);
    close(fd);
    amptest_check(n >= HEADER, "%s: %s has %zd bytes, less than its header", what, name, n);
    long long bad = -1;
    for (long long i = 0; i < n && bad < 0; i++) {
        int must = i < HEADER;
        for (const long long *w = whole; *w >= 0; w += 2)
            must |= i >= w[0] && i < w[1];
        if (buf[i] != full_byte(i) && (must || buf[i] != 0))
            bad = i;
    }
    amptest_check(bad < 0, "%s: byte %lld of %s is %#x, expected %#x%s", what, bad, name,
                  bad >= 0 ? buf[bad] : 0, bad >= 0 ? full_byte(bad) : 0,
                  bad >= 0 && bad < HEADER ? " (in the header written before)" : "");
    free(buf);
}

static unsigned char *pattern(long long from, long long len)
{
    unsigned char *p = malloc((size_t)len);
    for (long long i = 0; i < len; i++)
        p[i] = full_byte(from + i);
    return p;
}

/* Rank 0 writes the header every test starts with; the others wait for it. */
static void write_header(MPI_File fh)
{
    unsigned char *head = pattern(0, HEADER);
    if (amptest_rank == 0)
        amptest_ok(MPI_File_write_at(fh, 0, head, HEADER, MPI_BYTE, MPI_STATUS_IGNORE),
                   "write of the header");
    free(head);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Opens `name` with the default hints and writes the header; 0 when the open failed. */
static int open_with_header(const char *name, MPI_File *fh)
{
    if (!amptest_ok(MPI_File_open(MPI_COMM_WORLD, in_dir(name), MPI_MODE_RDWR | MPI_MODE_CREATE,
                                  MPI_INFO_NULL, fh),
                    "open"))
        return 0;
    write_header(*fh);
    return 1;
}

/* Rank 0 deletes `name` once every rank is done with it, so the next test has the space. */
static void delete_to_free(const char *name)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (amptest_rank == 0)
        amptest_ok(MPI_File_delete(in_dir(name), MPI_INFO_NULL), "delete to free the space");
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Each rank writes its own contiguous part, more than the file system holds in all. */
static void full_independent(void)
{
    const char *name = "independent.dat";
    MPI_File fh;
    if (!open_with_header(name, &fh))
        return;
    long long part = 2 * MiB / amptest_size, at = HEADER + amptest_rank * part;
    unsigned char *data = pattern(at, part);
    int rc = MPI_File_write_at(fh, at, data, (int)part, MPI_BYTE, MPI_STATUS_IGNORE);
    free(data);
    if (rc != MPI_SUCCESS)
        amptest_class(rc, MPI_ERR_NO_SPACE, "independent write past the end of space");
    int failed = rc != MPI_SUCCESS, failures = 0;
    MPI_Allreduce(&failed, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (amptest_rank == 0)
        amptest_check(failures > 0, "2 MiB went into a 1 MiB file system without an error");
    amptest_ok(MPI_File_close(&fh), "close after a full file system");

    /* the parts of ranks that succeeded must be whole */
    long long *whole = malloc(sizeof(long long) * (2 * (size_t)amptest_size + 1));
    int *ok = malloc(sizeof(int) * (size_t)amptest_size);
    int mine = !failed;
    MPI_Allgather(&mine, 1, MPI_INT, ok, 1, MPI_INT, MPI_COMM_WORLD);
    int k = 0;
    for (int r = 0; r < amptest_size; r++) {
        if (ok[r]) {
            whole[k++] = HEADER + r * part;
            whole[k++] = HEADER + (r + 1) * part;
        }
    }
    whole[k] = -1;
    if (amptest_rank == 0)
        check_full_file(name, whole, "independent writes");
    free(whole);
    free(ok);
    delete_to_free(name);
}

/* Collective writes with each algorithm: every rank fails, the header survives. */
static void full_collective(const char *fcoll)
{
    char name[64], what[128];
    snprintf(name, sizeof(name), "collective-%s.dat", fcoll);
    snprintf(what, sizeof(what), "write_all past the end of space with %s", fcoll);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "ampio_fcoll", fcoll);
    MPI_Info_set(info, "cb_buffer_size", "256K");
    MPI_File fh;
    int rc =
        MPI_File_open(MPI_COMM_WORLD, in_dir(name), MPI_MODE_RDWR | MPI_MODE_CREATE, info, &fh);
    MPI_Info_free(&info);
    if (!amptest_ok(rc, "open"))
        return;
    /* the header in interleaved pieces: it fits */
    MPI_Datatype ft;
    MPI_Type_vector(1024, PIECE, PIECE * amptest_size, MPI_BYTE, &ft); /* 4 MiB per rank */
    MPI_Type_commit(&ft);
    amptest_ok(MPI_File_set_view(fh, (MPI_Offset)amptest_rank * PIECE, MPI_BYTE, ft, "native",
                                 MPI_INFO_NULL),
               "set_view");
    long long head_mine = HEADER / amptest_size / PIECE * PIECE;
    long long total = 2 * MiB / amptest_size / PIECE * PIECE; /* the rest overflows */
    unsigned char *data = malloc((size_t)(head_mine + total));
    for (long long i = 0; i < head_mine + total; i++) {
        long long piece = i / PIECE,
                  off = piece * amptest_size * PIECE + (long long)amptest_rank * PIECE + i % PIECE;
        data[i] = full_byte(off);
    }
    if (HEADER % (amptest_size * PIECE) != 0 && amptest_rank == 0)
        amptest_fail("the header is no whole number of interleaving rounds");
    amptest_ok(MPI_File_write_all(fh, data, (int)head_mine, MPI_BYTE, MPI_STATUS_IGNORE),
               "write_all of the header");
    rc = MPI_File_write_all(fh, data + head_mine, (int)total, MPI_BYTE, MPI_STATUS_IGNORE);
    errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_NO_SPACE, what);
    free(data);
    /* the file stays usable: the header reads back */
    unsigned char *back = malloc((size_t)head_mine);
    amptest_ok(MPI_File_read_at_all(fh, 0, back, (int)head_mine, MPI_BYTE, MPI_STATUS_IGNORE),
               "read_at_all of the header");
    int same = 1;
    for (long long i = 0; i < head_mine && same; i++) {
        long long piece = i / PIECE;
        same = back[i] == full_byte(piece * amptest_size * PIECE + (long long)amptest_rank * PIECE +
                                    i % PIECE);
    }
    amptest_check(same, "%s: the header read back differs", what);
    free(back);
    amptest_ok(MPI_File_close(&fh), "close after a full file system");
    MPI_Type_free(&ft);
    long long none = -1;
    if (amptest_rank == 0)
        check_full_file(name, &none, what);
    delete_to_free(name);
}

/* Collective calls the owners make, one after another (each rank a contiguous block, in rank
 * order), until the space runs out: from the second call on they write before the call is
 * described, and the call that overflows must still fail on every rank, with every earlier
 * call's data intact. */
static void full_owners(void)
{
    const char *name = "owners.dat", *what = "write_at_all of owners' blocks past the end of space";
    MPI_File fh;
    if (!open_with_header(name, &fh))
        return;
    const long long chunk = 32 << 10, calls = 4 * MiB / (chunk * amptest_size);
    long long k = 0;
    for (; k < calls; k++) {
        long long at = HEADER + (k * amptest_size + amptest_rank) * chunk;
        unsigned char *data = pattern(at, chunk);
        int rc = MPI_File_write_at_all(fh, at, data, (int)chunk, MPI_BYTE, MPI_STATUS_IGNORE);
        free(data);
        int failed = rc != MPI_SUCCESS, any = 0;
        MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        if (any) {
            errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_NO_SPACE, what);
            break;
        }
    }
    amptest_check(k > 1 && k < calls, "%s: the space ran out at call %lld of %lld", what, k, calls);
    amptest_ok(MPI_File_close(&fh), "close after a full file system");
    long long whole[3] = {HEADER, HEADER + k * amptest_size * chunk, -1};
    if (amptest_rank == 0)
        check_full_file(name, whole, what);
    delete_to_free(name);
}

/* Noncontiguous independent writes through data sieving, and preallocation. */
static void full_other(void)
{
    const char *name = "sieved.dat";
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_write", "enable");
    MPI_File fh;
    int rc =
        MPI_File_open(MPI_COMM_WORLD, in_dir(name), MPI_MODE_RDWR | MPI_MODE_CREATE, info, &fh);
    MPI_Info_free(&info);
    if (!amptest_ok(rc, "open"))
        return;
    write_header(fh);
    /* 1 MiB in 1 KiB pieces, every other KiB after the header, from rank 0 alone */
    MPI_Datatype ft;
    MPI_Type_vector(1024, 1024, 2048, MPI_BYTE, &ft);
    MPI_Type_commit(&ft);
    amptest_ok(MPI_File_set_view(fh, HEADER, MPI_BYTE, ft, "native", MPI_INFO_NULL), "set_view");
    MPI_Type_free(&ft);
    if (amptest_rank == 0) {
        unsigned char *data = malloc(MiB);
        for (int i = 0; i < MiB; i++)
            data[i] = full_byte(HEADER + (i / 1024) * 2048 + i % 1024);
        rc = MPI_File_write_at(fh, 0, data, MiB, MPI_BYTE, MPI_STATUS_IGNORE);
        amptest_class(rc, MPI_ERR_NO_SPACE, "data sieving write past the end of space");
        free(data);
    }
    errtest_class_all(MPI_COMM_WORLD, MPI_File_preallocate(fh, 8 * MiB), MPI_ERR_NO_SPACE,
                      "preallocate past the end of space");
    amptest_ok(MPI_File_close(&fh), "close");
    long long none = -1;
    if (amptest_rank == 0)
        check_full_file(name, &none, "data sieving write");
    delete_to_free(name);
}

/* Nonblocking collective writes past the end of space: each rank's part of the header fits,
 * the rest overflows on some rank, and the error arrives at completion on every rank: at
 * MPI_Wait after a loop of MPI_Test, and as MPI_ERR_IN_STATUS of an MPI_Waitall that also
 * completes an ordinary exchange. The file stays usable and the header intact. */
static void full_nonblocking(int mixed)
{
    const char *name = mixed ? "nonblocking-waitall.dat" : "nonblocking-wait.dat";
    const char *what = mixed ? "iwrite_at_all past the end of space, completed by MPI_Waitall"
                             : "iwrite_at_all past the end of space, completed by MPI_Wait";
    MPI_File fh;
    if (!open_with_header(name, &fh))
        return;
    long long part = 2 * MiB / amptest_size; /* every rank's part lies past the header */
    MPI_Offset at = HEADER + (MPI_Offset)amptest_rank * part;
    unsigned char *data = pattern(at, part);
    MPI_Request req[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int rc = MPI_File_iwrite_at_all(fh, at, data, (int)part, MPI_BYTE, &req[0]);
    if (rc == MPI_SUCCESS && !mixed) {
        int flag = 0;
        for (int i = 0; i < 3 && rc == MPI_SUCCESS && !flag; i++)
            rc = MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE);
        MPI_Status st;
        if (rc == MPI_SUCCESS && !flag) {
            rc = MPI_Wait(&req[0], &st);
            if (rc != MPI_SUCCESS)
                amptest_check(st.MPI_ERROR == rc, "%s: status carries %d, the call returned %d",
                              what, st.MPI_ERROR, rc);
        }
    } else if (rc == MPI_SUCCESS) {
        int in = -1, out = amptest_rank;
        int left = (amptest_rank + amptest_size - 1) % amptest_size;
        MPI_Irecv(&in, 1, MPI_INT, left, 3, MPI_COMM_WORLD, &req[1]);
        MPI_Isend(&out, 1, MPI_INT, (amptest_rank + 1) % amptest_size, 3, MPI_COMM_WORLD, &req[2]);
        MPI_Status st[3];
        rc = MPI_Waitall(3, req, st);
        amptest_check(rc == MPI_ERR_IN_STATUS, "%s: MPI_Waitall returned %d, not MPI_ERR_IN_STATUS",
                      what, rc);
        if (rc == MPI_ERR_IN_STATUS) {
            amptest_check(st[1].MPI_ERROR == MPI_SUCCESS && st[2].MPI_ERROR == MPI_SUCCESS,
                          "%s: the ordinary requests report errors %d and %d", what,
                          st[1].MPI_ERROR, st[2].MPI_ERROR);
            rc = st[0].MPI_ERROR;
        }
        amptest_check(in == left, "%s: the ordinary message carried %d", what, in);
    }
    errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_NO_SPACE, what);
    amptest_check(req[0] == MPI_REQUEST_NULL, "%s: the request was not freed", what);
    free(data);
    amptest_ok(MPI_File_close(&fh), "close after a full file system");
    long long none = -1;
    if (amptest_rank == 0)
        check_full_file(name, &none, what);
    delete_to_free(name);
}

/* With the space back, writing works again. */
static void full_recovered(void)
{
    MPI_File fh;
    if (!amptest_ok(MPI_File_open(MPI_COMM_WORLD, in_dir("after.dat"),
                                  MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                                  MPI_INFO_NULL, &fh),
                    "open after the failures"))
        return;
    long long part = 256 << 10;
    unsigned char *data = pattern(amptest_rank * part, part), *back = malloc((size_t)part);
    amptest_ok(MPI_File_write_at_all(fh, amptest_rank * part / amptest_size, data,
                                     (int)(part / amptest_size), MPI_BYTE, MPI_STATUS_IGNORE),
               "write_at_all after the failures");
    amptest_ok(MPI_File_read_at_all(fh, amptest_rank * part / amptest_size, back,
                                    (int)(part / amptest_size), MPI_BYTE, MPI_STATUS_IGNORE),
               "read_at_all after the failures");
    amptest_check(memcmp(data, back, (size_t)(part / amptest_size)) == 0,
                  "data written after the failures reads back differently");
    free(data);
    free(back);
    amptest_ok(MPI_File_close(&fh), "close");
}

static void ro_prepare(void)
{
    MPI_File fh;
    if (!amptest_ok(MPI_File_open(MPI_COMM_WORLD, in_dir("ro.dat"),
                                  MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
                    "open"))
        return;
    unsigned char block[RO_BLOCK];
    for (int i = 0; i < RO_BLOCK; i++)
        block[i] = amptest_byte(amptest_rank, i);
    amptest_ok(MPI_File_write_at_all(fh, (MPI_Offset)amptest_rank * RO_BLOCK, block, RO_BLOCK,
                                     MPI_BYTE, MPI_STATUS_IGNORE),
               "write_at_all");
    amptest_ok(MPI_File_close(&fh), "close");
}

static void ro_open_fails(const char *name, int amode, const char *what)
{
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, in_dir(name), amode, MPI_INFO_NULL, &fh);
    if (errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_READ_ONLY, what))
        errtest_text_has(rc, name, what);
    if (rc == MPI_SUCCESS)
        MPI_File_close(&fh);
}

static void ro_check(void)
{
    ro_open_fails("ro.dat", MPI_MODE_RDWR, "RDWR on a read-only file system");
    ro_open_fails("ro.dat", MPI_MODE_WRONLY, "WRONLY on a read-only file system");
    ro_open_fails("new.dat", MPI_MODE_RDWR | MPI_MODE_CREATE, "CREATE on a read-only file system");
    if (amptest_rank == 0)
        amptest_class(MPI_File_delete(in_dir("ro.dat"), MPI_INFO_NULL), MPI_ERR_READ_ONLY,
                      "delete on a read-only file system");
    MPI_File fh;
    if (amptest_ok(
            MPI_File_open(MPI_COMM_WORLD, in_dir("ro.dat"), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
            "RDONLY on a read-only file system")) {
        unsigned char block[RO_BLOCK];
        int n = -1;
        MPI_Status st;
        amptest_ok(MPI_File_read_at_all(fh, (MPI_Offset)amptest_rank * RO_BLOCK, block, RO_BLOCK,
                                        MPI_BYTE, &st),
                   "read_at_all");
        MPI_Get_count(&st, MPI_BYTE, &n);
        int same = n == RO_BLOCK;
        for (int i = 0; i < RO_BLOCK && same; i++)
            same = block[i] == amptest_byte(amptest_rank, i);
        amptest_check(same, "the data read from a read-only file system differs");
        amptest_ok(MPI_File_close(&fh), "close");
    }
    /* the deletion a file asked for at open cannot happen: close says so on every rank */
    if (amptest_ok(MPI_File_open(MPI_COMM_WORLD, in_dir("ro.dat"),
                                 MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh),
                   "RDONLY|DELETE_ON_CLOSE on a read-only file system"))
        errtest_class_all(MPI_COMM_WORLD, MPI_File_close(&fh), MPI_ERR_READ_ONLY,
                          "close of a DELETE_ON_CLOSE file on a read-only file system");
    MPI_Barrier(MPI_COMM_WORLD);
    if (amptest_rank == 0)
        amptest_check(errtest_exists(in_dir("ro.dat")), "ro.dat vanished");
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    snprintf(dir, sizeof(dir), "%s", argc > 1 ? argv[1] : ".");
    const char *mode = argc > 2 ? argv[2] : "";
    if (strcmp(mode, "full") == 0) {
        full_independent();
        full_collective("two_phase");
        full_collective("dynamic_seg");
        full_collective("static_seg");
        full_collective("individual");
        full_owners();
        full_other();
        full_nonblocking(0);
        full_nonblocking(1);
        full_recovered();
    } else if (strcmp(mode, "ro-prepare") == 0) {
        ro_prepare();
    } else if (strcmp(mode, "ro-check") == 0) {
        ro_check();
    } else {
        amptest_fail("usage: err_fs DIR full|ro-prepare|ro-check");
    }
    return amptest_finish();
}
