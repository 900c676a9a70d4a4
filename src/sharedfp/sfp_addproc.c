/* The keeper pools of the "addproc" component: one process owns a group's pointers and answers
 * requests in arrival order (sfp_keeper.h).
 *
 *   spawn   a server process made with MPI_Comm_spawn (ampio-sfp-server, installed next to the
 *           library as <libdir>/ampio/ampio-sfp-server), as the paper does it. Not every MPI
 *           can spawn (MPICH's ch4:ucx cannot): then the pool is not made.
 *   thread  a service thread inside rank 0, the paper's future work. Needs MPI_THREAD_MULTIPLE
 *           from a library in which a thread blocked in MPI lets the others progress: MPICH's
 *           global critical section, held by a thread waiting in a barrier or a receive,
 *           starves the keeper, so MPICH-derived libraries are left out.
 *
 * Either is made once per group, by the first open that asks for it (sfp_pool.c). */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fault.h"
#include "sharedfp/sfp_keeper.h"
#include "sharedfp/sfp_pool.h"

typedef struct {
    MPI_Comm comm;  /* requests: the pool's communicator, or the intercommunicator (spawn) */
    MPI_Comm group; /* the pool's communicator */
    int rank;
    pthread_t thread;
    MPI_Offset slots[AMP_SFP_POOL_SLOTS]; /* thread: at rank 0 */
    pthread_mutex_t slots_mutex;          /* thread: the keeper and rank 0's own calls */
    pthread_mutex_t mutex;                /* one request in flight per process */
} amp_sfp_keeper_t;

static amp_sfp_keeper_t *amp_sfp_keeper_new(MPI_Comm comm, MPI_Comm group, int rank)
{
    amp_sfp_keeper_t *k = amp_calloc(1, sizeof(*k));
    if (k) {
        k->comm = comm;
        k->group = group;
        k->rank = rank;
        pthread_mutex_init(&k->mutex, NULL);
        pthread_mutex_init(&k->slots_mutex, NULL);
    }
    return k;
}

static void amp_sfp_keeper_free(amp_sfp_keeper_t *k)
{
    pthread_mutex_destroy(&k->mutex);
    pthread_mutex_destroy(&k->slots_mutex);
    free(k);
}

/* A request to the keeper, rank 0 of `k->comm` (of its remote group when spawned). */
static int amp_sfp_keeper_ask(amp_sfp_keeper_t *k, MPI_Offset op, int index, MPI_Offset arg,
                              MPI_Offset *before)
{
    MPI_Offset req[3] = {op, index, arg};
    pthread_mutex_lock(&k->mutex);
    int rc = PMPI_Send(req, 3, MPI_OFFSET, 0, AMP_SFP_KEEPER_REQ, k->comm);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Recv(before, 1, MPI_OFFSET, 0, AMP_SFP_KEEPER_REPLY, k->comm, MPI_STATUS_IGNORE);
    pthread_mutex_unlock(&k->mutex);
    return rc;
}

/* Rank 0 tells the keeper to end; every request before it is answered. */
static void amp_sfp_keeper_stop(MPI_Comm comm)
{
    MPI_Offset stop[3] = {AMP_SFP_KEEPER_STOP, 0, 0};
    PMPI_Send(stop, 3, MPI_OFFSET, 0, AMP_SFP_KEEPER_REQ, comm);
}

static MPI_Offset amp_sfp_keeper_code(MPI_Op op)
{
    return op == MPI_REPLACE ? AMP_SFP_KEEPER_SET : AMP_SFP_KEEPER_ADD;
}

/* ---- a service thread in rank 0 ---- */

/* One request, from the keeper thread or from rank 0's own calls. */
static MPI_Offset amp_sfp_thread_apply(void *ctx, const MPI_Offset *req)
{
    amp_sfp_keeper_t *k = ctx;
    pthread_mutex_lock(&k->slots_mutex);
    MPI_Offset before = amp_sfp_keeper_apply(k->slots, AMP_SFP_POOL_SLOTS, req);
    pthread_mutex_unlock(&k->slots_mutex);
    return before;
}

static void *amp_sfp_thread_serve(void *arg)
{
    amp_sfp_keeper_t *k = arg;
    amp_sfp_keeper_serve(k->comm, amp_sfp_thread_apply, k);
    return NULL;
}

/* Whether a thread blocked in MPI lets another thread of the process make progress. */
static int amp_sfp_thread_fit(void)
{
    int level = MPI_THREAD_SINGLE, len = 0;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    PMPI_Query_thread(&level);
    return level == MPI_THREAD_MULTIPLE && PMPI_Get_library_version(version, &len) == MPI_SUCCESS &&
           !strstr(version, "MPICH");
}

