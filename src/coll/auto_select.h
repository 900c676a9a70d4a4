/* Automatic selection of the number of aggregators (the saturation-point method): start from
 * groups of processes that access the file together, then split groups that write more than
 * k bytes and merge groups that write less, so that every aggregator writes about k bytes, the
 * least a process needs to saturate its path to storage. Pure computation on globally reduced
 * inputs, free of MPI, so every rank reaches the same plan and the unit tests run without MPI. */
#ifndef AMP_AUTO_SELECT_H
#define AMP_AUTO_SELECT_H

#include <stdint.h>

/* Where the initial groups came from. */
typedef enum {
    AMP_GROUPING_VIEW,     /* ranks whose data interleave in the file (rows of a 2-D/3-D grid) */
    AMP_GROUPING_CART,     /* lines of the Cartesian communicator the file was opened with */
    AMP_GROUPING_TOPOLOGY, /* lines of the ampio_topology hint, e.g. "4x4" */
    AMP_GROUPING_NONE,     /* every process its own group */
} amp_grouping_t;

extern const char *const amp_grouping_names[];

/* Groups are ranges of consecutive ranks: group g is [first[g], first[g + 1]). */
typedef struct amp_groups {
    int n;
    int *first; /* n + 1 entries */
} amp_groups_t;

/* Initial grouping from the file extents of this call: consecutive ranks whose extents
 * overlap (their data interleave, so together they fill contiguous runs of the file) form
 * one group. Rank r's entries are lo[r * stride], hi[r * stride], bytes[r * stride] (stride 1:
 * plain arrays; records of several words need no copy). `first` must hold nprocs + 1
 * entries. Returns the number of groups; 1 group per rank means the view showed no structure.
 * Ranks without data join the group before them. */
int amp_auto_group_by_extents(int nprocs, const int64_t *lo, const int64_t *hi,
                              const int64_t *bytes, int stride, int *first);

/* Initial grouping from a process grid (row-major, like MPI_Cart_create): one group per line
 * along the last dimension. Returns the number of groups, or 0 if the grid does not cover
 * exactly nprocs processes. */
int amp_auto_group_by_dims(int nprocs, int ndims, const int *dims, int *first);

/* Parses "4x4" or "2x2x4" into dims (at most `max`); returns ndims, or 0 when malformed. */
int amp_auto_parse_topology(const char *text, int *dims, int max);

/* Refines the initial groups for a call in which rank r writes bytes[r * stride]: a group above k
 * is split into round(bytes/k) subgroups balanced by bytes; groups below k merge with neighbours to
 * about k; a group left below k/2 joins its smaller neighbour. Returns 0, or -1 when out of memory.
 */
int amp_auto_refine(int nprocs, const int64_t *bytes, int stride, int64_t k,
                    const amp_groups_t *initial, amp_groups_t *out);

void amp_groups_free(amp_groups_t *g);

#endif
