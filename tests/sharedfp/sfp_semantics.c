/* Shared file pointer semantics, for every component of the hint ampio_sharedfp (the native
 * MPI-IO ignores the hint and runs the same checks once per name):
 *   - write_shared: every record (rank, sequence number, length, payload) appears exactly once
 *     and no two overlap; two files written at once
 *   - get_position_shared after independent writes, seek_shared with every whence
 *   - write_ordered in rank order, read_ordered and read_shared returning the right data
 *   - shared, individual and explicit-offset collective writes interleaved on one file
 *   - MPI_File_get_info names the component; no side file is left after close, and
 *     MPI_File_delete removes a stale one
 * Files whose layout depends on timing are deleted before the end; the ordered file of each
 * component is kept and compared with the native run byte for byte.
 *
 * argv[2] "single" initialises MPI without MPI_THREAD_MULTIPLE (addproc then spawns its keeper,
 * or falls back where the MPI cannot spawn). */
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amptest.h"

#define RECORDS      300 /* per rank and file: past the in-memory bound of "individual" */
#define CHUNK        16  /* self-describing chunks for the read checks */
#define MIXED_ROUNDS 9   /* rounds of the interleaving check */
#define IND_BASE     (1 << 20)
#define COLL_BASE    (2 << 20)
#define REC_MAGIC    0x53465052u /* "SFPR" */

static int thread_level_wanted = MPI_THREAD_MULTIPLE;

/* The test library calls MPI_Init; the service-thread component needs MPI_THREAD_MULTIPLE. */
int MPI_Init(int *argc, char ***argv)
{
    if (argc && *argc > 2 && strcmp((*argv)[2], "single") == 0)
        thread_level_wanted = MPI_THREAD_SINGLE;
    int provided;
    return MPI_Init_thread(argc, argv, thread_level_wanted, &provided);
}

/* "addproc-X" is addproc with the hint ampio_sharedfp_addproc=X */
static const char *components[] = {"auto",           "shm",        "rma",
                                   "lockedfile",     "addproc",    "addproc-spawn",
                                   "addproc-thread", "individual", "single"};
#define NCOMP ((int)(sizeof(components) / sizeof(components[0])))

/* A record: header then payload bytes derived from (rank, seq). */
typedef struct {
    uint32_t magic, rank, seq, len;
} rec_hdr_t;

static int rec_len(int seq)
{
    return (int)sizeof(rec_hdr_t) + 4 * (seq % 5);
}

static void rec_fill(unsigned char *buf, int rank, int seq)
{
    rec_hdr_t h = {REC_MAGIC, (uint32_t)rank, (uint32_t)seq, (uint32_t)rec_len(seq)};
    memcpy(buf, &h, sizeof(h));
    for (int i = (int)sizeof(h); i < (int)h.len; i++)
        buf[i] = amptest_byte(rank, seq * 64 + i);
}

static int write_shared_rec(MPI_File fh, int seq)
{
    unsigned char buf[64];
    rec_fill(buf, amptest_rank, seq);
    MPI_Status st;
    int rc = MPI_File_write_shared(fh, buf, rec_len(seq), MPI_BYTE, &st);
    int n = -1;
    MPI_Get_count(&st, MPI_BYTE, &n);
    amptest_check(rc != MPI_SUCCESS || n == rec_len(seq), "write_shared moved %d bytes", n);
    return amptest_ok(rc, "MPI_File_write_shared");
}

/* Parses [lo, lo+len) of `data` into records with seq in [seq0, seq0+nseq) from every rank;
 * each must appear exactly once and the records must tile the range. */
