/* Data sieving from ranks on different nodes into one stripe, with concurrent writers: every
 * rank owns every nprocs-th run of 3 ints of a 48 KiB region (the runs of all ranks interleave,
 * so each sieving window of one rank holds every other rank's bytes) and writes them with
 * independent noncontiguous writes, sieving enabled by hint, all at once, pass after pass with
 * new values. Before the first pass every rank has read the region (its node's client caches
 * it); after each pass, sync-barrier-sync, every rank reads the whole region and must find
 * every run with the value of this pass from its owner: no byte of an earlier pass or of the
 * background, which a read-modify-write from a stale cache would put back.
 *
 * Under ampio the writes are traced ("ampio_trace"): where the file system's clients may serve
 * a locked read from a stale cache (CephFS, get_info's "ampio_layout"), no write of a rank may
 * cover bytes of another rank, since there read-modify-write cannot be made safe. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amptest.h"

#define RUN        3           /* ints per run */
#define REGION     (48 * 1024) /* bytes; one stripe of any layout of 64 KiB or more */
#define BASE       (8 * 1024)  /* where the region starts */
#define PASSES     3
#define BACKGROUND 0x5a5a5a5a

static int nruns; /* runs of all ranks in the region */

static int value(int pass, int run, int k)
{
    return pass * 1000003 + run * RUN + k + 1;
}

/* The model of the region after `pass` (0: the background). */
static void model(int pass, int *m)
{
    for (int i = 0; i < REGION / 4; i++)
        m[i] = BACKGROUND;
    for (int run = 0; pass > 0 && run < nruns; run++)
        for (int k = 0; k < RUN; k++)
            m[run * RUN + k] = value(pass, run, k);
}

static void read_and_check(MPI_File fh, int pass, const char *name)
{
    int *got = malloc(REGION), *want = malloc(REGION);
    MPI_Status st;
    memset(got, 0, REGION);
    amptest_ok(MPI_File_read_at(fh, BASE, got, REGION, MPI_BYTE, &st), "MPI_File_read_at");
    model(pass, want);
    for (int i = 0; i < REGION / 4; i++)
        if (got[i] != want[i]) {
            int run = i / RUN;
            amptest_model_mismatch(name,
                                   "pass %d, rank %d: int %d (run %d of rank %d) holds %d, "
                                   "expected %d%s",
                                   pass, amptest_rank, i, run, run % amptest_size, got[i], want[i],
                                   got[i] == BACKGROUND ||
                                           (pass > 1 && got[i] == value(pass - 1, run, i % RUN))
                                       ? " (a stale value)"
                                       : "");
            break;
        }
    free(got);
    free(want);
}

/* The trace of this rank: no write covers a run of another rank. */
static void check_trace(const char *prefix, const char *layout)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s.%d", prefix, amptest_rank);
    FILE *t = fopen(path, "r");
    if (!amptest_check(t != NULL, "no trace file %s", path))
        return;
    long long call, off, len;
    char rw;
    int writes = 0, foreign = 0;
    while (fscanf(t, "%lld %c %lld %lld", &call, &rw, &off, &len) == 4) {
        if (rw != 'w')
            continue;
        writes++;
        for (long long b = off; b < off + len; b++) {
            long long i = (b - BASE) / 4;
            if (b >= BASE && b < BASE + REGION && (i / RUN) % amptest_size != amptest_rank) {
                foreign++;
                break;
            }
        }
    }
    fclose(t);
    int sieved = foreign > 0, any = 0;
    MPI_Allreduce(&sieved, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (strncmp(layout, "cephfs", 6) == 0)
        amptest_check(!sieved,
                      "%s: %d of %d writes covered other ranks' bytes (read-modify-write "
                      "where locked reads may be stale)",
                      layout, foreign, writes);
    if (amptest_rank == 0)
        printf("layout %s: writes %s\n", layout,
               any ? "sieved (read-modify-write)" : "of each rank's own bytes only");
    MPI_Barrier(MPI_COMM_WORLD);
    unlink(path);
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    const char *name = "sieve.dat";
    nruns = REGION / 4 / RUN;
    char prefix[4096];
    snprintf(prefix, sizeof(prefix), "%s", amptest_path("trace_sieve"));
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_write", "enable");
    MPI_Info_set(info, "romio_ds_read", "enable");
    MPI_Info_set(info, "ind_wr_buffer_size", "16384"); /* windows end mid-region */
    MPI_Info_set(info, "ind_rd_buffer_size", "16384");
    /* the background, before the traced open */
    int *buf = malloc(REGION);
    MPI_Status st;
    MPI_File fh;
    if (!amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name),
                                  MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
                    name))
        return amptest_finish();
    if (amptest_rank == 0) {
        model(0, buf);
        amptest_ok(MPI_File_write_at(fh, BASE, buf, REGION, MPI_BYTE, &st), "background");
    }
    amptest_ok(MPI_File_close(&fh), "MPI_File_close");
    if (amptest_under_ampio())
        MPI_Info_set(info, "ampio_trace", prefix);
    if (!amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name), MPI_MODE_RDWR, info, &fh),
                    name))
        return amptest_finish();
    char layout[MPI_MAX_INFO_VAL + 1] = "";
    MPI_Info used;
    int flag = 0;
    MPI_File_get_info(fh, &used);
    MPI_Info_get(used, "ampio_layout", MPI_MAX_INFO_VAL, layout, &flag);
    MPI_Info_free(&used);

    /* every node's client caches the region */
    read_and_check(fh, 0, name);

    MPI_Datatype run, ft;
    MPI_Type_contiguous(RUN, MPI_INT, &run);
    MPI_Type_create_resized(run, 0, (MPI_Aint)RUN * 4 * amptest_size, &ft);
    MPI_Type_commit(&ft);
    int mine = 0;
    for (int r = amptest_rank; r < nruns; r += amptest_size)
        mine++;
    for (int pass = 1; pass <= PASSES; pass++) {
        amptest_ok(MPI_File_set_view(fh, BASE + (MPI_Offset)amptest_rank * RUN * 4, MPI_INT, ft,
                                     "native", info),
                   "MPI_File_set_view");
        for (int j = 0; j < mine; j++)
            for (int k = 0; k < RUN; k++)
                buf[j * RUN + k] = value(pass, amptest_rank + j * amptest_size, k);
        MPI_Barrier(MPI_COMM_WORLD); /* all at once */
        amptest_ok(MPI_File_write_at(fh, 0, buf, mine * RUN, MPI_INT, &st), "sieved write");
        /* a noncontiguous read of this rank's own runs (read sieving) */
        int *back = calloc((size_t)mine * RUN, sizeof(int));
        amptest_ok(MPI_File_read_at(fh, 0, back, mine * RUN, MPI_INT, &st), "sieved read");
        amptest_check(memcmp(back, buf, (size_t)mine * RUN * sizeof(int)) == 0,
                      "pass %d: rank %d reads back other values than it wrote", pass, amptest_rank);
        free(back);
        amptest_ok(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info),
                   "MPI_File_set_view");
        amptest_ok(MPI_File_sync(fh), "MPI_File_sync");
        MPI_Barrier(MPI_COMM_WORLD);
        amptest_ok(MPI_File_sync(fh), "MPI_File_sync");
        read_and_check(fh, pass, name);
    }
    amptest_ok(MPI_File_close(&fh), "MPI_File_close");
    MPI_Type_free(&ft);
    MPI_Type_free(&run);
    MPI_Info_free(&info);
    free(buf);
    if (amptest_under_ampio())
        check_trace(prefix, layout);
    return amptest_finish();
}
