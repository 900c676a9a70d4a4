/* The completion routines, interposed so that they advance ampio's nonblocking accesses and
 * report their errors on the file's error handler. Without any ampio request alive each one is
 * the host's routine behind one atomic load. With accesses in progress, a routine that would
 * block polls instead (a pass of progress, then the host's test form), so that a process
 * waiting for anything, an ordinary message included, still takes its part in the collective
 * accesses others wait for. An access that failed completes with its error in the status and
 * as the routine's result (MPI_ERR_IN_STATUS for the routines that complete several).
 *
 * The host's generalized request callbacks run inside its routine; amp_op_wrap_begin makes
 * them report success there, since the error is raised here on the file's handler instead of
 * on the communicator's. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "core/fault.h"
#include "core/next.h"

#define AMP_API_SNAP_LOCAL 8 /* requests a routine completes without allocating */

/* The ampio requests among the routine's, by position (qs NULL when there are none), read
 * before the host's routine may complete and free them. While a snapshot is held the host's
 * callbacks report success and the routine raises the errors on the files' handlers; without
 * memory for one, the callbacks report the errors themselves (on the communicator's handler). */
typedef struct {
    amp_op_req_t *local[AMP_API_SNAP_LOCAL];
    amp_op_req_t **qs;
} amp_api_snap_t;

static void amp_api_snap_take(amp_api_snap_t *s, int n, const MPI_Request *reqs)
{
    s->qs = NULL;
    for (int i = 0; i < n; i++) {
        amp_op_req_t *q = amp_op_find(reqs[i]);
        if (!q)
            continue;
        if (!s->qs) {
            s->qs = n <= AMP_API_SNAP_LOCAL ? s->local : amp_calloc((size_t)n, sizeof(*s->qs));
            if (!s->qs)
                return;
            if (s->qs == s->local)
                memset(s->local, 0, sizeof(s->local));
        }
        s->qs[i] = q;
    }
    if (s->qs)
        amp_op_wrap_begin();
}

static void amp_api_snap_release(amp_api_snap_t *s)
{
    if (!s->qs)
        return;
    if (s->qs != s->local)
        free(s->qs);
    s->qs = NULL;
    amp_op_wrap_end();
}

/* The error of the ampio request at position i of `qs` that the routine completed, raised on
 * its file's handler; MPI_SUCCESS otherwise. */
static int amp_api_result(amp_op_req_t **qs, int i, const char *routine)
{
    if (!qs || !qs[i])
        return MPI_SUCCESS;
    MPI_File fh;
    int rc = amp_op_result(qs[i], &fh);
    if (rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    return amp_errh_raise(amp_handle_get(fh), rc, routine);
}

/* For routines that complete one request: the result at position i, also in *status. */
static int amp_api_one(amp_op_req_t **qs, int i, MPI_Status *status, int rc, const char *routine)
{
    int io = amp_api_result(qs, i, routine);
    if (io == MPI_SUCCESS)
        return rc;
    if (status != MPI_STATUS_IGNORE)
        status->MPI_ERROR = io;
    return io;
}

/* For routines that complete several: `count` positions `idx` (NULL: 0..count-1). */
static int amp_api_many(amp_op_req_t **qs, int count, const int *idx, MPI_Status *statuses, int rc,
                        const char *routine)
{
    if (!qs)
        return rc;
    int failed = 0, first = MPI_SUCCESS;
    for (int k = 0; k < count; k++) {
        int io = amp_api_result(qs, idx ? idx[k] : k, routine);
        if (io != MPI_SUCCESS && !failed++)
            first = io;
    }
    if (!failed)
        return rc;
    if (statuses == MPI_STATUSES_IGNORE)
        return first;
    for (int k = 0; k < count; k++) {
        int i = idx ? idx[k] : k;
        int io = qs[i] ? amp_op_result(qs[i], NULL) : MPI_SUCCESS;
        /* the host set the field of its own requests only when it reported MPI_ERR_IN_STATUS */
        if (qs[i] || rc != MPI_ERR_IN_STATUS)
            statuses[idx ? k : i].MPI_ERROR = io;
    }
    return MPI_ERR_IN_STATUS;
}

/* Gives the core away between polls: other ranks and the I/O thread need it. */
static void amp_api_pause(void)
{
    sched_yield();
}

#pragma GCC visibility push(default)

int PMPI_Wait(MPI_Request *req, MPI_Status *status)
{
    const amp_next_t *next = amp_next();
    if (!amp_op_live())
        return next->wait(req, status);
    amp_api_snap_t snap;
    amp_api_snap_take(&snap, 1, req);
    int rc = MPI_SUCCESS, flag = 0;
    while (amp_op_pending()) {
        amp_op_progress();
        rc = next->test(req, &flag, status);
        if (rc != MPI_SUCCESS || flag)
            break;
        amp_api_pause();
    }
    if (rc == MPI_SUCCESS && !flag)
        rc = next->wait(req, status);
    rc = amp_api_one(snap.qs, 0, status, rc, "MPI_Wait");
    amp_api_snap_release(&snap);
    return rc;
}

int PMPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    const amp_next_t *next = amp_next();
    if (!amp_op_live())
        return next->test(req, flag, status);
    amp_api_snap_t snap;
    amp_api_snap_take(&snap, 1, req);
    amp_op_progress();
    int rc = next->test(req, flag, status);
    if (rc == MPI_SUCCESS && *flag)
        rc = amp_api_one(snap.qs, 0, status, rc, "MPI_Test");
    amp_api_snap_release(&snap);
    return rc;
}

int PMPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *status)
{
    const amp_next_t *next = amp_next();
    if (!amp_op_live())
        return next->request_get_status(req, flag, status);
    amp_api_snap_t snap;
    amp_api_snap_take(&snap, 1, &req);
    amp_op_progress();
    int rc = next->request_get_status(req, flag, status);
    if (rc == MPI_SUCCESS && *flag)
        rc = amp_api_one(snap.qs, 0, status, rc, "MPI_Request_get_status");
    amp_api_snap_release(&snap);
    return rc;
}

int PMPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
{
    const amp_next_t *next = amp_next();
    if (!amp_op_live())
        return next->waitall(n, reqs, statuses);
    amp_api_snap_t snap;
    amp_api_snap_take(&snap, n, reqs);
    int rc = MPI_SUCCESS, flag = 0;
    while (amp_op_pending()) {
        amp_op_progress();
        rc = next->testall(n, reqs, &flag, statuses);
        if (rc != MPI_SUCCESS || flag)
            break;
        amp_api_pause();
    }
    if (rc == MPI_SUCCESS && !flag)
        rc = next->waitall(n, reqs, statuses);
    rc = amp_api_many(snap.qs, n, NULL, statuses, rc, "MPI_Waitall");
    amp_api_snap_release(&snap);
    return rc;
}

int PMPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    const amp_next_t *next = amp_next();
    if (!amp_op_live())
        return next->testall(n, reqs, flag, statuses);
    amp_api_snap_t snap;
    amp_api_snap_take(&snap, n, reqs);
    amp_op_progress();
    int rc = next->testall(n, reqs, flag, statuses);
    if (*flag)
        rc = amp_api_many(snap.qs, n, NULL, statuses, rc, "MPI_Testall");
    amp_api_snap_release(&snap);
    return rc;
}

int PMPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
    const amp_next_t *next = amp_next();
    if (!amp_op_live())
        return next->waitany(n, reqs, index, status);
    amp_api_snap_t snap;
    amp_api_snap_take(&snap, n, reqs);
    int rc = MPI_SUCCESS, flag = 0;
    while (amp_op_pending()) {
        amp_op_progress();
        rc = next->testany(n, reqs, index, &flag, status);
        if (rc != MPI_SUCCESS || flag)
            break;
        amp_api_pause();
    }
    if (rc == MPI_SUCCESS && !flag)
        rc = next->waitany(n, reqs, index, status);
    if (*index != MPI_UNDEFINED && *index >= 0)
        rc = amp_api_one(snap.qs, *index, status, rc, "MPI_Waitany");
    amp_api_snap_release(&snap);
    return rc;
}

int PMPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    const amp_next_t *next = amp_next();
    if (!amp_op_live())
        return next->testany(n, reqs, index, flag, status);
    amp_api_snap_t snap;
    amp_api_snap_take(&snap, n, reqs);
    amp_op_progress();
    int rc = next->testany(n, reqs, index, flag, status);
    if (*flag && *index != MPI_UNDEFINED && *index >= 0)
        rc = amp_api_one(snap.qs, *index, status, rc, "MPI_Testany");
    amp_api_snap_release(&snap);
    return rc;
}

int PMPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    const amp_next_t *next = amp_next();
    if (!amp_op_live())
        return next->waitsome(n, reqs, outcount, indices, statuses);
    amp_api_snap_t snap;
    amp_api_snap_take(&snap, n, reqs);
    int rc = MPI_SUCCESS, got = 0;
    while (amp_op_pending()) {
        amp_op_progress();
        rc = next->testsome(n, reqs, outcount, indices, statuses);
        got = *outcount != 0;
        if (rc != MPI_SUCCESS || got)
            break;
        amp_api_pause();
    }
    if (rc == MPI_SUCCESS && !got)
        rc = next->waitsome(n, reqs, outcount, indices, statuses);
    if (*outcount != MPI_UNDEFINED)
        rc = amp_api_many(snap.qs, *outcount, indices, statuses, rc, "MPI_Waitsome");
    amp_api_snap_release(&snap);
    return rc;
}

int PMPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    const amp_next_t *next = amp_next();
    if (!amp_op_live())
        return next->testsome(n, reqs, outcount, indices, statuses);
    amp_api_snap_t snap;
    amp_api_snap_take(&snap, n, reqs);
    amp_op_progress();
    int rc = next->testsome(n, reqs, outcount, indices, statuses);
    if (*outcount != MPI_UNDEFINED)
        rc = amp_api_many(snap.qs, *outcount, indices, statuses, rc, "MPI_Testsome");
    amp_api_snap_release(&snap);
    return rc;
}

/* Freeing a pending access lets it run to its end, unobserved; a done one is the host's to
 * free. */
int PMPI_Request_free(MPI_Request *req)
{
    amp_op_req_t *q = req && amp_op_live() ? amp_op_find(*req) : NULL;
    if (q && amp_op_detach(q)) {
        *req = MPI_REQUEST_NULL;
        return MPI_SUCCESS;
    }
    return amp_next()->request_free(req);
}

AMP_ALIAS(MPI_Wait, PMPI_Wait)
AMP_ALIAS(MPI_Test, PMPI_Test)
AMP_ALIAS(MPI_Request_get_status, PMPI_Request_get_status)
AMP_ALIAS(MPI_Waitall, PMPI_Waitall)
AMP_ALIAS(MPI_Testall, PMPI_Testall)
AMP_ALIAS(MPI_Waitany, PMPI_Waitany)
AMP_ALIAS(MPI_Testany, PMPI_Testany)
AMP_ALIAS(MPI_Waitsome, PMPI_Waitsome)
AMP_ALIAS(MPI_Testsome, PMPI_Testsome)
AMP_ALIAS(MPI_Request_free, PMPI_Request_free)

#pragma GCC visibility pop
