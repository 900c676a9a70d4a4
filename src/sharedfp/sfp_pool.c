/* Pools of shared file pointers: one window of pointer slots per group of processes. */
#include "sharedfp/sfp_pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/fault.h"
#include "core/nodes.h"

struct amp_sfp_pool {
    amp_sfp_pool_t *next; /* creation order, which is the same on every process */
    int *world, n;        /* the group's key; NULL for a pool that is not kept */
    int id;               /* creation number within the group: names the pool in a reduction */
    amp_sfp_pool_kind_t kind;
    const amp_sfp_backend_t *backend;
    void *state; /* the backend's */
    MPI_Comm comm;
    unsigned char used[AMP_SFP_POOL_SLOTS]; /* at rank 0 */
};

static const amp_sfp_backend_t *const amp_sfp_backends[AMP_SFP_POOL_KINDS] = {
    [AMP_SFP_POOL_SHM] = &amp_sfp_backend_shm,
    [AMP_SFP_POOL_RMA] = &amp_sfp_backend_rma,
    [AMP_SFP_POOL_SPAWN] = &amp_sfp_backend_spawn,
    [AMP_SFP_POOL_THREAD] = &amp_sfp_backend_thread,
};

/* A kind of pool that a group could not make for a reason other than memory (no MPI window
 * across its nodes over this MPI's transports, no way to start a keeper): later opens on the
 * group give way to the next component at once instead of trying again, which costs five
 * collective steps and a failed collective allocation per open. */
typedef struct amp_sfp_refusal {
    struct amp_sfp_refusal *next;
    int *world, n;
    amp_sfp_pool_kind_t kind; /* the kind asked for */
    int cls;                  /* the error class the attempt gave */
} amp_sfp_refusal_t;

static amp_sfp_pool_t *amp_sfp_pools;
static amp_sfp_refusal_t *amp_sfp_refusals;
static pthread_mutex_t amp_sfp_pools_lock = PTHREAD_MUTEX_INITIALIZER;

/* Whether a kept key (NULL: none) names the group `world` of `n` processes. */
static int amp_sfp_same_key(const int *key, int nkey, const int *world, int n)
{
    return key && nkey == n && memcmp(key, world, (size_t)n * sizeof(int)) == 0;
}

static int amp_sfp_pool_same_group(const amp_sfp_pool_t *p, const int *world, int n)
{
    return amp_sfp_same_key(p->world, p->n, world, n);
}

/* Whether a pool of `have` serves a request for `want`. */
static int amp_sfp_pool_serves(amp_sfp_pool_kind_t have, amp_sfp_pool_kind_t want)
{
    if (want == AMP_SFP_POOL_ANY)
        return have == AMP_SFP_POOL_SHM || have == AMP_SFP_POOL_RMA;
    if (want == AMP_SFP_POOL_KEEPER)
        return have == AMP_SFP_POOL_SPAWN || have == AMP_SFP_POOL_THREAD;
    return have == want;
}

/* Rank 0: marks a free slot of a fit pool of the group used; returns the pool or NULL. */
static amp_sfp_pool_t *amp_sfp_pool_pick(const int *world, int n, amp_sfp_pool_kind_t kind,
                                         int *index)
{
    amp_sfp_pool_t *found = NULL;
    pthread_mutex_lock(&amp_sfp_pools_lock);
    for (amp_sfp_pool_t *p = amp_sfp_pools; p && !found; p = p->next) {
        if (!amp_sfp_pool_same_group(p, world, n) || !amp_sfp_pool_serves(p->kind, kind))
            continue;
        for (int i = 0; i < AMP_SFP_POOL_SLOTS && !found; i++)
            if (!p->used[i]) {
                p->used[i] = 1;
                *index = i;
                found = p;
            }
    }
    pthread_mutex_unlock(&amp_sfp_pools_lock);
    return found;
}

static amp_sfp_pool_t *amp_sfp_pool_find(const int *world, int n, int id)
{
    amp_sfp_pool_t *found = NULL;
    pthread_mutex_lock(&amp_sfp_pools_lock);
    for (amp_sfp_pool_t *p = amp_sfp_pools; p && !found; p = p->next)
        if (amp_sfp_pool_same_group(p, world, n) && p->id == id)
            found = p;
    pthread_mutex_unlock(&amp_sfp_pools_lock);
    return found;
}

