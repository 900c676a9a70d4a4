/* The automatic choice of algorithm from a call's description (coll_plan.c), without MPI: ranks
 * with ranges of their own access them directly, unless their pieces are smaller than the stripes
 * of a striped file system and share them; interleaved data are aggregated, written through
 * stripe-contiguous domains where the file has several targets, read by groups. */
#include <string.h>

#include "coll/coll_internal.h"
#include "unit.h"

#define KIB 1024LL
#define MIB (1LL << 20)

enum { NPROCS = 8 };

/* The choice for a write (or a read) of NPROCS ranks, rank r holding `len` bytes at `first + r *
 * stride` (every `skip`-th rank nothing), on a layout of `unit` x `count` from `source`. */
static int choice_of(int write, int64_t first, int64_t stride, int64_t len, int skip, int64_t unit,
                     int64_t count, int source)
{
    amp_coll_rank_t ranks[NPROCS];
    memset(ranks, 0, sizeof(ranks));
    for (int r = 0; r < NPROCS; r++)
        if (!skip || r % skip != 0)
            ranks[r] = (amp_coll_rank_t){first + r * stride, first + r * stride + len, len, 0, 0};
    amp_fs_layout_t layout = {.unit = unit, .count = count, .start = -1, .source = source};
    amp_coll_call_t c = {.nprocs = NPROCS, .ranks = ranks, .layout = &layout};
    amp_coll_summarize(&c);
    return amp_coll_choose_shape(&c, write);
}

#define choice(...) choice_of(1, __VA_ARGS__)

int main(void)
{
    /* IOR with 4 KiB transfers: the ranks' pieces of one call side by side in one stripe */
    UNIT_EQ(choice(0, 4 * KIB, 4 * KIB, 0, MIB, 3, AMP_LAYOUT_FS), AMP_FCOLL_STRIPE);
    UNIT_EQ(choice(0, 4 * KIB, 4 * KIB, 0, MIB, 1, AMP_LAYOUT_FS), AMP_FCOLL_DYNAMIC_SEG);
    /* with holes and ranks without data, still sharing a unit */
    UNIT_EQ(choice(MIB, 8 * KIB, 4 * KIB, 3, MIB, 3, AMP_LAYOUT_FS), AMP_FCOLL_STRIPE);
    /* a file system without stripes, or stripes only the hints speak of: the owners */
    UNIT_EQ(choice(0, 4 * KIB, 4 * KIB, 0, MIB, 1, AMP_LAYOUT_BLOCK), AMP_FCOLL_INDIVIDUAL);
    UNIT_EQ(choice(0, 4 * KIB, 4 * KIB, 0, MIB, 3, AMP_LAYOUT_HINTS), AMP_FCOLL_INDIVIDUAL);
    /* small pieces each in a stripe unit of its own: nothing shared */
    UNIT_EQ(choice(0, MIB, 4 * KIB, 0, MIB, 3, AMP_LAYOUT_FS), AMP_FCOLL_INDIVIDUAL);
    /* whole aligned stripes (IOR 1 MiB transfers, restart blocks) */
    UNIT_EQ(choice(0, MIB, MIB, 0, MIB, 3, AMP_LAYOUT_FS), AMP_FCOLL_INDIVIDUAL);
    UNIT_EQ(choice(0, 4 * MIB, 4 * MIB, 0, MIB, 3, AMP_LAYOUT_FS), AMP_FCOLL_INDIVIDUAL);
    /* large blocks that share only the units at their boundaries */
    UNIT_EQ(choice(0, 3 * MIB + 5, 3 * MIB + 5, 0, MIB, 3, AMP_LAYOUT_FS), AMP_FCOLL_INDIVIDUAL);
    /* interleaved data (ranges overlap): aggregated as before */
    UNIT_EQ(choice(0, 4 * KIB, 64 * KIB, 0, MIB, 3, AMP_LAYOUT_FS), AMP_FCOLL_STRIPE);
    UNIT_EQ(choice(0, 4 * KIB, 64 * KIB, 0, MIB, 1, AMP_LAYOUT_BLOCK), AMP_FCOLL_DYNAMIC_SEG);
    /* reads: by groups, in the file's order, striped or not; owners as for writes */
    UNIT_EQ(choice_of(0, 0, 4 * KIB, 64 * KIB, 0, MIB, 3, AMP_LAYOUT_FS), AMP_FCOLL_DYNAMIC_SEG);
    UNIT_EQ(choice_of(0, 0, 4 * KIB, 4 * KIB, 0, MIB, 3, AMP_LAYOUT_FS), AMP_FCOLL_DYNAMIC_SEG);
    UNIT_EQ(choice_of(0, 0, MIB, MIB, 0, MIB, 3, AMP_LAYOUT_FS), AMP_FCOLL_INDIVIDUAL);
    return unit_report("test_choose");
}
