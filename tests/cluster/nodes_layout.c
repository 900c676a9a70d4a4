/* What only several nodes show: the node layout ampio detects and where it puts aggregators.
 * The nodes are known here from the host names (each emulated node has its own); ampio's
 * layout comes from MPI_Comm_split_type and is reported by MPI_File_get_info after a collective
 * call ("ampio_nodes", "ampio_node_of_rank", "ampio_aggregators"). For cb_nodes of one per node,
 * two per node and auto's own count, an interleaved collective write (every rank's 4 KiB blocks
 * alternating with the others') is read back against the model on every rank, and the
 * aggregators must be spread: no node has two more than another, and with one per node every
 * node has one. The native MPI-IO runs the data checks only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amptest.h"

#define BLOCK  4096
#define BLOCKS 8 /* per rank */

static char (*hosts)[256];
static int *node_of, nnodes;

static void find_nodes(void)
{
    char mine[256] = "";
    gethostname(mine, sizeof(mine) - 1);
    hosts = calloc((size_t)amptest_size, sizeof(*hosts));
    node_of = calloc((size_t)amptest_size, sizeof(int));
    MPI_Allgather(mine, 256, MPI_CHAR, hosts, 256, MPI_CHAR, MPI_COMM_WORLD);
    nnodes = 0;
    for (int r = 0; r < amptest_size; r++) {
        node_of[r] = -1;
        for (int q = 0; q < r && node_of[r] < 0; q++)
            if (!strcmp(hosts[q], hosts[r]))
                node_of[r] = node_of[q];
        if (node_of[r] < 0)
            node_of[r] = nnodes++;
    }
}

static int info_get(MPI_Info info, const char *key, char *value)
{
    int flag = 0;
    value[0] = '\0';
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    return flag;
}

static void check_layout(MPI_File fh, const char *label, int want_naggr)
{
    if (!amptest_under_ampio())
        return;
    MPI_Info info;
    if (!amptest_ok(MPI_File_get_info(fh, &info), "MPI_File_get_info"))
        return;
    char value[MPI_MAX_INFO_VAL + 1], expect[MPI_MAX_INFO_VAL + 1] = "";
    amptest_check(info_get(info, "ampio_nodes", value) && atoi(value) == nnodes,
                  "%s: ampio_nodes \"%s\", the hosts say %d", label, value, nnodes);
    size_t at = 0;
    for (int r = 0; r < amptest_size; r++)
        at += (size_t)snprintf(expect + at, sizeof(expect) - at, "%s%d", r ? "," : "", node_of[r]);
    amptest_check(info_get(info, "ampio_node_of_rank", value) && !strcmp(value, expect),
                  "%s: ampio_node_of_rank \"%s\", the hosts say \"%s\"", label, value, expect);
    int *per_node = calloc((size_t)nnodes, sizeof(int)), naggr = 0;
    if (amptest_check(info_get(info, "ampio_aggregators", value), "%s: no ampio_aggregators",
                      label)) {
        for (char *p = value; *p;) {
            int a = (int)strtol(p, &p, 10);
            if (amptest_check(a >= 0 && a < amptest_size, "%s: aggregator %d", label, a)) {
                per_node[node_of[a]]++;
                naggr++;
            }
            if (*p == ',')
                p++;
            else
                break;
        }
    }
    int lo = naggr, hi = 0;
    for (int k = 0; k < nnodes; k++) {
        lo = per_node[k] < lo ? per_node[k] : lo;
        hi = per_node[k] > hi ? per_node[k] : hi;
    }
    if (want_naggr > 0)
        amptest_check(naggr == want_naggr, "%s: %d aggregators, cb_nodes %d", label, naggr,
                      want_naggr);
    amptest_check(hi - lo <= 1, "%s: aggregators per node from %d to %d (%s)", label, lo, hi,
                  value);
    if (amptest_rank == 0)
        printf("%s: %d nodes, aggregators [%s], %d to %d per node\n", label, nnodes, value, lo, hi);
    free(per_node);
    MPI_Info_free(&info);
}

static void run(const char *label, int cb_nodes)
{
    char name[64];
    snprintf(name, sizeof(name), "layout_%s.dat", label);
    MPI_Info info;
    MPI_Info_create(&info);
    if (cb_nodes > 0) {
        char v[16];
        snprintf(v, sizeof(v), "%d", cb_nodes);
        MPI_Info_set(info, "ampio_fcoll", "two_phase");
        MPI_Info_set(info, "cb_nodes", v);
    }
    MPI_File fh;
    if (!amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name),
                                  MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
                    name)) {
        MPI_Info_free(&info);
        return;
    }
    MPI_Info_free(&info);
    /* block b of rank r at (b * size + r) * BLOCK */
    MPI_Datatype ft;
    MPI_Type_vector(BLOCKS, BLOCK, BLOCK * amptest_size, MPI_BYTE, &ft);
    MPI_Type_commit(&ft);
    amptest_ok(MPI_File_set_view(fh, (MPI_Offset)amptest_rank * BLOCK, MPI_BYTE, ft, "native",
                                 MPI_INFO_NULL),
               "MPI_File_set_view");
    unsigned char *buf = malloc(BLOCK * BLOCKS), *back = malloc(BLOCK * BLOCKS);
    for (int i = 0; i < BLOCK * BLOCKS; i++)
        buf[i] = amptest_byte(amptest_rank, i + cb_nodes * 7919);
    MPI_Status st;
    amptest_ok(MPI_File_write_all(fh, buf, BLOCK * BLOCKS, MPI_BYTE, &st), "MPI_File_write_all");
    check_layout(fh, label, cb_nodes);
    amptest_ok(MPI_File_sync(fh), "MPI_File_sync");
    MPI_Barrier(MPI_COMM_WORLD);
    amptest_ok(MPI_File_sync(fh), "MPI_File_sync");
    /* every rank reads a neighbour's blocks, written through another node's client */
    int peer = (amptest_rank + amptest_size / 2) % amptest_size;
    amptest_ok(
        MPI_File_set_view(fh, (MPI_Offset)peer * BLOCK, MPI_BYTE, ft, "native", MPI_INFO_NULL),
        "MPI_File_set_view");
    memset(back, 0, BLOCK * BLOCKS);
    amptest_ok(MPI_File_read_all(fh, back, BLOCK * BLOCKS, MPI_BYTE, &st), "MPI_File_read_all");
    for (int i = 0; i < BLOCK * BLOCKS; i++)
        if (back[i] != amptest_byte(peer, i + cb_nodes * 7919)) {
            amptest_model_mismatch(name, "rank %d: byte %d of rank %d's data differs", amptest_rank,
                                   i, peer);
            break;
        }
    amptest_ok(MPI_File_close(&fh), "MPI_File_close");
    MPI_Type_free(&ft);
    free(buf);
    free(back);
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    find_nodes();
    amptest_check(nnodes > 1 || amptest_size == 1, "the ranks run on %d node(s)", nnodes);
    run("per_node", nnodes);
    if (amptest_size >= 2 * nnodes)
        run("two_per_node", 2 * nnodes);
    run("auto", 0);
    free(hosts);
    free(node_of);
    return amptest_finish();
}
