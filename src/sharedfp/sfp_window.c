/* The window pools: "shm", the pointers in shared memory every rank maps, updated with atomic
 * instructions (all ranks on one node), and "rma", the pointers in an MPI-3 window at rank 0,
 * advanced with MPI_Fetch_and_op in a passive-target epoch that lasts as long as the pool. */
#include <stdlib.h>
#include <string.h>

#include "sharedfp/sfp_impl.h"
#include "core/fault.h"
#include "sharedfp/sfp_pool.h"

/* Slots of a shared-memory window sit one cache line apart, so that files used at once by
 * different ranks do not contend for one line. */
#define AMP_SFP_SHM_STRIDE 8

typedef struct {
    MPI_Win win;
    MPI_Offset *mapped; /* shm: every slot, mapped in this process */
} amp_sfp_win_t;

/* Agrees on `rc`; a rank that succeeded alone frees its window (`locked`: in a lock_all epoch). */
static int amp_sfp_win_agree(MPI_Comm comm, int rc, amp_sfp_win_t *w, int locked, void **state)
{
    int ok = rc == MPI_SUCCESS, all = 0;
    /* also: rank 0 zeroed the slots. Not known to be everywhere: nowhere */
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, comm) != MPI_SUCCESS)
        all = 0;
    if (all) {
        *state = w;
        return MPI_SUCCESS;
    }
    if (ok && locked)
        PMPI_Win_unlock_all(w->win);
    if (ok)
        PMPI_Win_free(&w->win);
    free(w);
    return rc != MPI_SUCCESS ? rc : MPI_ERR_OTHER;
}

static int amp_sfp_shm_make(MPI_Comm comm, int rank, void **state)
{
    amp_sfp_win_t *w = amp_calloc(1, sizeof(*w));
    MPI_Aint bytes = rank == 0 ? AMP_SFP_POOL_SLOTS * AMP_SFP_SHM_STRIDE * sizeof(MPI_Offset) : 0;
    MPI_Offset *base = NULL;
    int rc =
        w ? PMPI_Win_allocate_shared(bytes, sizeof(MPI_Offset), MPI_INFO_NULL, comm, &base, &w->win)
          : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) {
        MPI_Aint size;
        int unit;
        if ((rc = PMPI_Win_shared_query(w->win, 0, &size, &unit, &w->mapped)) != MPI_SUCCESS)
            PMPI_Win_free(&w->win);
        else if (rank == 0)
            memset(w->mapped, 0, (size_t)bytes);
    }
    return amp_sfp_win_agree(comm, rc, w, 0, state);
}

static int amp_sfp_rma_make(MPI_Comm comm, int rank, void **state)
{
    amp_sfp_win_t *w = amp_calloc(1, sizeof(*w));
    MPI_Aint bytes = rank == 0 ? AMP_SFP_POOL_SLOTS * sizeof(MPI_Offset) : 0;
    MPI_Offset *base = NULL;
    int rc = w ? PMPI_Win_allocate(bytes, sizeof(MPI_Offset), MPI_INFO_NULL, comm, &base, &w->win)
               : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS && rank == 0)
        memset(base, 0, (size_t)bytes);
    if (rc == MPI_SUCCESS && (rc = PMPI_Win_lock_all(MPI_MODE_NOCHECK, w->win)) != MPI_SUCCESS)
        PMPI_Win_free(&w->win);
    return amp_sfp_win_agree(comm, rc, w, 1, state);
}

static void amp_sfp_shm_unmake(void *state)
{
    amp_sfp_win_t *w = state;
    PMPI_Win_free(&w->win);
    free(w);
}

static void amp_sfp_rma_unmake(void *state)
{
    amp_sfp_win_t *w = state;
    PMPI_Win_unlock_all(w->win);
    PMPI_Win_free(&w->win);
    free(w);
}

static int amp_sfp_shm_op(void *state, int index, MPI_Offset in, MPI_Offset *out, MPI_Op op)
{
    amp_sfp_win_t *w = state;
    MPI_Offset *v = &w->mapped[index * AMP_SFP_SHM_STRIDE];
    if (op == MPI_SUM)
        *out = __atomic_fetch_add(v, in, __ATOMIC_SEQ_CST);
    else if (op == MPI_REPLACE)
        *out = __atomic_exchange_n(v, in, __ATOMIC_SEQ_CST);
    else
        *out = __atomic_load_n(v, __ATOMIC_SEQ_CST);
    return MPI_SUCCESS;
}

static int amp_sfp_rma_op(void *state, int index, MPI_Offset in, MPI_Offset *out, MPI_Op op)
{
    amp_sfp_win_t *w = state;
    int rc = PMPI_Fetch_and_op(&in, out, MPI_OFFSET, 0, index, op, w->win);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Win_flush(0, w->win);
    return rc;
}

const amp_sfp_backend_t amp_sfp_backend_shm = {
    .name = "shm", .make = amp_sfp_shm_make, .unmake = amp_sfp_shm_unmake, .op = amp_sfp_shm_op};
const amp_sfp_backend_t amp_sfp_backend_rma = {
    .name = "rma", .make = amp_sfp_rma_make, .unmake = amp_sfp_rma_unmake, .op = amp_sfp_rma_op};
