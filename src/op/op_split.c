/* Split collectives: one may be active per file; its *_end must match its *_begin. */
#include <stdlib.h>

#include "core/err.h"
#include "op/op_internal.h"

struct amp_op_state *amp_op_state(amp_file_t *f)
{
    if (!f->op)
        f->op = calloc(1, sizeof(*f->op));
    return f->op;
}

void amp_op_file_free(amp_file_t *f)
{
    free(f->op);
    f->op = NULL;
}

int amp_op_split_begin(amp_file_t *f, const amp_op_access_t *a, int kind)
{
    struct amp_op_state *s = amp_op_state(f);
    if (!s)
        return amp_err(MPI_ERR_NO_MEM, "%s: out of memory on \"%s\"", a->routine, f->path);
    amp_op_split_t *sp = &s->split;
    if (sp->active)
        return amp_err(MPI_ERR_IO, "%s: a split collective is already active on \"%s\"", a->routine,
                       f->path);
    sp->active = 1;
    sp->kind = kind;
    sp->rc = amp_op_access(f, a, &sp->status);
    if (sp->rc != MPI_SUCCESS)
        amp_op_status(&sp->status, 0);
    return sp->rc;
}

int amp_op_split_end(amp_file_t *f, const void *buf, int kind, MPI_Status *status)
{
    amp_op_split_t *sp = f->op ? &f->op->split : NULL;
    if (!sp || !sp->active || sp->kind != kind)
        return amp_err(MPI_ERR_IO, "no matching split collective was begun on \"%s\"", f->path);
    sp->active = 0;
    if (status != MPI_STATUS_IGNORE)
        *status = sp->status;
    return MPI_SUCCESS;
}
