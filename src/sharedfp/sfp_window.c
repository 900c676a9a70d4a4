#include "sharedfp/sfp.h"

#include <stdlib.h>

#include "core/err.h"

struct amp_sfp {
    int method;
    MPI_Win win;
    MPI_Offset *shared; /* AMP_SFP_SHM: the pointer, mapped in every rank */
};

static int amp_sfp_create_shm(MPI_Comm comm, amp_sfp_t *s)
{
    int rank;
    PMPI_Comm_rank(comm, &rank);
    MPI_Offset *base = NULL;
    int rc = PMPI_Win_allocate_shared(rank == 0 ? sizeof(MPI_Offset) : 0, sizeof(MPI_Offset),
                                      MPI_INFO_NULL, comm, &base, &s->win);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Aint size;
    int unit;
    rc = PMPI_Win_shared_query(s->win, 0, &size, &unit, &s->shared);
    if (rc != MPI_SUCCESS) {
        PMPI_Win_free(&s->win);
        return rc;
    }
    if (rank == 0)
        __atomic_store_n(s->shared, 0, __ATOMIC_SEQ_CST);
    PMPI_Barrier(comm);
    return MPI_SUCCESS;
}

static int amp_sfp_create_rma(MPI_Comm comm, amp_sfp_t *s)
{
    int rank;
    PMPI_Comm_rank(comm, &rank);
    MPI_Offset *base = NULL;
    int rc = PMPI_Win_allocate(rank == 0 ? sizeof(MPI_Offset) : 0, sizeof(MPI_Offset),
                               MPI_INFO_NULL, comm, &base, &s->win);
    if (rc != MPI_SUCCESS)
        return rc;
    if (rank == 0)
        *base = 0;
    PMPI_Barrier(comm);
    rc = PMPI_Win_lock_all(MPI_MODE_NOCHECK, s->win);
    if (rc != MPI_SUCCESS)
        PMPI_Win_free(&s->win);
    return rc;
}

int amp_sfp_create(MPI_Comm comm, int method, amp_sfp_t **out)
{
    amp_sfp_t *s = calloc(1, sizeof(*s));
    if (!s)
        return amp_err(MPI_ERR_NO_MEM, "out of memory for a shared file pointer");
    if (method == AMP_SFP_AUTO) {
        MPI_Comm node;
        int size, node_size, all_local;
        PMPI_Comm_size(comm, &size);
        PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        PMPI_Comm_size(node, &node_size);
        PMPI_Comm_free(&node);
        /* every rank must pick the same method */
        int local = node_size == size;
        PMPI_Allreduce(&local, &all_local, 1, MPI_INT, MPI_LAND, comm);
        method = all_local ? AMP_SFP_SHM : AMP_SFP_RMA;
    }
    s->method = method;
    int rc = method == AMP_SFP_SHM ? amp_sfp_create_shm(comm, s) : amp_sfp_create_rma(comm, s);
    if (rc != MPI_SUCCESS) {
        free(s);
        return amp_err(amp_err_class(rc), "cannot create the shared file pointer window");
    }
    *out = s;
    return MPI_SUCCESS;
}

void amp_sfp_free(amp_sfp_t **sfp)
{
    amp_sfp_t *s = *sfp;
    if (!s)
        return;
    if (s->method == AMP_SFP_RMA)
        PMPI_Win_unlock_all(s->win);
    PMPI_Win_free(&s->win);
    free(s);
    *sfp = NULL;
}

int amp_sfp_fetch_add(amp_sfp_t *s, MPI_Offset delta, MPI_Offset *before)
{
    if (s->method == AMP_SFP_SHM) {
        *before = __atomic_fetch_add(s->shared, delta, __ATOMIC_SEQ_CST);
        return MPI_SUCCESS;
    }
    int rc = PMPI_Fetch_and_op(&delta, before, MPI_OFFSET, 0, 0, MPI_SUM, s->win);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Win_flush(0, s->win);
    return rc;
}

int amp_sfp_get(amp_sfp_t *s, MPI_Offset *value)
{
    if (s->method == AMP_SFP_SHM) {
        *value = __atomic_load_n(s->shared, __ATOMIC_SEQ_CST);
        return MPI_SUCCESS;
    }
    MPI_Offset unused = 0;
    int rc = PMPI_Fetch_and_op(&unused, value, MPI_OFFSET, 0, 0, MPI_NO_OP, s->win);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Win_flush(0, s->win);
    return rc;
}

int amp_sfp_set(amp_sfp_t *s, MPI_Offset value)
{
    if (s->method == AMP_SFP_SHM) {
        __atomic_store_n(s->shared, value, __ATOMIC_SEQ_CST);
        return MPI_SUCCESS;
    }
    MPI_Offset old;
    int rc = PMPI_Fetch_and_op(&value, &old, MPI_OFFSET, 0, 0, MPI_REPLACE, s->win);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Win_flush(0, s->win);
    return rc;
}

const char *amp_sfp_method(const amp_sfp_t *s)
{
    return s->method == AMP_SFP_SHM ? "shm" : "rma";
}