static int amp_sfp_thread_make(MPI_Comm comm, int rank, void **state)
{
    int fit = amp_sfp_thread_fit(), all = 0;
    if (PMPI_Allreduce(&fit, &all, 1, MPI_INT, MPI_LAND, comm) != MPI_SUCCESS)
        all = 0; /* not known to be everywhere: nowhere */
    if (!all)
        return amp_err(MPI_ERR_UNSUPPORTED_OPERATION,
                       "a keeper thread needs MPI_THREAD_MULTIPLE from an MPI whose blocked "
                       "threads let others progress");
    amp_sfp_keeper_t *k = amp_sfp_keeper_new(comm, comm, rank);
    int ok = k != NULL;
    if (ok && rank == 0)
        ok = pthread_create(&k->thread, NULL, amp_sfp_thread_serve, k) == 0;
    if (PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm) != MPI_SUCCESS)
        ok = 0;
    if (!ok) {
        if (k && rank == 0 && k->thread) {
            amp_sfp_keeper_stop(comm);
            pthread_join(k->thread, NULL);
        }
        if (k)
            amp_sfp_keeper_free(k);
        return amp_err(MPI_ERR_OTHER, "cannot start a keeper thread");
    }
    *state = k;
    return MPI_SUCCESS;
}

static void amp_sfp_thread_unmake(void *state)
{
    amp_sfp_keeper_t *k = state;
    PMPI_Barrier(k->comm); /* no request is on its way */
    if (k->rank == 0) {
        amp_sfp_keeper_stop(k->comm);
        pthread_join(k->thread, NULL);
    }
    amp_sfp_keeper_free(k);
}

static int amp_sfp_thread_op(void *state, int index, MPI_Offset in, MPI_Offset *out, MPI_Op op)
{
    amp_sfp_keeper_t *k = state;
    MPI_Offset code = amp_sfp_keeper_code(op), arg = op == MPI_NO_OP ? 0 : in;
    if (k->rank == 0) { /* the keeper's own process reads the slots directly */
        MPI_Offset req[3] = {code, index, arg};
        *out = amp_sfp_thread_apply(k, req);
        return MPI_SUCCESS;
    }
    return amp_sfp_keeper_ask(k, code, index, arg, out);
}

const amp_sfp_backend_t amp_sfp_backend_thread = {.name = "thread",
                                                  .make = amp_sfp_thread_make,
                                                  .unmake = amp_sfp_thread_unmake,
                                                  .op = amp_sfp_thread_op};

/* ---- a spawned server ---- */

/* Any object of the library: dladdr names the file it was loaded from. */
static const char amp_sfp_in_library = 0;

/* <directory of libampio>/ampio/ampio-sfp-server, if it is there. */
static int amp_sfp_server_path(char *path, size_t size)
{
    Dl_info info;
    if (!dladdr(&amp_sfp_in_library, &info) || !info.dli_fname)
        return 0;
    char lib[PATH_MAX];
    snprintf(lib, sizeof(lib), "%s", info.dli_fname);
    snprintf(path, size, "%s/ampio/ampio-sfp-server", dirname(lib));
    return access(path, X_OK) == 0;
}

static int amp_sfp_spawn_make(MPI_Comm comm, int rank, void **state)
{
    char path[PATH_MAX] = "";
    int found = rank != 0 || amp_sfp_server_path(path, sizeof(path));
    PMPI_Bcast(&found, 1, MPI_INT, 0, comm);
    if (!found)
        return amp_err(MPI_ERR_UNSUPPORTED_OPERATION,
                       "the shared file pointer server ampio-sfp-server is not installed next "
                       "to the library");
    MPI_Comm inter = MPI_COMM_NULL;
    int errcode = MPI_SUCCESS;
    /* the outcome is the same on every rank: the root's, broadcast by MPI_Comm_spawn */
    int rc = PMPI_Comm_spawn(path, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, comm, &inter, &errcode);
    if (rc != MPI_SUCCESS)
        return amp_err(amp_err_class(rc), "cannot spawn the shared file pointer server");
    amp_sfp_keeper_t *k = amp_sfp_keeper_new(inter, comm, rank);
    int ok = k != NULL;
    if (PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm) != MPI_SUCCESS)
        ok = 0;
    if (!ok) {
        if (rank == 0) {
            amp_sfp_keeper_stop(inter);
        }
        PMPI_Comm_disconnect(&inter);
        if (k)
            amp_sfp_keeper_free(k);
        return amp_err(MPI_ERR_NO_MEM, "out of memory for a shared file pointer keeper");
    }
    *state = k;
    return MPI_SUCCESS;
}

static void amp_sfp_spawn_unmake(void *state)
{
    amp_sfp_keeper_t *k = state;
    PMPI_Barrier(k->group); /* every request is answered */
    if (k->rank == 0) {
        amp_sfp_keeper_stop(k->comm);
    }
    PMPI_Comm_disconnect(&k->comm); /* collective with the server, which then ends */
    amp_sfp_keeper_free(k);
}

static int amp_sfp_spawn_op(void *state, int index, MPI_Offset in, MPI_Offset *out, MPI_Op op)
{
    amp_sfp_keeper_t *k = state;
    return amp_sfp_keeper_ask(k, amp_sfp_keeper_code(op), index, op == MPI_NO_OP ? 0 : in, out);
}

const amp_sfp_backend_t amp_sfp_backend_spawn = {.name = "spawn",
                                                 .make = amp_sfp_spawn_make,
                                                 .unmake = amp_sfp_spawn_unmake,
                                                 .op = amp_sfp_spawn_op};
