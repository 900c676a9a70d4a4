/* The "rma" component: the pointer in an MPI-3 window at rank 0, advanced with
 * MPI_Fetch_and_op inside one passive-target epoch that lasts as long as the file is open. */
#include <stdlib.h>

#include "sharedfp/sfp_impl.h"

typedef struct {
    MPI_Win win;
} amp_sfp_rma_t;

static int amp_sfp_rma_create(amp_sfp_t *s)
{
    amp_sfp_rma_t *m = calloc(1, sizeof(*m));
    if (!m)
        return MPI_ERR_NO_MEM;
    MPI_Offset *base = NULL;
    int rc = PMPI_Win_allocate(s->rank == 0 ? sizeof(MPI_Offset) : 0, sizeof(MPI_Offset),
                               MPI_INFO_NULL, s->comm, &base, &m->win);
    if (rc != MPI_SUCCESS) {
        free(m);
        return rc;
    }
    if (s->rank == 0)
        *base = 0;
    PMPI_Barrier(s->comm);
    rc = PMPI_Win_lock_all(MPI_MODE_NOCHECK, m->win);
    if (rc != MPI_SUCCESS) {
        PMPI_Win_free(&m->win);
        free(m);
        return rc;
    }
    s->state = m;
    return MPI_SUCCESS;
}

static void amp_sfp_rma_destroy(amp_sfp_t *s, int collective)
{
    amp_sfp_rma_t *m = s->state;
    if (m && collective) {
        PMPI_Win_unlock_all(m->win);
        PMPI_Win_free(&m->win);
    }
    free(m);
    s->state = NULL;
}

static int amp_sfp_rma_op(amp_sfp_t *s, MPI_Offset in, MPI_Offset *out, MPI_Op op)
{
    amp_sfp_rma_t *m = s->state;
    int rc = PMPI_Fetch_and_op(&in, out, MPI_OFFSET, 0, 0, op, m->win);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Win_flush(0, m->win);
    return rc;
}

static int amp_sfp_rma_fetch_add(amp_sfp_t *s, MPI_Offset delta, MPI_Offset *before)
{
    return amp_sfp_rma_op(s, delta, before, MPI_SUM);
}

static int amp_sfp_rma_get(amp_sfp_t *s, MPI_Offset *value)
{
    return amp_sfp_rma_op(s, 0, value, MPI_NO_OP);
}

static int amp_sfp_rma_set(amp_sfp_t *s, MPI_Offset value)
{
    MPI_Offset old;
    return amp_sfp_rma_op(s, value, &old, MPI_REPLACE);
}

const amp_sfp_ops_t amp_sfp_rma_ops = {
    .name = "rma",
    .create = amp_sfp_rma_create,
    .destroy = amp_sfp_rma_destroy,
    .fetch_add = amp_sfp_rma_fetch_add,
    .get = amp_sfp_rma_get,
    .set = amp_sfp_rma_set,
};
