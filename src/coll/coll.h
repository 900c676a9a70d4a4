/* Collective data access: the entry from the access layer. */
#ifndef AMP_COLL_H
#define AMP_COLL_H

#include "io/file.h"

/* One rank's part of a collective access, in view terms. */
typedef struct amp_coll_io {
    int write;
    MPI_Count pos;    /* first data byte of the view */
    MPI_Count nbytes; /* bytes this rank moves (0 allowed) */
    void *mem;        /* memory and the layout of its items */
    const amp_dt_t *mdt;
    int failed; /* this rank's arguments were bad: it takes part without data */
} amp_coll_io_t;

/* Runs a collective access with the algorithm the file's hints and the call's shape choose.
 * Collective over the file's communicator; `*done` is the bytes this rank moved. Errors are
 * agreed on by the caller, unless `*agreed` comes back true: then every rank is known to
 * have succeeded. */
int amp_coll_access(amp_file_t *f, const amp_coll_io_t *io, MPI_Count *done, int *agreed);

/* The cycle buffer of an aggregator: cb_buffer_size, or k rounded up to whole stripe units. */
MPI_Offset amp_coll_cycle_buffer(const amp_cfg_t *cfg, const amp_fs_layout_t *layout);

/* Adds what the last collective call used (cb_nodes, ampio_aggregators, ampio_fcoll). */
int amp_coll_info(amp_file_t *f, MPI_Info info);

/* Prints or writes the per-file statistics (AMPIO_STATS); collective. */
void amp_coll_stats_report(amp_file_t *f);

/* Per-file set-up of what the collective layer keeps, in two steps around the open's
 * agreement. Local: the state, and the node layout when this process knows it (`*known`;
 * `*crowded` then tells whether this rank's node runs more of the file's ranks than it has
 * cores). Then, once the open agreed, with `all_known` and `crowded` agreed over the ranks
 * (every rank knew the layout; some rank's node is crowded): collective only when some rank
 * did not know the layout (the first open on a group), and then agreed. On a crowded file
 * the collectives poll (core/task.h). */
int amp_coll_file_prepare(amp_file_t *f, int *known, int *crowded);
int amp_coll_file_settle(amp_file_t *f, int all_known, int crowded);
void amp_coll_file_free(amp_file_t *f);

#endif