static void check_records(const char *what, const unsigned char *data, long long len, int seq0,
                          int nseq)
{
    char *seen = calloc((size_t)amptest_size * (size_t)nseq, 1);
    long long at = 0;
    int count = 0;
    while (at < len) {
        rec_hdr_t h;
        if (!amptest_check(at + (long long)sizeof(h) <= len, "%s: a record is cut at %lld", what,
                           at))
            break;
        memcpy(&h, data + at, sizeof(h));
        int seq = (int)h.seq - seq0;
        if (!amptest_check(h.magic == REC_MAGIC && (int)h.rank < amptest_size && seq >= 0 &&
                               seq < nseq && (int)h.len == rec_len((int)h.seq) && at + h.len <= len,
                           "%s: no valid record at byte %lld (overlap or gap)", what, at))
            break;
        unsigned char want[64];
        rec_fill(want, (int)h.rank, (int)h.seq);
        amptest_check(memcmp(want, data + at, h.len) == 0, "%s: record %u/%u is damaged", what,
                      h.rank, h.seq);
        char *s = &seen[h.rank * (size_t)nseq + (size_t)seq];
        amptest_check(!*s, "%s: record %u/%u appears twice", what, h.rank, h.seq);
        *s = 1;
        at += h.len;
        count++;
    }
    amptest_check(count == amptest_size * nseq, "%s: %d records, expected %d", what, count,
                  amptest_size * nseq);
    free(seen);
}

/* Bytes of all records with seq in [seq0, seq0+nseq) of all ranks. */
static long long records_bytes(int seq0, int nseq)
{
    long long b = 0;
    for (int s = seq0; s < seq0 + nseq; s++)
        b += rec_len(s);
    return b * amptest_size;
}

/* A check that fails under ampio and is a note on the native MPI-IO, whose run must succeed for
 * the ordered files to be compared byte for byte. */
static void native_note(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void native_note(int cond, const char *fmt, ...)
{
    if (cond)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (amptest_under_ampio())
        amptest_fail("%s", msg);
    else
        fprintf(stderr, "NOTE [rank %d, native]: %s\n", amptest_rank, msg);
}

/* Collective: shared pointer collectives need not synchronise, so a barrier keeps the next one
 * from moving the pointer before every rank has looked. */
static void check_position(MPI_File fh, long long want, const char *what)
{
    MPI_Offset pos = -1;
    int ok = amptest_ok(MPI_File_get_position_shared(fh, &pos), "MPI_File_get_position_shared");
    MPI_Barrier(MPI_COMM_WORLD);
    if (!ok || pos == want)
        return;
    native_note(0, "%s: shared position %lld, expected %lld", what, (long long)pos, want);
}

static unsigned char *read_range(MPI_File fh, long long at, long long len)
{
    unsigned char *buf = malloc((size_t)len + 1);
    MPI_Status st;
    amptest_ok(MPI_File_read_at(fh, at, buf, (int)len, MPI_BYTE, &st), "MPI_File_read_at");
    int n = -1;
    MPI_Get_count(&st, MPI_BYTE, &n);
    amptest_check(n == len, "read_at got %d of %lld bytes", n, len);
    return buf;
}

/* A chunk says where it is: offset and a check word. */
static void chunk_fill(unsigned char *c, long long off)
{
    long long v[2] = {off, off * 2654435761LL + 17};
    memcpy(c, v, CHUNK);
}

static long long chunk_where(const unsigned char *c)
{
    long long v[2];
    memcpy(v, c, CHUNK);
    return v[1] == v[0] * 2654435761LL + 17 ? v[0] : -1;
}

static int count_side_files(void)
{
    int n = 0;
    DIR *d = opendir(amptest_path(""));
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, ".ampio-sfp-") != NULL;
    if (d)
        closedir(d);
    return n;
}

