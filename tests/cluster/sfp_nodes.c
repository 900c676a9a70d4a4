/* Shared file pointers across nodes: for every component of ampio_sharedfp (or those named after
 * the directory), every rank writes records with MPI_File_write_shared, interleaved with the
 * other ranks; then sync, barrier, sync, and every rank reads the whole file back (MPI-IO and
 * POSIX) and checks that every record appears exactly once, that they tile the file, and that
 * MPI_File_get_size and the shared position equal the records' total. The file is written and
 * read on several nodes through their own file system clients, so that a component whose
 * pointer or data sit in a client's stale cache shows here.
 *
 * A component that cannot serve these processes (shm on several nodes, rma where the MPI makes
 * no window across nodes, addproc where it can neither spawn nor run a keeper thread) gives way
 * to auto's choice, or is refused at open with MPI_ERR_UNSUPPORTED_OPERATION on every rank; the
 * others must serve, and whatever serves must be right; "auto" must always run. Prints "component:
 * method" lines (rank 0). Under ampio every component is opened twice: the second open on the
 * same processes must end with what the first did (a kind of pointer pool the processes could
 * not make is not tried again). The native MPI-IO ignores the hint and is checked once, its
 * failures recorded as native defects. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amptest.h"

#define RECORDS 40
#define MAGIC   0x4e534652u /* "RFSN" */

static const char *all_components[] = {"auto",    "shm",        "rma",   "lockedfile",
                                       "addproc", "individual", "single"};

typedef struct {
    uint32_t magic, rank, seq, len;
} rec_t;

static int rec_len(int seq)
{
    return (int)sizeof(rec_t) + 8 * (seq % 7);
}

static void rec_fill(unsigned char *buf, int rank, int seq)
{
    rec_t h = {MAGIC, (uint32_t)rank, (uint32_t)seq, (uint32_t)rec_len(seq)};
    memcpy(buf, &h, sizeof(h));
    for (int i = (int)sizeof(h); i < (int)h.len; i++)
        buf[i] = amptest_byte(rank, seq * 97 + i);
}

/* Every record of every rank once, tiling [0, len): returns the number of problems. */
static int check_records(const char *what, const unsigned char *data, long long len)
{
    char *seen = calloc((size_t)amptest_size * RECORDS, 1);
    long long at = 0;
    int count = 0, bad = 0;
    while (at < len && bad < 4) {
        rec_t h;
        memset(&h, 0, sizeof(h));
        if (at + (long long)sizeof(h) <= len)
            memcpy(&h, data + at, sizeof(h));
        if (h.magic != MAGIC || (int)h.rank >= amptest_size || h.seq >= RECORDS ||
            (int)h.len != rec_len((int)h.seq) || at + h.len > len) {
            amptest_model_mismatch(what, "rank %d: no valid record at byte %lld of %lld",
                                   amptest_rank, at, len);
            bad++;
            break;
        }
        unsigned char want[64];
        rec_fill(want, (int)h.rank, (int)h.seq);
        if (memcmp(want, data + at, h.len) != 0) {
            amptest_model_mismatch(what, "rank %d: record %u/%u at %lld is damaged", amptest_rank,
                                   h.rank, h.seq, at);
            bad++;
        }
        char *s = &seen[h.rank * (size_t)RECORDS + h.seq];
        if (*s) {
            amptest_model_mismatch(what, "rank %d: record %u/%u appears twice", amptest_rank,
                                   h.rank, h.seq);
            bad++;
        }
        *s = 1;
        at += h.len;
        count++;
    }
    if (!bad && count != amptest_size * RECORDS) {
        amptest_model_mismatch(what, "rank %d: %d records, expected %d", amptest_rank, count,
                               amptest_size * RECORDS);
        bad++;
    }
    free(seen);
    return bad;
}

static void method_of(MPI_File fh, char *value)
{
    MPI_Info info;
    int flag = 0;
    strcpy(value, "?");
    if (MPI_File_get_info(fh, &info) != MPI_SUCCESS)
        return;
    MPI_Info_get(info, "ampio_sharedfp_method", MPI_MAX_INFO_VAL, value, &flag);
    if (!flag)
        strcpy(value, "native");
    MPI_Info_free(&info);
}

/* One open, writes and checks with component `comp`; `method` gets what served the file, or
 * "refused". */
