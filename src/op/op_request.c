/* Nonblocking accesses: generalized requests, so that MPI_Wait, MPI_Test, MPI_Waitall and the
 * rest work on them. */
#include <stdlib.h>

#include "core/err.h"
#include "op/op_internal.h"

typedef struct {
    MPI_Count bytes;
} amp_op_greq_t;

static int amp_op_greq_query(void *extra, MPI_Status *status)
{
    amp_op_greq_t *g = extra;
    amp_op_status(status, g->bytes);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    status->MPI_ERROR = MPI_SUCCESS;
    return MPI_SUCCESS;
}

static int amp_op_greq_free(void *extra)
{
    free(extra);
    return MPI_SUCCESS;
}

static int amp_op_greq_cancel(void *extra, int complete)
{
    return MPI_SUCCESS; /* already complete: nothing to cancel */
}

int amp_op_start(amp_file_t *f, const amp_op_access_t *a, MPI_Request *request)
{
    if (!request)
        return amp_err(MPI_ERR_ARG, "%s: the request argument is NULL", a->routine);
    *request = MPI_REQUEST_NULL;
    MPI_Status status;
    int rc = amp_op_access(f, a, &status);
    if (rc != MPI_SUCCESS)
        return rc;
    amp_op_greq_t *g = malloc(sizeof(*g));
    if (!g)
        return amp_err(MPI_ERR_NO_MEM, "%s: out of memory for a request", a->routine);
    PMPI_Get_elements_x(&status, MPI_BYTE, &g->bytes);
    rc = PMPI_Grequest_start(amp_op_greq_query, amp_op_greq_free, amp_op_greq_cancel, g, request);
    if (rc != MPI_SUCCESS) {
        free(g);
        return rc;
    }
    return PMPI_Grequest_complete(*request);
}