/* write_shared into two files at once, then positions and contents. */
static void check_write_shared(MPI_File fa, MPI_File fb, const char *name)
{
    /* side files are made on first use, and only by the components that keep any */
    int keeps =
        !strcmp(name, "lockedfile") || !strcmp(name, "individual") || !strcmp(name, "single");
    if (amptest_under_ampio() && amptest_rank == 0)
        amptest_check(count_side_files() == 0, "%s: side files exist before first use", name);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int s = 0; s < RECORDS; s++) {
        write_shared_rec(fa, s);
        if (s % 2 == 0)
            write_shared_rec(fb, s / 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long long total = records_bytes(0, RECORDS), half = records_bytes(0, (RECORDS + 1) / 2);
    check_position(fa, total, name);
    check_position(fb, half, name);
    if (amptest_under_ampio() && amptest_rank == 0)
        amptest_check(keeps == (count_side_files() > 0), "%s: %d side files in use", name,
                      count_side_files());
    /* single: one data and one metadata file per process, whatever the number of files */
    if (amptest_under_ampio() && amptest_rank == 0 && !strcmp(name, "single"))
        amptest_check(count_side_files() == 2 * amptest_size,
                      "single: %d side files for 2 files on %d processes", count_side_files(),
                      amptest_size);
    amptest_ok(MPI_File_sync(fa), "MPI_File_sync");
    amptest_ok(MPI_File_sync(fb), "MPI_File_sync");
    MPI_Barrier(MPI_COMM_WORLD);
    amptest_ok(MPI_File_sync(fa), "MPI_File_sync");
    amptest_ok(MPI_File_sync(fb), "MPI_File_sync");
    if (amptest_rank == amptest_size - 1) {
        unsigned char *d = read_range(fa, 0, total);
        check_records("write_shared file A", d, total, 0, RECORDS);
        free(d);
        d = read_range(fb, 0, half);
        check_records("write_shared file B", d, half, 0, (RECORDS + 1) / 2);
        free(d);
    }
    MPI_Offset size = 0;
    MPI_File_get_size(fa, &size);
    amptest_check(size == total, "%s: file A has %lld bytes, expected %lld", name, (long long)size,
                  total);
}

/* More files open at once than one pointer window holds, on the world and on halves of it,
 * twice: every pointer starts at 0 (a reused one is reset) and moves only with its file. */
#define MANY_FILES 70
static void check_many_files(const char *name, MPI_Info info)
{
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, amptest_rank % 2, amptest_rank, &half);
    int half_size;
    MPI_Comm_size(half, &half_size);
    for (int round = 0; round < 2; round++) {
        MPI_File fh[MANY_FILES];
        for (int i = 0; i < MANY_FILES; i++) {
            char path[64];
            snprintf(path, sizeof(path), "many.%d.%d", i, i % 2 ? amptest_rank % 2 : 2);
            MPI_Comm comm = i % 2 ? half : MPI_COMM_WORLD;
            amptest_ok(MPI_File_open(comm, amptest_path(path), MPI_MODE_CREATE | MPI_MODE_RDWR,
                                     info, &fh[i]),
                       "MPI_File_open (many)");
            check_position(fh[i], 0, "a newly opened file");
        }
        for (int i = 0; i < MANY_FILES; i++) {
            int words = 1 + i % 3;
            int buf[3] = {amptest_rank, i, round};
            amptest_ok(MPI_File_write_shared(fh[i], buf, words, MPI_INT, MPI_STATUS_IGNORE),
                       "MPI_File_write_shared (many)");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < MANY_FILES; i++) {
            long long ranks = i % 2 ? half_size : amptest_size;
            check_position(fh[i], ranks * (1 + i % 3) * (long long)sizeof(int), name);
        }
        for (int i = 0; i < MANY_FILES; i++)
            amptest_ok(MPI_File_close(&fh[i]), "MPI_File_close (many)");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < MANY_FILES; i++) {
        char path[64];
        snprintf(path, sizeof(path), "many.%d.%d", i, i % 2 ? amptest_rank % 2 : 2);
        if (i % 2 ? amptest_rank < 2 : amptest_rank == 0)
            MPI_File_delete(amptest_path(path), MPI_INFO_NULL);
    }
    MPI_Comm_free(&half);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* write_ordered in rank order from `base`, then read_ordered and read_shared of chunks. */
static void check_ordered_and_reads(MPI_File fh, long long base, const char *name)
{
    int mine = amptest_rank + 1; /* chunks */
    long long before = (long long)amptest_rank * (amptest_rank + 1) / 2;
    long long all = (long long)amptest_size * (amptest_size + 1) / 2;
    unsigned char *buf = calloc((size_t)amptest_size, CHUNK);
    for (int i = 0; i < mine; i++)
        chunk_fill(buf + i * CHUNK, base + (before + i) * CHUNK);
    amptest_ok(MPI_File_write_ordered(fh, buf, mine * CHUNK, MPI_BYTE, MPI_STATUS_IGNORE),
               "MPI_File_write_ordered");
    check_position(fh, base + all * CHUNK, "after write_ordered");

    /* read_ordered from base: rank r gets chunks in rank order */
    amptest_ok(MPI_File_seek_shared(fh, base, MPI_SEEK_SET), "MPI_File_seek_shared");
    memset(buf, 0, (size_t)CHUNK * (size_t)amptest_size);
    amptest_ok(MPI_File_read_ordered(fh, buf, mine * CHUNK, MPI_BYTE, MPI_STATUS_IGNORE),
               "MPI_File_read_ordered");
    for (int i = 0; i < mine; i++)
        amptest_check(chunk_where(buf + i * CHUNK) == base + (before + i) * CHUNK,
                      "%s: read_ordered chunk %d holds offset %lld", name, i,
                      chunk_where(buf + i * CHUNK));

    /* read_shared: every chunk exactly once, each read where it says it is */
    amptest_ok(MPI_File_seek_shared(fh, base, MPI_SEEK_SET), "MPI_File_seek_shared");
    int got = 0;
    long long *where = malloc(sizeof(long long) * (size_t)all);
    for (;;) {
        unsigned char c[CHUNK];
        MPI_Status st;
        if (!amptest_ok(MPI_File_read_shared(fh, c, CHUNK, MPI_BYTE, &st), "MPI_File_read_shared"))
            break;
        int n = 0;
        MPI_Get_count(&st, MPI_BYTE, &n);
        if (n < CHUNK)
            break; /* past the end */
        long long w = chunk_where(c);
        amptest_check(w >= base && w < base + all * CHUNK, "%s: read_shared got a bad chunk", name);
        if (got < all)
            where[got++] = w;
    }
    int *counts = malloc(sizeof(int) * (size_t)amptest_size);
    int *displs = malloc(sizeof(int) * (size_t)amptest_size);
    MPI_Allgather(&got, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; r < amptest_size; r++) {
        displs[r] = total;
        total += counts[r];
    }
    long long *every = malloc(sizeof(long long) * (size_t)(total + 1));
    MPI_Allgatherv(where, got, MPI_LONG_LONG, every, counts, displs, MPI_LONG_LONG, MPI_COMM_WORLD);
    amptest_check(total == all, "%s: read_shared read %d chunks, expected %lld", name, total, all);
    char *seen = calloc((size_t)all, 1);
    for (int i = 0; i < total; i++) {
        long long k = (every[i] - base) / CHUNK;
        if (k >= 0 && k < all) {
            amptest_check(!seen[k], "%s: read_shared read chunk %lld twice", name, k);
            seen[k] = 1;
        }
    }
    free(seen);
    free(every);
    free(counts);
    free(displs);
    free(where);
    free(buf);
}

/* seek_shared with each whence, get_position_shared after each. */
static void check_seek(MPI_File fh, long long end, const char *name)
{
    amptest_ok(MPI_File_seek_shared(fh, 10, MPI_SEEK_SET), "MPI_File_seek_shared SET");
    check_position(fh, 10, name);
    amptest_ok(MPI_File_seek_shared(fh, 6, MPI_SEEK_CUR), "MPI_File_seek_shared CUR");
    check_position(fh, 16, name);
    amptest_ok(MPI_File_seek_shared(fh, -4, MPI_SEEK_END), "MPI_File_seek_shared END");
    check_position(fh, end - 4, name);
    amptest_ok(MPI_File_seek_shared(fh, 0, MPI_SEEK_END), "MPI_File_seek_shared END");
    check_position(fh, end, name);
}

/* Shared, individual and collective explicit-offset writes interleaved from `base`. */
static void check_interleaved(MPI_File fh, long long base, const char *name)
{
    amptest_ok(MPI_File_seek(fh, IND_BASE + amptest_rank * MIXED_ROUNDS * CHUNK, MPI_SEEK_SET),
               "MPI_File_seek");
    for (int i = 0; i < MIXED_ROUNDS; i++) {
        write_shared_rec(fh, 1000 + i);
        unsigned char c[CHUNK];
        chunk_fill(c, IND_BASE + (amptest_rank * MIXED_ROUNDS + i) * CHUNK);
        amptest_ok(MPI_File_write(fh, c, CHUNK, MPI_BYTE, MPI_STATUS_IGNORE), "MPI_File_write");
        if (i % 3 == 0) {
            long long at = COLL_BASE + ((long long)i * amptest_size + amptest_rank) * CHUNK;
            chunk_fill(c, at);
            amptest_ok(MPI_File_write_at_all(fh, at, c, CHUNK, MPI_BYTE, MPI_STATUS_IGNORE),
                       "MPI_File_write_at_all");
        }
    }
    long long len = records_bytes(1000, MIXED_ROUNDS);
    MPI_Barrier(MPI_COMM_WORLD);
    check_position(fh, base + len, name);
    amptest_ok(MPI_File_sync(fh), "MPI_File_sync");
    MPI_Barrier(MPI_COMM_WORLD);
    amptest_ok(MPI_File_sync(fh), "MPI_File_sync");
    if (amptest_rank == 0) {
        unsigned char *d = read_range(fh, base, len);
        check_records("interleaved write_shared", d, len, 1000, MIXED_ROUNDS);
        free(d);
        long long n = (long long)amptest_size * MIXED_ROUNDS;
        d = read_range(fh, IND_BASE, n * CHUNK);
        for (long long k = 0; k < n; k++)
            amptest_check(chunk_where(d + k * CHUNK) == IND_BASE + k * CHUNK,
                          "%s: individual chunk %lld is wrong", name, k);
        free(d);
        for (int i = 0; i < MIXED_ROUNDS; i += 3) {
            long long at = COLL_BASE + (long long)i * amptest_size * CHUNK;
            d = read_range(fh, at, (long long)amptest_size * CHUNK);
            for (int r = 0; r < amptest_size; r++)
                amptest_check(chunk_where(d + r * CHUNK) == at + r * CHUNK,
                              "%s: collective chunk %d/%d is wrong", name, i, r);
            free(d);
        }
    }
}

/* write_shared through a strided view of ints: each rank's records stay whole in the view's
 * data stream, and the gaps of the view stay untouched. */
static void check_view(const char *name, MPI_Info info)
{
    char file[64], path[4096];
    snprintf(file, sizeof(file), "view_%s.dat", name);
    snprintf(path, sizeof(path), "%s", amptest_path(file));
    MPI_File fh;
    if (!amptest_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
                    "open view file"))
        return;
    enum { PER = 5, ROUNDS = 4 };
    MPI_Datatype ft;
    MPI_Type_vector(1, 2, 3, MPI_INT, &ft); /* 2 ints of data, then a gap of 1 */
    MPI_Datatype resized;
    MPI_Type_create_resized(ft, 0, 3 * sizeof(int), &resized);
    MPI_Type_commit(&resized);
    amptest_ok(MPI_File_set_view(fh, 4, MPI_INT, resized, "native", MPI_INFO_NULL),
               "MPI_File_set_view");
    for (int k = 0; k < ROUNDS; k++) {
        int rec[PER];
        for (int i = 0; i < PER; i++)
            rec[i] = (amptest_rank * ROUNDS + k) * 100 + i;
        amptest_ok(MPI_File_write_shared(fh, rec, PER, MPI_INT, MPI_STATUS_IGNORE),
                   "MPI_File_write_shared (view)");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int n = amptest_size * ROUNDS * PER;
    check_position(fh, n, name);
    int *all = calloc((size_t)n, sizeof(int));
    amptest_ok(MPI_File_read_at_all(fh, 0, all, n, MPI_INT, MPI_STATUS_IGNORE),
               "MPI_File_read_at_all (view)");
    char *seen = calloc((size_t)amptest_size * ROUNDS, 1);
    for (int b = 0; b < amptest_size * ROUNDS; b++) {
        int id = all[b * PER] / 100;
        int good = id >= 0 && id < amptest_size * ROUNDS && !seen[id];
        for (int i = 0; good && i < PER; i++)
            good = all[b * PER + i] == id * 100 + i;
        native_note(good, "%s: block %d of the view holds %d", name, b, all[b * PER]);
        if (good)
            seen[id] = 1;
    }
    free(seen);
    free(all);
    MPI_Type_free(&resized);
    MPI_Type_free(&ft);
    amptest_ok(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL),
               "MPI_File_set_view");
    if (amptest_rank == 0) { /* the gaps: the first 4 bytes and every third int */
        int raw[3 * 8];
        MPI_Status st;
        memset(raw, 0x55, sizeof(raw));
        int rc = MPI_File_read_at(fh, 4, raw, (int)sizeof(raw), MPI_BYTE, &st), got = 0;
        MPI_Get_count(&st, MPI_BYTE, &got);
        native_note(rc == MPI_SUCCESS && got == (int)sizeof(raw),
                    "%s: reading the view's gaps: rc %d, %d bytes", name, rc, got);
        for (int g = 2; g < 3 * 8 && g * 3 < n * 3 / 2; g += 3)
            native_note(raw[g] == 0, "%s: the view's gap at int %d holds %d", name, g, raw[g]);
    }
    amptest_ok(MPI_File_close(&fh), "close view file");
    if (amptest_rank == 0) /* its layout depends on timing */
        amptest_ok(MPI_File_delete(path, MPI_INFO_NULL), "MPI_File_delete view file");
    MPI_Barrier(MPI_COMM_WORLD);
}