/* Appends a made pool and numbers it within its group; every rank does so in the same order. */
static void amp_sfp_pool_keep(amp_sfp_pool_t *p)
{
    pthread_mutex_lock(&amp_sfp_pools_lock);
    amp_sfp_pool_t **tail = &amp_sfp_pools;
    for (; *tail; tail = &(*tail)->next)
        if (amp_sfp_pool_same_group(*tail, p->world, p->n))
            p->id++;
    *tail = p;
    pthread_mutex_unlock(&amp_sfp_pools_lock);
}

/* The error class a group's earlier attempt at a pool of `kind` gave, or MPI_SUCCESS. */
static int amp_sfp_pool_refused(const int *world, int n, amp_sfp_pool_kind_t kind)
{
    int cls = MPI_SUCCESS;
    pthread_mutex_lock(&amp_sfp_pools_lock);
    for (amp_sfp_refusal_t *r = amp_sfp_refusals; r && cls == MPI_SUCCESS; r = r->next)
        if (r->kind == kind && amp_sfp_same_key(r->world, r->n, world, n))
            cls = r->cls;
    pthread_mutex_unlock(&amp_sfp_pools_lock);
    return cls;
}

/* Collective: keeps the failure `rc` of a pool of `kind` for the group where no rank lacked
 * memory (which may pass): every rank keeps it or none does. */
static void amp_sfp_pool_refuse(MPI_Comm comm, const int *world, int n, amp_sfp_pool_kind_t kind,
                                int rc)
{
    amp_sfp_refusal_t *r = amp_malloc(sizeof(*r));
    int *key = amp_malloc((size_t)n * sizeof(int));
    int memory = !r || !key || amp_err_class(rc) == MPI_ERR_NO_MEM, any_memory = 1;
    if (PMPI_Allreduce(&memory, &any_memory, 1, MPI_INT, MPI_LOR, comm) != MPI_SUCCESS ||
        any_memory) { /* later opens try again */
        free(r);
        free(key);
        return;
    }
    memcpy(key, world, (size_t)n * sizeof(int));
    *r = (amp_sfp_refusal_t){.world = key, .n = n, .kind = kind, .cls = amp_err_class(rc)};
    pthread_mutex_lock(&amp_sfp_pools_lock);
    r->next = amp_sfp_refusals;
    amp_sfp_refusals = r;
    pthread_mutex_unlock(&amp_sfp_pools_lock);
}

static void amp_sfp_pool_destroy(amp_sfp_pool_t *p)
{
    p->backend->unmake(p->state);
    PMPI_Comm_free(&p->comm);
    free(p->world);
    free(p);
}

/* The kind to make for a request of `kind`: shared memory needs every rank on one node. */
static int amp_sfp_pool_resolve(MPI_Comm comm, int n, amp_sfp_pool_kind_t *kind)
{
    if (*kind != AMP_SFP_POOL_ANY && *kind != AMP_SFP_POOL_SHM)
        return MPI_SUCCESS;
    int *node = amp_malloc((size_t)n * sizeof(int)), nnodes = 0, local, all_local = 0;
    int rc = node ? amp_nodes_get(comm, n, node, &nnodes)
                  : amp_err(MPI_ERR_NO_MEM, "out of memory for the node layout");
    free(node);
    local = rc == MPI_SUCCESS && nnodes == 1;
    if (PMPI_Allreduce(&local, &all_local, 1, MPI_INT, MPI_LAND, comm) != MPI_SUCCESS)
        all_local = 0; /* not known to be everywhere: nowhere */
    if (!all_local && *kind == AMP_SFP_POOL_SHM)
        return amp_err(MPI_ERR_UNSUPPORTED_OPERATION,
                       "a shared-memory file pointer needs every process on one node");
    *kind = all_local ? AMP_SFP_POOL_SHM : AMP_SFP_POOL_RMA;
    return MPI_SUCCESS;
}

/* Makes a pool of `kind` over `comm` and agrees on it; on success slot 0 is taken and the pool
 * owns `world` (NULL: a pool for one file, not kept). */
