/* The aggregator plan is kept for calls of the same layout: a record per rank per call, moving
 * along the file, is planned once; a call with other sizes is planned anew, and the plan made
 * for it is not reused for the first layout's calls. The count of plans comes from ampio's
 * statistics (hint ampio_stats), the bytes from the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amptest.h"

#define SMALL  4096
#define LARGE  (64 << 10)
#define NSMALL 40
#define NLARGE 8

/* Writes `calls` records of `len` bytes per rank, interleaved by rank, from file offset base;
 * returns the offset after them. */
static long long write_records(MPI_File fh, unsigned char *buf, long long base, int len, int calls)
{
    const int P = amptest_size, me = amptest_rank;
    for (int c = 0; c < calls; c++) {
        long long at = base + ((long long)c * P + me) * len;
        for (int i = 0; i < len; i++)
            buf[i] = amptest_byte(me, at + i);
        amptest_ok(MPI_File_write_at_all(fh, at, buf, len, MPI_BYTE, MPI_STATUS_IGNORE),
                   "write_at_all");
    }
    return base + (long long)calls * P * len;
}

static long long plans_made(const char *stats)
{
    char text[4096] = "";
    FILE *f = fopen(stats, "r");
    size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = '\0';
    const char *key = strstr(text, "\"aggregator_plans\":");
    return key ? atoll(key + strlen("\"aggregator_plans\":")) : -1;
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    const int P = amptest_size;
    char stats[4096];
    snprintf(stats, sizeof(stats), "%s", amptest_path("plan-stats.json"));
    if (amptest_rank == 0)
        unlink(stats);
    MPI_Barrier(MPI_COMM_WORLD);

    /* a forced algorithm with the count left to auto: every call is aggregated and planned */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "ampio_fcoll", "two_phase");
    MPI_Info_set(info, "ampio_saturation_k", "16K");
    MPI_Info_set(info, "ampio_stats", stats);
    MPI_File fh;
    amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path("plan.dat"),
                             MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
               "open");
    unsigned char *buf = malloc(LARGE);
    long long end = write_records(fh, buf, 0, SMALL, NSMALL); /* one layout: one plan */
    end = write_records(fh, buf, end, LARGE, NLARGE);         /* another: a second plan */
    end = write_records(fh, buf, end, SMALL, NSMALL / 2);     /* the first again: a third */
    amptest_ok(MPI_File_close(&fh), "close");
    MPI_Info_free(&info);

    if (amptest_rank == 0 && amptest_under_ampio()) { /* the native MPI-IO keeps no such count */
        long long plans = plans_made(stats);
        amptest_check(plans == 3,
                      "%lld aggregator plans for %d calls of three layouts in turn, "
                      "expected 3",
                      plans, NSMALL + NLARGE + NSMALL / 2);
    }
    if (amptest_rank == 0) {
        unsigned char *want = malloc((size_t)end);
        long long at = 0;
        const int lens[3] = {SMALL, LARGE, SMALL}, calls[3] = {NSMALL, NLARGE, NSMALL / 2};
        for (int phase = 0; phase < 3; phase++)
            for (int c = 0; c < calls[phase]; c++)
                for (int r = 0; r < P; r++)
                    for (int i = 0; i < lens[phase]; i++, at++)
                        want[at] = amptest_byte(r, at);
        amptest_compare_file("plan.dat", want, (size_t)end);
        free(want);
        unlink(stats);
    }
    free(buf);
    return amptest_finish();
}
