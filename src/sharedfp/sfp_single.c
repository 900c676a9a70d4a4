/* The "single" component: like individual, but a process keeps one side data file and one
 * metadata file for all the files it has open with this component, so that a program with many
 * files puts no more files on the metadata server than one. The store lives from the first open
 * to the last close; it sits next to the file opened first, named after the process
 * (".ampio-sfp-proc-<token>.<rank>.data" and ".meta"), and records carry the file they belong to.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/fault.h"
#include "sharedfp/sfp_deferred.h"

static struct {
    pthread_mutex_t lock;
    amp_sfp_store_t *store;
    int users;
    int64_t next_tag;
} amp_sfp_single = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The process's store, made on the first call; counts a user. */
static amp_sfp_store_t *amp_sfp_single_attach(amp_sfp_t *s, int64_t *tag)
{
    pthread_mutex_lock(&amp_sfp_single.lock);
    if (!amp_sfp_single.store) {
        char suffix[48], *data_name = NULL, *meta_name = NULL;
        snprintf(suffix, sizeof(suffix), ".%d.data", s->rank);
        int rc = amp_sfp_side_name_process(s->f->path, suffix, &data_name);
        snprintf(suffix, sizeof(suffix), ".%d.meta", s->rank);
        if (rc == MPI_SUCCESS)
            rc = amp_sfp_side_name_process(s->f->path, suffix, &meta_name);
        if (rc == MPI_SUCCESS)
            amp_sfp_single.store = amp_sfp_store_new(data_name, meta_name);
        else
            free(data_name);
    }
    amp_sfp_store_t *store = amp_sfp_single.store;
    if (store) {
        amp_sfp_single.users++;
        *tag = amp_sfp_single.next_tag++;
    }
    pthread_mutex_unlock(&amp_sfp_single.lock);
    return store;
}

static void amp_sfp_single_detach(amp_sfp_store_t *store, int64_t tag)
{
    /* records a file never merged (it was not closed) go with it */
    amp_sfp_rec_t *left = NULL;
    int64_t n = 0;
    amp_sfp_store_lock(store);
    amp_sfp_store_take(store, tag, &left, &n);
    amp_sfp_store_done(store);
    amp_sfp_store_unlock(store);
    free(left);
    pthread_mutex_lock(&amp_sfp_single.lock);
    if (--amp_sfp_single.users == 0) {
        amp_sfp_store_free(amp_sfp_single.store);
        amp_sfp_single.store = NULL;
    }
    pthread_mutex_unlock(&amp_sfp_single.lock);
}

static int amp_sfp_single_create(amp_sfp_t *s)
{
    amp_sfp_deferred_t *m = amp_calloc(1, sizeof(*m));
    int ok = m && (m->store = amp_sfp_single_attach(s, &m->tag)), all = 0, rc = MPI_SUCCESS;
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, s->comm) != MPI_SUCCESS)
        all = 0; /* not known to be everywhere: nowhere */
    if (all && (rc = amp_sfp_deferred_create(s, m)) == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (m && m->store)
        amp_sfp_single_detach(m->store, m->tag);
    free(m);
    return all ? rc : MPI_ERR_NO_MEM;
}

static void amp_sfp_single_destroy(amp_sfp_t *s, int how)
{
    amp_sfp_deferred_t *m = s->state;
    if (!m)
        return;
    amp_sfp_deferred_destroy(s, how);
    amp_sfp_single_detach(m->store, m->tag);
    free(m);
    s->state = NULL;
}

const amp_sfp_ops_t amp_sfp_single_ops =
    AMP_SFP_DEFERRED_OPS("single", amp_sfp_single_create, amp_sfp_single_destroy);
