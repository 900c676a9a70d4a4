/* The "individual" component: each process defers its write_shared data to side files of its
 * own for each file, ".<file>.ampio-sfp-<token>.<rank>.data" and ".meta" (see sfp_deferred.c). */
#include <stdio.h>
#include <stdlib.h>

#include "core/fault.h"
#include "sharedfp/sfp_deferred.h"

static int amp_sfp_individual_create(amp_sfp_t *s)
{
    amp_sfp_deferred_t *m = amp_calloc(1, sizeof(*m));
    char suffix[48], *data_name = NULL, *meta_name = NULL;
    int rc = m ? MPI_SUCCESS : MPI_ERR_NO_MEM, ok, all = 0;
    if (rc == MPI_SUCCESS) {
        snprintf(suffix, sizeof(suffix), ".%d.data", s->rank);
        rc = amp_sfp_side_name(s, suffix, &data_name);
    }
    if (rc == MPI_SUCCESS) {
        snprintf(suffix, sizeof(suffix), ".%d.meta", s->rank);
        rc = amp_sfp_side_name(s, suffix, &meta_name);
    }
    if (rc == MPI_SUCCESS && !(m->store = amp_sfp_store_new(data_name, meta_name)))
        rc = MPI_ERR_NO_MEM;
    else if (rc != MPI_SUCCESS) {
        free(data_name);
        free(meta_name);
    }
    ok = rc == MPI_SUCCESS;
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, s->comm) != MPI_SUCCESS)
        all = 0; /* not known to be everywhere: nowhere */
    if (all && (rc = amp_sfp_deferred_create(s, m)) == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (m)
        amp_sfp_store_free(m->store);
    free(m);
    return all ? rc : MPI_ERR_NO_MEM;
}

static void amp_sfp_individual_destroy(amp_sfp_t *s, int how)
{
    amp_sfp_deferred_t *m = s->state;
    if (!m)
        return;
    amp_sfp_deferred_destroy(s, how);
    amp_sfp_store_free(m->store);
    free(m);
    s->state = NULL;
}

const amp_sfp_ops_t amp_sfp_individual_ops =
    AMP_SFP_DEFERRED_OPS("individual", amp_sfp_individual_create, amp_sfp_individual_destroy);
