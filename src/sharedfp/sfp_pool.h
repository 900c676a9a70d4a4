/* Pools of shared file pointers. Making a window is a collective allocation that costs more than
 * the rest of an open together, and starting a keeper process costs far more, so the components
 * that need one (shm, rma, addproc) do not make one per file: the processes of a group share one
 * keeper of AMP_SFP_POOL_SLOTS pointers, made by the first open on that group that needs it, and
 * every later open only takes a free slot. Rank 0 of the
 * group keeps the list of free slots, resets the slot it hands out and announces it in one
 * reduction, so every rank uses the same slot and nobody sees the previous file's value. */
#ifndef AMP_SFP_POOL_H
#define AMP_SFP_POOL_H

#include <mpi.h>
#include <stdint.h>

/* How a component is destroyed. */
typedef enum {
    AMP_SFP_DESTROY_LOCAL,      /* local cleanup only (the process is finalizing) */
    AMP_SFP_DESTROY_COLLECTIVE, /* collective: first waits until no rank uses it any more */
    AMP_SFP_DESTROY_ORDERED,    /* collective, after a step every rank's last use preceded */
} amp_sfp_destroy_t;

#define AMP_SFP_POOL_SLOTS 64

typedef enum {
    AMP_SFP_POOL_ANY,    /* a window: shm when every rank shares a node, else rma */
    AMP_SFP_POOL_SHM,    /* atomic instructions on memory mapped by every rank */
    AMP_SFP_POOL_RMA,    /* MPI_Fetch_and_op at rank 0 */
    AMP_SFP_POOL_KEEPER, /* a keeper process: spawned, else a thread (hint ampio_sharedfp_addproc)
                          */
    AMP_SFP_POOL_SPAWN,  /* a server process made with MPI_Comm_spawn */
    AMP_SFP_POOL_THREAD, /* a service thread in rank 0 */
    AMP_SFP_POOL_KINDS
} amp_sfp_pool_kind_t;

/* How a kind of pool keeps its slots. make and unmake are collective over `comm`, a private
 * communicator of the pool; make leaves every slot at 0 and returns the same outcome on every
 * rank (and on failure leaves nothing behind). op applies MPI_SUM, MPI_REPLACE or
 * MPI_NO_OP to one slot atomically and returns the value before; independent. */
typedef struct {
    const char *name;
    int (*make)(MPI_Comm comm, int rank, void **state);
    void (*unmake)(void *state);
    int (*op)(void *state, int index, MPI_Offset in, MPI_Offset *out, MPI_Op op);
} amp_sfp_backend_t;

extern const amp_sfp_backend_t amp_sfp_backend_shm, amp_sfp_backend_rma, amp_sfp_backend_spawn,
    amp_sfp_backend_thread;

typedef struct amp_sfp_pool amp_sfp_pool_t;

typedef struct {
    amp_sfp_pool_t *pool;
    int index;
    int *world; /* between an offer and its acceptance: the group's key (NULL: unknown) */
} amp_sfp_slot_t;

/* Collective over `comm`: takes a slot, set to 0, of a pool of `kind` (making the pool when the
 * group has none with a free slot). The same error on every rank when no such pool can be made
 * (shm across nodes, no way to start a keeper). */
int amp_sfp_slot_take(MPI_Comm comm, amp_sfp_pool_kind_t kind, amp_sfp_slot_t *slot);

/* amp_sfp_slot_take in steps around a reduction of the caller's, which or-s the
 * AMP_SFP_SLOT_WORDS words of every rank: the offer (local: rank 0 picks and resets a free slot
 * of a pool the group has), then the acceptance of the or-ed words (collective only when no
 * slot was offered or a rank cannot name the group: a pool is made then). When the reduction
 * failed, the offer is withdrawn instead (local). */
#define AMP_SFP_SLOT_WORDS 3
void amp_sfp_slot_offer(MPI_Comm comm, amp_sfp_pool_kind_t kind, amp_sfp_slot_t *slot,
                        uint64_t *words);
int amp_sfp_slot_accept(MPI_Comm comm, amp_sfp_pool_kind_t kind, amp_sfp_slot_t *slot,
                        const uint64_t *words);
void amp_sfp_slot_withdraw(amp_sfp_slot_t *slot);

/* Collective when `collective` (every rank is done with the slot), else local: the process is
 * finalizing and the file was never closed. */
void amp_sfp_slot_release(amp_sfp_slot_t *slot, int how);

/* The kind a taken slot lives in (never ANY or KEEPER). */
amp_sfp_pool_kind_t amp_sfp_slot_kind(const amp_sfp_slot_t *slot);

/* Atomic operations on the slot's value; independent. */
int amp_sfp_slot_fetch_add(amp_sfp_slot_t *slot, MPI_Offset delta, MPI_Offset *before);
int amp_sfp_slot_get(amp_sfp_slot_t *slot, MPI_Offset *value);
int amp_sfp_slot_set(amp_sfp_slot_t *slot, MPI_Offset value);

/* Collective over every process (MPI_Finalize): frees every pool's window. */
void amp_sfp_pool_free_all(void);

#endif
