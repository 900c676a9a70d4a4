/* The "addproc" component: a process of its own keeps the pointer and answers requests in
 * arrival order. Instead of spawning an extra process (MPI_Comm_spawn is not dependable under
 * every launcher), the keeper is a service thread inside rank 0, which needs
 * MPI_THREAD_MULTIPLE; without it the component is unavailable and the automatic choice serves
 * the file. The thread is started at open: a first independent request from another rank could
 * not start it. Requests travel on a private duplicate of the file's communicator; rank 0 itself
 * reads the value directly.
 *
 * MPICH-derived libraries are left out: their global critical section is held by a thread that
 * waits in a blocking call (a barrier, a receive), and the keeper thread starves on it, so a
 * request from another rank would never be answered while rank 0 waits for that rank. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sharedfp/sfp_impl.h"

enum { AMP_SFP_REQ_TAG = 1, AMP_SFP_REPLY_TAG = 2 };
enum { AMP_SFP_OP_ADD, AMP_SFP_OP_SET, AMP_SFP_OP_STOP };

typedef struct {
    MPI_Comm comm;
    pthread_t thread;
    int running;
    MPI_Offset value;            /* at rank 0 */
    pthread_mutex_t value_mutex; /* the thread and rank 0's own calls */
    pthread_mutex_t mutex;       /* one request at a time per process: replies carry no id */
} amp_sfp_addproc_t;

static void amp_sfp_addproc_apply(amp_sfp_addproc_t *m, MPI_Offset op, MPI_Offset arg,
                                  MPI_Offset *before)
{
    pthread_mutex_lock(&m->value_mutex);
    *before = m->value;
    m->value = op == AMP_SFP_OP_SET ? arg : m->value + arg;
    pthread_mutex_unlock(&m->value_mutex);
}

/* Whether a thread blocked in MPI lets another thread of the process make progress. */
static int amp_sfp_addproc_library_fit(void)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (PMPI_Get_library_version(version, &len) != MPI_SUCCESS)
        return 0;
    return strstr(version, "MPICH") == NULL;
}

static void *amp_sfp_addproc_serve(void *arg)
{
    amp_sfp_addproc_t *m = arg;
    for (;;) {
        MPI_Offset req[2]; /* operation, argument */
        MPI_Status st;
        if (PMPI_Recv(req, 2, MPI_OFFSET, MPI_ANY_SOURCE, AMP_SFP_REQ_TAG, m->comm, &st) !=
                MPI_SUCCESS ||
            req[0] == AMP_SFP_OP_STOP)
            break;
        MPI_Offset before;
        amp_sfp_addproc_apply(m, req[0], req[1], &before);
        PMPI_Send(&before, 1, MPI_OFFSET, st.MPI_SOURCE, AMP_SFP_REPLY_TAG, m->comm);
    }
    return NULL;
}

static int amp_sfp_addproc_create(amp_sfp_t *s)
{
    int level = MPI_THREAD_SINGLE, fit, all = 0;
    PMPI_Query_thread(&level);
    fit = level == MPI_THREAD_MULTIPLE && amp_sfp_addproc_library_fit();
    PMPI_Allreduce(&fit, &all, 1, MPI_INT, MPI_LAND, s->comm);
    if (!all)
        return MPI_ERR_UNSUPPORTED_OPERATION;
    amp_sfp_addproc_t *m = calloc(1, sizeof(*m));
    if (!m)
        return MPI_ERR_NO_MEM;
    int rc = PMPI_Comm_dup(s->comm, &m->comm);
    if (rc != MPI_SUCCESS) {
        free(m);
        return rc;
    }
    pthread_mutex_init(&m->mutex, NULL);
    pthread_mutex_init(&m->value_mutex, NULL);
    if (s->rank == 0 && pthread_create(&m->thread, NULL, amp_sfp_addproc_serve, m) == 0)
        m->running = 1;
    s->state = m;
    int ok = s->rank != 0 || m->running;
    PMPI_Bcast(&ok, 1, MPI_INT, 0, s->comm);
    return ok ? MPI_SUCCESS : MPI_ERR_OTHER;
}

static void amp_sfp_addproc_destroy(amp_sfp_t *s, int collective)
{
    amp_sfp_addproc_t *m = s->state;
    if (!m)
        return;
    if (collective)
        PMPI_Barrier(m->comm); /* no request is on its way */
    if (m->running) {
        MPI_Offset stop[2] = {AMP_SFP_OP_STOP, 0};
        PMPI_Send(stop, 2, MPI_OFFSET, 0, AMP_SFP_REQ_TAG, m->comm);
        pthread_join(m->thread, NULL);
    }
    if (collective)
        PMPI_Comm_free(&m->comm);
    pthread_mutex_destroy(&m->mutex);
    pthread_mutex_destroy(&m->value_mutex);
    free(m);
    s->state = NULL;
}

static int amp_sfp_addproc_ask(amp_sfp_t *s, MPI_Offset op, MPI_Offset arg, MPI_Offset *before)
{
    amp_sfp_addproc_t *m = s->state;
    if (s->rank == 0) {
        amp_sfp_addproc_apply(m, op, arg, before);
        return MPI_SUCCESS;
    }
    MPI_Offset req[2] = {op, arg};
    pthread_mutex_lock(&m->mutex);
    int rc = PMPI_Send(req, 2, MPI_OFFSET, 0, AMP_SFP_REQ_TAG, m->comm);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Recv(before, 1, MPI_OFFSET, 0, AMP_SFP_REPLY_TAG, m->comm, MPI_STATUS_IGNORE);
    pthread_mutex_unlock(&m->mutex);
    return rc;
}

static int amp_sfp_addproc_fetch_add(amp_sfp_t *s, MPI_Offset delta, MPI_Offset *before)
{
    return amp_sfp_addproc_ask(s, AMP_SFP_OP_ADD, delta, before);
}

static int amp_sfp_addproc_get(amp_sfp_t *s, MPI_Offset *value)
{
    return amp_sfp_addproc_ask(s, AMP_SFP_OP_ADD, 0, value);
}

static int amp_sfp_addproc_set(amp_sfp_t *s, MPI_Offset value)
{
    MPI_Offset old;
    return amp_sfp_addproc_ask(s, AMP_SFP_OP_SET, value, &old);
}

const amp_sfp_ops_t amp_sfp_addproc_ops = {
    .name = "addproc",
    .create = amp_sfp_addproc_create,
    .destroy = amp_sfp_addproc_destroy,
    .fetch_add = amp_sfp_addproc_fetch_add,
    .get = amp_sfp_addproc_get,
    .set = amp_sfp_addproc_set,
};
