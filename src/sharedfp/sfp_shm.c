/* The "shm" component: the pointer in a shared-memory window that every rank maps, updated
 * with atomic instructions. Needs all ranks on one node. */
#include <stdlib.h>

#include "sharedfp/sfp_impl.h"

typedef struct {
    MPI_Win win;
    MPI_Offset *value; /* mapped in every rank */
} amp_sfp_shm_t;

static int amp_sfp_shm_create(amp_sfp_t *s)
{
    amp_sfp_shm_t *m = calloc(1, sizeof(*m));
    int rc = m ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    MPI_Offset *base = NULL;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Win_allocate_shared(s->rank == 0 ? sizeof(MPI_Offset) : 0, sizeof(MPI_Offset),
                                      MPI_INFO_NULL, s->comm, &base, &m->win);
    if (rc != MPI_SUCCESS) {
        free(m);
        return rc;
    }
    MPI_Aint size;
    int unit;
    rc = PMPI_Win_shared_query(m->win, 0, &size, &unit, &m->value);
    if (rc != MPI_SUCCESS) {
        PMPI_Win_free(&m->win);
        free(m);
        return rc;
    }
    if (s->rank == 0)
        __atomic_store_n(m->value, 0, __ATOMIC_SEQ_CST);
    PMPI_Barrier(s->comm);
    s->state = m;
    return MPI_SUCCESS;
}

static void amp_sfp_shm_destroy(amp_sfp_t *s, int collective)
{
    amp_sfp_shm_t *m = s->state;
    if (m && collective)
        PMPI_Win_free(&m->win); /* else MPI_Finalize reclaims it */
    free(m);
    s->state = NULL;
}

static int amp_sfp_shm_fetch_add(amp_sfp_t *s, MPI_Offset delta, MPI_Offset *before)
{
    amp_sfp_shm_t *m = s->state;
    *before = __atomic_fetch_add(m->value, delta, __ATOMIC_SEQ_CST);
    return MPI_SUCCESS;
}

static int amp_sfp_shm_get(amp_sfp_t *s, MPI_Offset *value)
{
    amp_sfp_shm_t *m = s->state;
    *value = __atomic_load_n(m->value, __ATOMIC_SEQ_CST);
    return MPI_SUCCESS;
}

static int amp_sfp_shm_set(amp_sfp_t *s, MPI_Offset value)
{
    amp_sfp_shm_t *m = s->state;
    __atomic_store_n(m->value, value, __ATOMIC_SEQ_CST);
    return MPI_SUCCESS;
}

const amp_sfp_ops_t amp_sfp_shm_ops = {
    .name = "shm",
    .create = amp_sfp_shm_create,
    .destroy = amp_sfp_shm_destroy,
    .fetch_add = amp_sfp_shm_fetch_add,
    .get = amp_sfp_shm_get,
    .set = amp_sfp_shm_set,
};
