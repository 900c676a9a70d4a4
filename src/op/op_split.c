/* Split collectives: one may be active per file; its *_end must match its *_begin. The begin
 * starts the access as a nonblocking collective does; the end completes it. */
#include <stdlib.h>

#include "core/err.h"
#include "core/fault.h"
#include "op/op_internal.h"

struct amp_op_state *amp_op_state(amp_file_t *f)
{
    if (!f->op)
        f->op = amp_calloc(1, sizeof(*f->op));
    return f->op;
}

void amp_op_file_free(amp_file_t *f)
{
    if (f->op)
        amp_op_req_free(f->op->split.req); /* begun and never ended: done by now */
    free(f->op);
    f->op = NULL;
}

int amp_op_split_begin(amp_file_t *f, const amp_op_access_t *a, int kind)
{
    amp_op_split_t *sp = f->op ? &f->op->split : NULL;
    if (sp && sp->active)
        return amp_err(MPI_ERR_IO, "%s: a split collective is already active on \"%s\"", a->routine,
                       f->path);
    amp_op_prep_t p;
    amp_op_prepare(f, a, 1, &p);
    amp_op_req_t *q;
    int rc = amp_op_req_start(f, &p, 0, &q);
    if (rc != MPI_SUCCESS)
        return rc;
    sp = &f->op->split; /* the state exists now */
    sp->active = 1;
    sp->kind = kind;
    sp->req = q;
    return MPI_SUCCESS;
}

int amp_op_split_end(amp_file_t *f, const void *buf, int kind, MPI_Status *status)
{
    (void)buf;
    amp_op_split_t *sp = f->op ? &f->op->split : NULL;
    if (!sp || !sp->active || sp->kind != kind)
        return amp_err(MPI_ERR_IO, "no matching split collective was begun on \"%s\"", f->path);
    amp_op_req_t *q = sp->req;
    amp_op_req_finish(q);
    int rc = q->rc;
    amp_op_status(status, rc == MPI_SUCCESS ? q->bytes : 0);
    amp_op_req_free(q);
    sp->active = 0;
    sp->req = NULL;
    return rc;
}
