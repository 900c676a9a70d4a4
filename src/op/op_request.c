/* Nonblocking accesses: generalized requests, so that MPI_Wait, MPI_Test, MPI_Waitall and the
 * rest work on them. The access itself progresses through op_progress.c; its request is
 * completed when its task ends. */
#include <stdlib.h>

#include "core/err.h"
#include "op/op_internal.h"

/* Inside a host completion routine called by ampio's own (amp_op_wrap_begin): the caller
 * reports errors itself, and requests freed meanwhile wait here until it has read them. */
static __thread int amp_op_wrapping;
static __thread amp_op_req_t *amp_op_freed;

void amp_op_wrap_begin(void)
{
    amp_op_wrapping++;
}

void amp_op_wrap_end(void)
{
    if (--amp_op_wrapping > 0)
        return;
    while (amp_op_freed) {
        amp_op_req_t *q = amp_op_freed;
        amp_op_freed = q->next_done;
        free(q);
    }
}

int amp_op_greq_query(void *extra, MPI_Status *status)
{
    amp_op_req_t *q = extra;
    /* the host saw the request complete: pairs with the release in amp_op_complete, after
     * which the progressing thread's writes (rc, bytes) are seen here */
    (void)__atomic_load_n(&q->released, __ATOMIC_ACQUIRE);
    int rc = amp_op_wrapping ? MPI_SUCCESS : q->rc;
    amp_op_status(status, q->rc == MPI_SUCCESS ? q->bytes : 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    status->MPI_ERROR = rc;
    return rc;
}

int amp_op_greq_free(void *extra)
{
    amp_op_req_t *q = extra;
    (void)__atomic_load_n(&q->released, __ATOMIC_ACQUIRE); /* as in amp_op_greq_query */
    amp_op_req_unlink(q);
    if (amp_op_wrapping) {
        q->next_done = amp_op_freed;
        amp_op_freed = q;
    } else {
        free(q);
    }
    return MPI_SUCCESS;
}

/* Cancelling fails, as the standard allows: a collective access cannot be withdrawn from the
 * other ranks, and an independent one is already on the I/O thread's queue. The request
 * completes as it would have. */
int amp_op_greq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

int amp_op_start(amp_file_t *f, const amp_op_access_t *a, MPI_Request *request)
{
    if (!request)
        return amp_err(MPI_ERR_ARG, "%s: the request argument is NULL", a->routine);
    *request = MPI_REQUEST_NULL;
    amp_op_prep_t p;
    amp_op_prepare(f, a, 1, &p);
    if (p.rc != MPI_SUCCESS && !a->collective) {
        int rc = p.rc;
        amp_op_prep_free(&p);
        return rc;
    }
    amp_op_req_t *q;
    int rc = amp_op_req_start(f, &p, 1, &q);
    if (rc == MPI_SUCCESS)
        *request = q->greq;
    return rc;
}