static void run_component(const char *comp, char *method)
{
    char name[64], path[4096];
    snprintf(name, sizeof(name), "sfp_%s.dat", comp);
    snprintf(path, sizeof(path), "%s", amptest_path(name));
    if (amptest_rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL); /* a second pass starts from no file */
    MPI_Barrier(MPI_COMM_WORLD);
    strcpy(method, "refused");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "ampio_sharedfp", comp);
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);
    /* the outcome of an open is the same on every rank */
    int ok = rc == MPI_SUCCESS, all_ok = 0, any_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    MPI_Allreduce(&ok, &any_ok, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    amptest_check(all_ok == any_ok, "%s: the open succeeded on some ranks only", comp);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0, cls = -1;
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, msg, &len);
        amptest_check(strcmp(comp, "auto") != 0, "auto: open failed: %s", msg);
        amptest_class(rc, MPI_ERR_UNSUPPORTED_OPERATION, comp);
        if (amptest_rank == 0)
            printf("%s: refused: %s\n", comp, msg);
        return;
    }
    method_of(fh, method);
    if (amptest_rank == 0)
        printf("%s: %s\n", comp, method);
    /* a window needs one node (shm) or an MPI with windows across nodes (rma: Open MPI 4 has
     * none over TCP), a keeper a spawn or a thread: those may give way to auto's choice, which
     * must then be right; a component made of files must serve wherever they are */
    int may_give_way = !strcmp(comp, "shm") || !strcmp(comp, "rma") || !strcmp(comp, "addproc");
    if (amptest_under_ampio() && strcmp(comp, "auto") != 0 && !may_give_way)
        amptest_check(strcmp(method, comp) == 0, "%s: the file uses \"%s\"", comp, method);

    /* interleave: every rank writes a record, then the others get a chance */
    unsigned char buf[64];
    long long total = 0;
    for (int s = 0; s < RECORDS; s++) {
        rec_fill(buf, amptest_rank, s);
        MPI_Status st;
        amptest_ok(MPI_File_write_shared(fh, buf, rec_len(s), MPI_BYTE, &st), "write_shared");
        total += rec_len(s);
        if (s % 8 == 7)
            MPI_Barrier(MPI_COMM_WORLD);
    }
    long long sum = 0;
    MPI_Allreduce(&total, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    /* the standard's sync-barrier-sync makes every write visible to every rank */
    amptest_ok(MPI_File_sync(fh), "MPI_File_sync");
    MPI_Barrier(MPI_COMM_WORLD);
    amptest_ok(MPI_File_sync(fh), "MPI_File_sync");

    MPI_Offset size = -1, pos = -1;
    amptest_ok(MPI_File_get_size(fh, &size), "MPI_File_get_size");
    amptest_ok(MPI_File_get_position_shared(fh, &pos), "MPI_File_get_position_shared");
    char what[96];
    snprintf(what, sizeof(what), "%s", name);
    if (size != sum)
        amptest_model_mismatch(what, "rank %d: %s: size %lld, expected %lld", amptest_rank, comp,
                               (long long)size, sum);
    if (pos != sum)
        amptest_model_mismatch(what, "rank %d: %s: shared position %lld, expected %lld",
                               amptest_rank, comp, (long long)pos, sum);
    unsigned char *data = calloc((size_t)sum + 1, 1);
    MPI_Status st;
    int got = 0;
    amptest_ok(MPI_File_read_at(fh, 0, data, (int)sum, MPI_BYTE, &st), "MPI_File_read_at");
    MPI_Get_count(&st, MPI_BYTE, &got);
    if (got != sum)
        amptest_model_mismatch(what, "rank %d: read %d of %lld bytes", amptest_rank, got, sum);
    check_records(what, data, got);
    amptest_ok(MPI_File_close(&fh), "MPI_File_close");

    /* after close, through this node's own client */
    memset(data, 0, (size_t)sum);
    int fd = open(path, O_RDONLY);
    ssize_t n = fd >= 0 ? pread(fd, data, (size_t)sum + 1, 0) : -1;
    if (fd >= 0)
        close(fd);
    if (n != sum)
        amptest_model_mismatch(what, "rank %d: POSIX read gave %zd bytes, expected %lld",
                               amptest_rank, n, sum);
    else
        check_records(what, data, n);
    free(data);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    char host[256] = "";
    gethostname(host, sizeof(host));
    if (amptest_rank == 0)
        printf("rank 0 on %s, %d ranks\n", host, amptest_size);
    char method[MPI_MAX_INFO_VAL + 1], again[MPI_MAX_INFO_VAL + 1];
    if (argc > 2) {
        for (int i = 2; i < argc; i++)
            run_component(argv[i], method);
    } else if (amptest_under_ampio()) {
        for (size_t c = 0; c < sizeof(all_components) / sizeof(*all_components); c++) {
            run_component(all_components[c], method);
            run_component(all_components[c], again);
            amptest_check(strcmp(method, again) == 0,
                          "%s: a second open used \"%s\", the first \"%s\"", all_components[c],
                          again, method);
        }
    } else {
        run_component("auto", method);
    }
    return amptest_finish();
}
