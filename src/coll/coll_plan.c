/* The pure part of planning a collective call: functions of the call's description (the record
 * every rank allgathers) and of a few numbers, free of MPI and of the file, so that every rank
 * reaches the same result and bench/bench_plan can feed them synthetic descriptions of any
 * number of ranks. */
#include <stdlib.h>

#include "coll/coll_internal.h"
#include "core/err.h"
#include "core/fault.h"

void amp_coll_summarize(amp_coll_call_t *c)
{
    const amp_coll_rank_t *ranks = c->ranks;
    c->glo = -1;
    c->ghi = 0;
    c->gbytes = 0;
    c->disjoint = 1;
    MPI_Offset prev_hi = -1;
    for (int r = 0; r < c->nprocs; r++) {
        if (ranks[r].bytes == 0)
            continue;
        if (ranks[r].lo < prev_hi)
            c->disjoint = 0;
        prev_hi = ranks[r].hi;
        if (c->glo < 0 || ranks[r].lo < c->glo)
            c->glo = ranks[r].lo;
        if (ranks[r].hi > c->ghi)
            c->ghi = ranks[r].hi;
        c->gbytes += ranks[r].bytes;
    }
}

/* Whether the ranks' data, each in a range of its own, are on average smaller than a stripe
 * unit of the file system's layout and some of them share a stripe unit. */
static int amp_coll_small_shared_stripes(const amp_coll_call_t *c)
{
    const amp_fs_layout_t *l = c->layout;
    if (!l || l->source != AMP_LAYOUT_FS || l->unit <= 0)
        return 0;
    int with_data = 0, shared = 0;
    MPI_Offset prev_last = -1; /* the last stripe unit of the previous rank with data */
    for (int r = 0; r < c->nprocs; r++) {
        const amp_coll_rank_t *x = &c->ranks[r];
        if (x->bytes == 0)
            continue;
        with_data++;
        shared |= x->lo / l->unit == prev_last;
        prev_last = (x->hi - 1) / l->unit;
    }
    return shared && c->gbytes < (MPI_Offset)with_data * l->unit;
}

int amp_coll_choose_shape(amp_coll_call_t *c, int write)
{
    /* Aggregation pays when ranks' data interleave in the file: it turns many small pieces
     * into few large writes and keeps every block with one writer. When each rank's data lie
     * in a range of the file of its own, the owners access it directly (sieving any holes
     * under a lock of their own range), which measured faster than any aggregation here for
     * every pattern of ampio-bench (docs/PERFORMANCE.md), unless the ranges are small pieces
     * of the stripes of a striped file system: there clients contend for the stripes they
     * share (extent locks on Lustre; on CephFS, clients of several nodes with the file open
     * write synchronously, one request each: 4 KiB per rank and call measured 3.3 MB/s
     * owners, 8-13 aggregated, on the emulated cluster). */
    int shared = c->disjoint && amp_coll_small_shared_stripes(c);
    if (c->disjoint && !shared) {
        c->why = "every rank's data in a file range of its own: accessed by its owner";
        return AMP_FCOLL_INDIVIDUAL;
    }
    /* Where the file is striped over several targets, stripe-contiguous domains keep every
     * stripe with one writer and every writer with few targets. Reads take no exclusive
     * extent lock to keep apart, and a domain of every count-th stripe reads out of the
     * file's order, which the client's read-ahead does not follow: tiles on the emulated
     * cluster read at 127-146 MB/s from file-contiguous domains (2-6 aggregators) against
     * 90-118 from stripe-contiguous ones, medians of 6, in two sweeps. */
    if (write && c->layout->count > 1) {
        c->why = shared ? "ranks' pieces smaller than the stripes they share: "
                          "stripe-contiguous domains"
                        : "ranks' data interleave in a striped file: stripe-contiguous domains";
        return AMP_FCOLL_STRIPE;
    }
    /* Groups of ranks that fill contiguous parts of the file together (rows of a process
     * grid) each gather to an aggregator of their own, as in dynamic segmentation: no
     * all-to-all. The quick sweeps measured it ahead of file domains for tiles (2.0 against
     * 1.0-1.6 GB/s writing at 4 ranks) and for coll_perf and tile reads; groups that
     * interleave in the file fall back to file domains (coll.c). */
    c->why = shared ? "ranks' pieces smaller than the stripes they share: aggregated by groups"
                    : "ranks' data interleave in the file: aggregated by groups";
    return AMP_FCOLL_DYNAMIC_SEG;
}

int amp_coll_place_aggregators(const int *node, int nnodes, int nprocs, int per_node, int n,
                               int *out, int *count)
{
    *count = 0;
    /* slot j of node k is the j-th rank of node k: take slot 0 of every node, then slot 1,
     * each slot in rank order. In two passes over the ranks: how many ranks every slot holds,
     * which tells the last slot needed, then the ranks of the slots before it and the first
     * ones of that slot (the rescan of every rank per slot took seconds at 100,000 ranks). */
    int *seen = amp_calloc((size_t)nnodes + 1, sizeof(int));
    int *per_slot = amp_calloc((size_t)nprocs + 1, sizeof(int));
    if (!seen || !per_slot) {
        free(seen);
        free(per_slot);
        return amp_err(MPI_ERR_NO_MEM, "out of memory choosing aggregators");
    }
    int slots = per_node > 0 && per_node < nprocs ? per_node : nprocs;
    for (int r = 0; r < nprocs; r++)
        per_slot[seen[node[r]]++]++;
    int last = 0, before = 0; /* the slot where n is reached, the ranks of the slots before */
    while (last < slots - 1 && before + per_slot[last] < n)
        before += per_slot[last++];
    int take_last = n - before < per_slot[last] ? n - before : per_slot[last];
    if (take_last < 0)
        take_last = 0;
    for (int k = 0; k < nnodes; k++)
        seen[k] = 0;
    int k = 0;
    for (int r = 0; r < nprocs; r++) {
        int slot = seen[node[r]]++;
        if (slot < last || (slot == last && take_last-- > 0))
            out[k++] = r;
    }
    free(seen);
    free(per_slot);
    *count = k;
    return MPI_SUCCESS;
}
