/* What the deferring components (individual, single) share: the operations, which differ only
 * in where a file's store of side files comes from. */
#ifndef AMP_SFP_DEFERRED_H
#define AMP_SFP_DEFERRED_H

#include "sharedfp/sfp_impl.h"
#include "sharedfp/sfp_store.h"

typedef struct {
    amp_sfp_t counter; /* the window component keeping the pointer */
    double clock_offset;
    amp_sfp_store_t *store;
    int64_t tag; /* names this file's records in the store */
} amp_sfp_deferred_t;

/* Collective: makes the pointer keeper and measures the clock; `m` (with its store and tag set)
 * becomes s->state on success. */
int amp_sfp_deferred_create(amp_sfp_t *s, amp_sfp_deferred_t *m);

/* Frees the pointer keeper; the caller frees `m` and its store. */
void amp_sfp_deferred_destroy(amp_sfp_t *s, int how);

int amp_sfp_deferred_fetch_add(amp_sfp_t *s, MPI_Offset delta, MPI_Offset *before);
int amp_sfp_deferred_fetch_add_collective(amp_sfp_t *s, MPI_Offset delta, MPI_Offset *before);
int amp_sfp_deferred_get(amp_sfp_t *s, MPI_Offset *value);
int amp_sfp_deferred_set(amp_sfp_t *s, MPI_Offset value);
int amp_sfp_deferred_write(amp_sfp_t *s, const void *buf, MPI_Count count, MPI_Datatype type,
                           amp_dt_t *mdt, MPI_Count bytes);
int amp_sfp_deferred_sync(amp_sfp_t *s);

/* The operations table of a deferring component, with its own create and destroy. */
#define AMP_SFP_DEFERRED_OPS(label, make, unmake)                                                  \
    {                                                                                              \
        .name = label, .create = make, .destroy = unmake, .fetch_add = amp_sfp_deferred_fetch_add, \
        .fetch_add_collective = amp_sfp_deferred_fetch_add_collective,                             \
        .get = amp_sfp_deferred_get, .set = amp_sfp_deferred_set, .write = amp_sfp_deferred_write, \
        .sync = amp_sfp_deferred_sync                                                              \
    }

#endif