static int amp_sfp_pool_make(MPI_Comm comm, amp_sfp_pool_kind_t kind, int *world, int n,
                             amp_sfp_pool_t **out)
{
    amp_sfp_pool_t *p = amp_calloc(1, sizeof(*p));
    int ok = p != NULL, all = 0, rc = MPI_SUCCESS, rank;
    PMPI_Comm_rank(comm, &rank);
    if (ok) {
        p->kind = kind;
        p->backend = amp_sfp_backends[kind];
        ok = PMPI_Comm_dup(comm, &p->comm) == MPI_SUCCESS;
    }
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, comm) != MPI_SUCCESS)
        all = 0; /* not known to be everywhere: nowhere */
    if (all)     /* collective over the pool's communicator, and agreed there */
        rc = p->backend->make(p->comm, rank, &p->state);
    if (!all || rc != MPI_SUCCESS) {
        if (ok)
            PMPI_Comm_free(&p->comm);
        free(p);
        return rc != MPI_SUCCESS ? rc
                                 : amp_err(MPI_ERR_NO_MEM, "out of memory for a file pointer pool");
    }
    p->world = world;
    p->n = n;
    p->used[0] = 1;
    if (world)
        amp_sfp_pool_keep(p);
    *out = p;
    return MPI_SUCCESS;
}

static int amp_sfp_slot_op(amp_sfp_slot_t *slot, MPI_Offset in, MPI_Offset *out, MPI_Op op)
{
    amp_sfp_pool_t *p = slot->pool;
    return p->backend->op(p->state, slot->index, in, out, op);
}

int amp_sfp_slot_fetch_add(amp_sfp_slot_t *slot, MPI_Offset delta, MPI_Offset *before)
{
    return amp_sfp_slot_op(slot, delta, before, MPI_SUM);
}

int amp_sfp_slot_get(amp_sfp_slot_t *slot, MPI_Offset *value)
{
    return amp_sfp_slot_op(slot, 0, value, MPI_NO_OP);
}

int amp_sfp_slot_set(amp_sfp_slot_t *slot, MPI_Offset value)
{
    MPI_Offset old;
    return amp_sfp_slot_op(slot, value, &old, MPI_REPLACE);
}

amp_sfp_pool_kind_t amp_sfp_slot_kind(const amp_sfp_slot_t *slot)
{
    return slot->pool->kind;
}

/* The words of an offer: rank 0's pool id + 1 and slot + 1 (0: none offered), and whether a rank
 * lacks the group's key. Pools are made and kept on every rank of a group or on none, so every
 * rank finds the pool named, and the outcome is the same everywhere. */
enum { AMP_SFP_OFFER_POOL, AMP_SFP_OFFER_SLOT, AMP_SFP_OFFER_NO_KEY };

void amp_sfp_slot_offer(MPI_Comm comm, amp_sfp_pool_kind_t kind, amp_sfp_slot_t *slot,
                        uint64_t *words)
{
    int rank, n;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &n);
    slot->pool = NULL;
    slot->world = amp_nodes_world_ranks(comm, n);
    memset(words, 0, AMP_SFP_SLOT_WORDS * sizeof(*words));
    words[AMP_SFP_OFFER_NO_KEY] = slot->world == NULL;
    int index;
    amp_sfp_pool_t *p;
    if (rank == 0 && slot->world && (p = amp_sfp_pool_pick(slot->world, n, kind, &index))) {
        slot->pool = p;
        slot->index = index;
        if (amp_sfp_slot_set(slot, 0) == MPI_SUCCESS) {
            words[AMP_SFP_OFFER_POOL] = (uint64_t)p->id + 1;
            words[AMP_SFP_OFFER_SLOT] = (uint64_t)index + 1;
        } else {
            slot->pool = NULL; /* the slot stays taken: its value is unknown */
        }
    }
}

void amp_sfp_slot_withdraw(amp_sfp_slot_t *slot)
{
    if (slot->pool) /* rank 0's pick: give it back */
        amp_sfp_slot_release(slot, AMP_SFP_DESTROY_LOCAL);
    free(slot->world);
    slot->world = NULL;
}

