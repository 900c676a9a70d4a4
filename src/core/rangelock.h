/* Byte-range locks between the threads of one process. File locks (open file description
 * locks, and fcntl locks of the process) never conflict within the process that holds them, so
 * two threads would both hold "the" lock of a range: a lock here is taken first. Waiting
 * releases the lock's mutex (a condition variable), so no mutex is held while a thread waits;
 * the caller provides the node that records its range, so taking a lock never allocates. */
#ifndef AMP_RANGELOCK_H
#define AMP_RANGELOCK_H

#include <mpi.h>
#include <pthread.h>

typedef struct amp_range {
    MPI_Offset lo, hi;
    struct amp_range *next;
} amp_range_t;

typedef struct {
    pthread_mutex_t mutex;
    pthread_cond_t freed;
    amp_range_t *held;
} amp_rangelock_t;

void amp_rangelock_init(amp_rangelock_t *l);
void amp_rangelock_destroy(amp_rangelock_t *l);

/* Waits until no other holder's range overlaps [lo, hi), then holds it (through `node`). */
void amp_rangelock_acquire(amp_rangelock_t *l, amp_range_t *node, MPI_Offset lo, MPI_Offset hi);

/* Whether [lo, hi) could be taken at once (then it is held); never waits. */
int amp_rangelock_try(amp_rangelock_t *l, amp_range_t *node, MPI_Offset lo, MPI_Offset hi);

void amp_rangelock_release(amp_rangelock_t *l, amp_range_t *node);

#endif
