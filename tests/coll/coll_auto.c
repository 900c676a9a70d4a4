/* The automatic aggregator choice on real calls: a 2-D tile pattern on a Cartesian
 * communicator, written with growing data volumes under a small saturation point k. Under
 * ampio, interleaved tiles are aggregated and MPI_File_get_info must report one aggregator
 * while the whole call is below k, every process once each writes more than k, counts that
 * never shrink as the volume grows, and the same answer on every rank; tiles of whole rows
 * are written by their owners. Every file is checked against the model and the native run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amptest.h"

#define K 65536

static int aggregators(MPI_File fh, char *fcoll, size_t len)
{
    MPI_Info info;
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0, n = -1;
    MPI_File_get_info(fh, &info);
    MPI_Info_get(info, "cb_nodes", MPI_MAX_INFO_VAL, value, &flag);
    if (flag)
        n = atoi(value);
    MPI_Info_get(info, "ampio_fcoll", MPI_MAX_INFO_VAL, value, &flag);
    snprintf(fcoll, len, "%s", flag ? value : "?");
    MPI_Info_free(&info);
    return n;
}

/* One call: each rank writes a tile of rows x cols ints of a global row-major array. */
static int run(MPI_Comm cart, const int *dims, int rows, int cols, int *aggregated)
{
    int coords[2], r = amptest_rank;
    MPI_Cart_coords(cart, r, 2, coords);
    int gsizes[2] = {dims[0] * rows, dims[1] * cols}, lsizes[2] = {rows, cols},
        starts[2] = {coords[0] * rows, coords[1] * cols};
    MPI_Datatype tile;
    MPI_Type_create_subarray(2, gsizes, lsizes, starts, MPI_ORDER_C, MPI_INT, &tile);
    MPI_Type_commit(&tile);
    int n = rows * cols;
    int *v = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        v[i] = r * 1000000 + i;
    char name[64], fcoll[MPI_MAX_INFO_VAL + 1];
    snprintf(name, sizeof(name), "auto.%dx%d.dat", rows, cols);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "ampio_saturation_k", "64K");
    MPI_File fh;
    int naggr = -1;
    if (amptest_ok(
            MPI_File_open(cart, amptest_path(name), MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh),
            name)) {
        MPI_Status st;
        amptest_ok(MPI_File_set_view(fh, 0, MPI_INT, tile, "native", info), "set_view");
        amptest_ok(MPI_File_write_all(fh, v, n, MPI_INT, &st), "write_all");
        naggr = aggregators(fh, fcoll, sizeof(fcoll));
        *aggregated = strcmp(fcoll, "individual") != 0;
        amptest_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0) {
        size_t total = (size_t)gsizes[0] * gsizes[1];
        int *model = malloc(sizeof(int) * total);
        for (int q = 0; q < amptest_size; q++) {
            int qc[2];
            MPI_Cart_coords(cart, q, 2, qc);
            for (int i = 0; i < n; i++)
                model[(size_t)(qc[0] * rows + i / cols) * gsizes[1] + qc[1] * cols + i % cols] =
                    q * 1000000 + i;
        }
        amptest_compare_file(name, model, sizeof(int) * total);
        free(model);
    }
    if (amptest_under_ampio()) {
        int lo = naggr, hi = naggr;
        MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        amptest_check(lo == hi, "%s: ranks disagree on the aggregator count (%d..%d)", name, lo,
                      hi);
        if (r == 0 && getenv("AMPTEST_VERBOSE"))
            printf("%s: %lld bytes per rank: %s with %d aggregator(s)\n", name, (long long)n * 4,
                   fcoll, naggr);
    }
    MPI_Info_free(&info);
    MPI_Type_free(&tile);
    free(v);
    return naggr;
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    int P = amptest_size, dims[2] = {0, 0}, periods[2] = {0, 0};
    MPI_Dims_create(P, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    /* per rank: 1 KiB, 16 KiB, 64 KiB, 256 KiB; k = 64 KiB */
    const int shapes[4][2] = {{16, 16}, {64, 64}, {128, 128}, {256, 256}};
    int prev = 0;
    for (int s = 0; s < 4; s++) {
        int aggregated = 1;
        int naggr = run(cart, dims, shapes[s][0], shapes[s][1], &aggregated);
        if (!amptest_under_ampio())
            continue;
        /* tiles interleave in the file unless each holds whole rows: then owners write them */
        amptest_check(aggregated == (dims[1] > 1), "tiles of %dx%d ranks %s aggregated", dims[0],
                      dims[1], aggregated ? "were" : "were not");
        if (!aggregated)
            continue;
        long long per_rank = 4LL * shapes[s][0] * shapes[s][1];
        if (per_rank * P < K)
            amptest_check(naggr == 1, "%lld bytes in all: %d aggregators, expected 1", per_rank * P,
                          naggr);
        if (per_rank >= K)
            amptest_check(naggr == P, "%lld bytes per rank, above k: %d aggregators, expected %d",
                          per_rank, naggr, P);
        amptest_check(naggr >= prev, "more data, fewer aggregators (%d after %d)", naggr, prev);
        prev = naggr;
    }
    MPI_Comm_free(&cart);
    return amptest_finish();
}