int amp_sfp_slot_accept(MPI_Comm comm, amp_sfp_pool_kind_t kind, amp_sfp_slot_t *slot,
                        const uint64_t *words)
{
    int n;
    PMPI_Comm_size(comm, &n);
    int *world = slot->world;
    slot->world = NULL;
    int no_key = words[AMP_SFP_OFFER_NO_KEY] != 0;
    amp_sfp_pool_t *p = NULL;
    if (words[AMP_SFP_OFFER_POOL] && !no_key &&
        (p = amp_sfp_pool_find(world, n, (int)words[AMP_SFP_OFFER_POOL] - 1))) {
        free(world);
        slot->pool = p;
        slot->index = (int)words[AMP_SFP_OFFER_SLOT] - 1;
        return MPI_SUCCESS;
    }
    if (slot->pool) /* picked, but a rank cannot name the group */
        amp_sfp_slot_release(slot, AMP_SFP_DESTROY_LOCAL);
    if (no_key) { /* a pool for this file alone */
        free(world);
        world = NULL;
    }
    int refused = world ? amp_sfp_pool_refused(world, n, kind) : MPI_SUCCESS;
    if (refused != MPI_SUCCESS) { /* the same on every rank: no collective step */
        free(world);
        return amp_err(refused,
                       "no %s pool of file pointers can be made for this group of "
                       "processes (an earlier open tried)",
                       kind == AMP_SFP_POOL_KEEPER ? "keeper" : "window");
    }
    amp_sfp_pool_kind_t made = kind == AMP_SFP_POOL_KEEPER ? AMP_SFP_POOL_SPAWN : kind;
    int rc = amp_sfp_pool_resolve(comm, n, &made);
    if (rc == MPI_SUCCESS)
        rc = amp_sfp_pool_make(comm, made, world, n, &p);
    /* what may stand in: rma for shared memory, a thread for a spawned keeper */
    if (rc != MPI_SUCCESS && kind == AMP_SFP_POOL_ANY && made == AMP_SFP_POOL_SHM)
        rc = amp_sfp_pool_make(comm, AMP_SFP_POOL_RMA, world, n, &p);
    if (rc != MPI_SUCCESS && kind == AMP_SFP_POOL_KEEPER)
        rc = amp_sfp_pool_make(comm, AMP_SFP_POOL_THREAD, world, n, &p);
    if (rc != MPI_SUCCESS) {
        if (world)
            amp_sfp_pool_refuse(comm, world, n, kind, rc);
        free(world);
        return rc;
    }
    slot->pool = p;
    slot->index = 0;
    return MPI_SUCCESS;
}

int amp_sfp_slot_take(MPI_Comm comm, amp_sfp_pool_kind_t kind, amp_sfp_slot_t *slot)
{
    /* rank 0 picks and resets a slot, then one reduction tells everyone and orders the reset
     * before any use */
    uint64_t offer[AMP_SFP_SLOT_WORDS], agreed[AMP_SFP_SLOT_WORDS];
    amp_sfp_slot_offer(comm, kind, slot, offer);
    if (PMPI_Allreduce(offer, agreed, AMP_SFP_SLOT_WORDS, MPI_UINT64_T, MPI_BOR, comm) !=
        MPI_SUCCESS) /* no pool known to be agreed: one of this file's own */
        agreed[AMP_SFP_OFFER_POOL] = 0, agreed[AMP_SFP_OFFER_NO_KEY] = 1;
    return amp_sfp_slot_accept(comm, kind, slot, agreed);
}

void amp_sfp_slot_release(amp_sfp_slot_t *slot, int how)
{
    amp_sfp_pool_t *p = slot->pool;
    if (!p)
        return;
    slot->pool = NULL;
    if (!p->world) { /* this file's own pool (MPI_Finalize reclaims it when not collective) */
        if (how != AMP_SFP_DESTROY_LOCAL)
            amp_sfp_pool_destroy(p);
        return;
    }
    if (how == AMP_SFP_DESTROY_COLLECTIVE) /* nobody uses the slot any more: rank 0 may hand */
        PMPI_Barrier(p->comm);             /* it out again */
    pthread_mutex_lock(&amp_sfp_pools_lock);
    p->used[slot->index] = 0;
    pthread_mutex_unlock(&amp_sfp_pools_lock);
}

void amp_sfp_pool_free_all(void)
{
    pthread_mutex_lock(&amp_sfp_pools_lock);
    amp_sfp_pool_t *p = amp_sfp_pools;
    amp_sfp_pools = NULL;
    amp_sfp_refusal_t *r = amp_sfp_refusals;
    amp_sfp_refusals = NULL;
    pthread_mutex_unlock(&amp_sfp_pools_lock);
    while (r) {
        amp_sfp_refusal_t *next = r->next;
        free(r->world);
        free(r);
        r = next;
    }
    while (p) { /* in creation order, the same in every process: each free is collective */
        amp_sfp_pool_t *next = p->next;
        amp_sfp_pool_destroy(p);
        p = next;
    }
}