static void check_method(MPI_File fh, const char *comp)
{
    if (!amptest_under_ampio())
        return;
    MPI_Info info;
    char value[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0, level = 0;
    MPI_File_get_info(fh, &info);
    MPI_Info_get(info, "ampio_sharedfp_method", MPI_MAX_INFO_VAL, value, &flag);
    MPI_Info_free(&info);
    MPI_Query_thread(&level);
    /* the service thread needs MPI_THREAD_MULTIPLE and a library that is not MPICH-derived;
     * Open MPI can spawn the keeper process, MPICH's ch4:ucx cannot */
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    int mpich = strstr(version, "MPICH") != NULL;
    int thread = level == MPI_THREAD_MULTIPLE && !mpich, spawn = !mpich;
    int is_addproc = !strncmp(comp, "addproc", 7);
    int made = !strcmp(comp, "addproc-thread")  ? thread
               : !strcmp(comp, "addproc-spawn") ? spawn
                                                : spawn || thread;
    if (!strcmp(comp, "auto") || (is_addproc && !made))
        amptest_check(flag && (!strcmp(value, "shm") || !strcmp(value, "rma")),
                      "%s: method reported as \"%s\"", comp, value);
    else
        amptest_check(flag && !strcmp(value, is_addproc ? "addproc" : comp),
                      "%s: method reported as \"%s\"", comp, value);
}

/* Nothing but the test's own files may be in the output directory (ampio). */
static void check_no_side_files(const char *when)
{
    if (amptest_rank != 0 || !amptest_under_ampio())
        return; /* the native MPI-IO may keep its own */
    DIR *d = opendir(amptest_path(""));
    if (!amptest_check(d != NULL, "cannot list the output directory"))
        return;
    struct dirent *e;
    while ((e = readdir(d)))
        amptest_check(e->d_name[0] != '.' || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."),
                      "%s: \"%s\" is left in the directory", when, e->d_name);
    closedir(d);
}

static void run_component(const char *comp)
{
    char a[64], b[64], o[64], pa[4096], pb[4096], po[4096];
    snprintf(a, sizeof(a), "shared_%s.dat", comp);
    snprintf(b, sizeof(b), "shared2_%s.dat", comp);
    snprintf(o, sizeof(o), "ordered_%s.dat", comp);
    snprintf(pa, sizeof(pa), "%s", amptest_path(a));
    snprintf(pb, sizeof(pb), "%s", amptest_path(b));
    snprintf(po, sizeof(po), "%s", amptest_path(o));
    MPI_Info info;
    MPI_Info_create(&info);
    if (!strncmp(comp, "addproc-", 8)) {
        MPI_Info_set(info, "ampio_sharedfp", "addproc");
        MPI_Info_set(info, "ampio_sharedfp_addproc", comp + 8);
    } else {
        MPI_Info_set(info, "ampio_sharedfp", comp);
    }
    int amode = MPI_MODE_CREATE | MPI_MODE_RDWR;
    MPI_File fa, fb, fo;
    if (!amptest_ok(MPI_File_open(MPI_COMM_WORLD, pa, amode, info, &fa), "open A") ||
        !amptest_ok(MPI_File_open(MPI_COMM_WORLD, pb, amode, info, &fb), "open B") ||
        !amptest_ok(MPI_File_open(MPI_COMM_WORLD, po, amode, info, &fo), "open ordered"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    check_method(fa, comp);

    check_write_shared(fa, fb, comp);
    long long end = records_bytes(0, RECORDS);
    check_seek(fa, end, comp);
    check_ordered_and_reads(fa, end, comp);
    long long all = (long long)amptest_size * (amptest_size + 1) / 2 * CHUNK;
    amptest_ok(MPI_File_seek_shared(fa, end + all, MPI_SEEK_SET), "MPI_File_seek_shared");
    check_interleaved(fa, end + all, comp);

    check_view(comp, info);
    check_many_files(comp, info);

    /* a deterministic file for the byte comparison with the native run */
    check_ordered_and_reads(fo, 0, comp);
    amptest_ok(MPI_File_close(&fa), "close A");
    amptest_ok(MPI_File_close(&fb), "close B");
    amptest_ok(MPI_File_close(&fo), "close ordered");
    /* only the last rank moves the pointer: rank 0, which never used it, still removes the
     * side files the other made */
    char l[64], pl[4096];
    snprintf(l, sizeof(l), "last_%s.dat", comp);
    snprintf(pl, sizeof(pl), "%s", amptest_path(l));
    MPI_File fl;
    if (amptest_ok(MPI_File_open(MPI_COMM_WORLD, pl, amode, info, &fl), "open last")) {
        if (amptest_rank == amptest_size - 1)
            amptest_ok(MPI_File_write_shared(fl, "last", 4, MPI_CHAR, MPI_STATUS_IGNORE),
                       "write_shared by the last rank");
        amptest_ok(MPI_File_close(&fl), "close last");
    }
    MPI_Info_free(&info);
    MPI_Barrier(MPI_COMM_WORLD);
    check_no_side_files(comp);

    /* a side file left by a process that died is removed with the file */
    MPI_Barrier(MPI_COMM_WORLD);
    if (amptest_rank == 0) {
        char stale[4096];
        snprintf(stale, sizeof(stale), "%s/.%s.ampio-sfp-dead-0-0.ptr", amptest_path(""), a);
        int fd = open(stale, O_CREAT | O_WRONLY, 0600);
        if (fd >= 0)
            close(fd);
        amptest_ok(MPI_File_delete(pa, MPI_INFO_NULL), "MPI_File_delete A");
        amptest_ok(MPI_File_delete(pb, MPI_INFO_NULL), "MPI_File_delete B");
        if (amptest_under_ampio())
            amptest_check(access(stale, F_OK) != 0, "MPI_File_delete left \"%s\"", stale);
        else
            unlink(stale);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check_no_side_files("after MPI_File_delete");
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    for (int c = 0; c < NCOMP; c++)
        run_component(components[c]);
    return amptest_finish();
}
