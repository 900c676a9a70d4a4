/* Data access: the checks every read and write makes, the position it starts at (explicit
 * offset, individual or shared pointer, rank order), data representation conversion, atomic
 * mode, the choice of path (independent transfer, the collective layer, a shared pointer
 * component that defers the data), the pointer update and the status. Collective accesses
 * agree on errors. */
#include <stdint.h>
#include <stdlib.h>

#include "coll/coll.h"
#include "core/agree.h"
#include "core/err.h"
#include "core/fault.h"
#include "core/task.h"
#include "core/worker.h"
#include "io/datarep.h"
#include "io/view.h"
#include "io/xfer.h"
#include "op/op_internal.h"
#include "sharedfp/sfp.h"

static int amp_op_check(amp_file_t *f, const amp_op_access_t *a)
{
    if (a->count < 0)
        return amp_err(MPI_ERR_COUNT, "%s: count %lld is negative", a->routine,
                       (long long)a->count);
    int rc = amp_dt_check(a->type, "the datatype");
    if (rc != MPI_SUCCESS)
        return rc;
    if (a->write && (f->amode & MPI_MODE_RDONLY))
        return amp_err(MPI_ERR_READ_ONLY, "%s: \"%s\" was opened MPI_MODE_RDONLY", a->routine,
                       f->path);
    if (!a->write && (f->amode & MPI_MODE_WRONLY))
        return amp_err(MPI_ERR_ACCESS, "%s: \"%s\" was opened MPI_MODE_WRONLY", a->routine,
                       f->path);
    if ((f->amode & MPI_MODE_SEQUENTIAL) && (a->where == AMP_OP_AT || a->where == AMP_OP_INDIV))
        return amp_err(MPI_ERR_UNSUPPORTED_OPERATION,
                       "%s: \"%s\" was opened MPI_MODE_SEQUENTIAL, which allows only shared "
                       "file pointer accesses",
                       a->routine, f->path);
    if (a->where == AMP_OP_AT && a->offset < 0)
        return amp_err(MPI_ERR_ARG, "%s: offset %lld is negative", a->routine,
                       (long long)a->offset);
    return MPI_SUCCESS;
}

/* Bytes of file data the access moves; also `item`, the file bytes of one memory item. */
static int amp_op_size(amp_file_t *f, const amp_op_access_t *a, amp_dt_t *mdt, MPI_Count *bytes,
                       MPI_Count *item)
{
    int rc = amp_datarep_size(f->view.rep, a->type, mdt, item);
    if (rc != MPI_SUCCESS)
        return rc;
    if (*item > 0 && a->count > INT64_MAX / *item)
        return amp_err(MPI_ERR_COUNT, "%s: %lld items of %lld bytes overflow", a->routine,
                       (long long)a->count, (long long)*item);
    *bytes = a->count * *item;
    if (*bytes % f->view.esize != 0)
        return amp_err(MPI_ERR_TYPE, "%s: %lld bytes is not a whole number of etypes of %lld bytes",
                       a->routine, (long long)*bytes, (long long)f->view.esize);
    if (*bytes > 0 && f->view.ft->size == 0)
        return amp_err(MPI_ERR_TYPE, "%s: the filetype of the view has no data", a->routine);
    return MPI_SUCCESS;
}

/* Moves `bytes` of file data starting at data byte `pos` of the view, through the collective
 * layer when `collective` (where every rank must arrive, `failed` ones without data). */
static int amp_op_move(amp_file_t *f, const amp_op_access_t *a, amp_dt_t *mdt, MPI_Count pos,
                       MPI_Count bytes, int collective, int failed, MPI_Count *done, int *agreed)
{
    *agreed = 0;
    amp_xfer_t x = {
        .f = f, .write = a->write, .pos = pos, .nbytes = bytes, .mem = a->buf, .mdt = mdt};
    *done = 0;
    if (bytes == 0 && !collective)
        return MPI_SUCCESS;

    MPI_Offset lo = 0, hi = 0;
    int locked = 0, rc = MPI_SUCCESS;
    amp_range_t mine; /* atomic mode: this access's range among the process's threads */
    int atomic = __atomic_load_n(&f->atomic, __ATOMIC_ACQUIRE) && bytes > 0;
    if (atomic) {
        lo = amp_view_offset(&f->view, pos);
        hi = amp_view_offset(&f->view, pos + bytes - 1) + 1;
        /* file locks never exclude threads of the process holding them: threads first */
        amp_rangelock_acquire(&f->atomic_ranges, &mine, lo, hi);
        rc = amp_fs_lock(&f->fs, a->write, lo, hi - lo, &locked);
        x.lock_held = locked;
    }

    const amp_datarep_t *rep = f->view.rep;
    amp_dt_t *bytes_dt = NULL;
    void *stream = NULL;
    if (rc == MPI_SUCCESS && bytes > 0 && amp_datarep_converts(rep)) {
        rc = amp_dt_get(MPI_BYTE, &bytes_dt);
        if (rc == MPI_SUCCESS && !(stream = amp_malloc((size_t)bytes)))
            rc = amp_err(MPI_ERR_NO_MEM, "%s: out of memory converting %lld bytes", a->routine,
                         (long long)bytes);
        if (rc == MPI_SUCCESS && a->write)
            rc = amp_datarep_encode(rep, a->buf, a->type, mdt, a->count, stream);
        x.mem = stream;
        x.mdt = bytes_dt;
    }
    if (collective) {
        int skip = failed || rc != MPI_SUCCESS;
        amp_coll_io_t io = {.write = a->write,
                            .pos = pos,
                            .nbytes = skip ? 0 : bytes,
                            .mem = x.mem,
                            .mdt = x.mdt,
                            .failed = skip};
        int crc = amp_coll_access(f, &io, done, agreed);
        if (rc == MPI_SUCCESS)
            rc = crc;
        /* decoding what was read can still fail, on this rank alone */
        if (stream && !a->write)
            *agreed = 0;
    } else if (rc == MPI_SUCCESS) {
        amp_xfer_job_t job = {.x = &x};
        rc = amp_worker_run(amp_xfer_job, &job); /* inside a task, on an I/O thread */
        *done = job.done;
    }
    if (rc == MPI_SUCCESS && stream && !a->write)
        rc = amp_datarep_decode(rep, a->buf, a->type, mdt, a->count, stream, *done);
    free(stream);
    amp_dt_release(bytes_dt);
    if (locked)
        amp_fs_unlock(&f->fs, lo, hi - lo);
    if (atomic)
        amp_rangelock_release(&f->atomic_ranges, &mine);
    return rc;
}

/* The start of this rank's data in a collective access in rank order: one prefix sum and one
 * update of the shared pointer by the last rank. */
static int amp_op_ordered(amp_file_t *f, MPI_Offset mine, MPI_Offset *start)
{
    MPI_Offset upto = 0, base = 0;
    /* a failure is returned after the broadcast, which the others wait in */
    int rc = amp_task_scan(&mine, &upto, 1, MPI_OFFSET, MPI_SUM, f->comm);
    int last = f->nprocs - 1, err = MPI_SUCCESS;
    if (f->rank == last)
        err = rc != MPI_SUCCESS ? rc : amp_sfp_fetch_add_collective(f, upto, &base);
    int brc = amp_task_bcast(&base, 1, MPI_OFFSET, last, f->comm);
    *start = base + upto - mine;
    return rc != MPI_SUCCESS ? rc : err != MPI_SUCCESS ? err : brc;
}

void amp_op_status(MPI_Status *status, MPI_Count bytes)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    PMPI_Status_set_elements_x(status, MPI_BYTE, bytes);
    PMPI_Status_set_cancelled(status, 0);
}

void amp_op_prepare(amp_file_t *f, const amp_op_access_t *a, int nonblocking, amp_op_prep_t *p)
{
    *p = (amp_op_prep_t){.a = *a, .owned = MPI_DATATYPE_NULL};
    int rc = amp_op_check(f, a);
    if (rc == MPI_SUCCESS)
        rc = amp_dt_get(a->type, &p->mdt);
    if (rc == MPI_SUCCESS)
        rc = amp_op_size(f, a, p->mdt, &p->bytes, &p->item);
    /* a converting representation reads the type again at completion, when the application
     * may have freed its handle */
    if (rc == MPI_SUCCESS && nonblocking && amp_datarep_converts(f->view.rep)) {
        rc = PMPI_Type_dup(a->type, &p->owned);
        if (rc == MPI_SUCCESS)
            p->a.type = p->owned;
        else
            p->owned = MPI_DATATYPE_NULL;
    }
    p->etypes = rc == MPI_SUCCESS ? (MPI_Offset)(p->bytes / f->view.esize) : 0;

    switch (a->where) {
    case AMP_OP_AT:
        p->start = a->offset;
        if (rc == MPI_SUCCESS)
            rc = amp_view_range(&f->view, p->start, p->bytes, &p->pos, a->routine);
        p->placed = 1;
        break;
    case AMP_OP_INDIV:
        /* read and advanced as one step for other threads: a blocking access holds the lock
         * until amp_op_run advances the pointer by what it moved */
        pthread_mutex_lock(&f->fp_lock);
        p->start = f->fp;
        if (rc == MPI_SUCCESS)
            rc = amp_view_range(&f->view, p->start, p->bytes, &p->pos, a->routine);
        if (nonblocking && rc == MPI_SUCCESS) {
            f->fp += p->etypes;
            p->fp_moved = 1;
        }
        if (nonblocking)
            pthread_mutex_unlock(&f->fp_lock);
        else
            p->fp_held = &f->fp_lock;
        p->placed = 1;
        break;
    case AMP_OP_SHARED:
        if (rc == MPI_SUCCESS && a->write)
            rc = amp_sfp_write_deferred(f, a->buf, a->count, p->a.type, p->mdt, p->bytes,
                                        &p->deferred);
        if (rc == MPI_SUCCESS && !p->deferred)
            rc = amp_sfp_fetch_add(f, p->etypes, &p->start);
        if (rc == MPI_SUCCESS && !p->deferred)
            rc = amp_view_range(&f->view, p->start, p->bytes, &p->pos, a->routine);
        p->placed = 1;
        break;
    case AMP_OP_ORDERED:
        break; /* a collective of its own, in amp_op_run */
    }
    p->rc = rc;
}

void amp_op_prep_free(amp_op_prep_t *p)
{
    if (p->fp_held) { /* never run */
        pthread_mutex_unlock(p->fp_held);
        p->fp_held = NULL;
    }
    amp_dt_release(p->mdt);
    p->mdt = NULL;
    if (p->owned != MPI_DATATYPE_NULL)
        PMPI_Type_free(&p->owned);
}

int amp_op_run(amp_file_t *f, amp_op_prep_t *p, MPI_Status *status)
{
    const amp_op_access_t *a = &p->a;
    int rc = p->rc;
    MPI_Count esize = f->view.esize, done = 0;
    if (a->collective) {
        /* deferred shared pointer writes become part of the file first */
        int src = amp_sfp_sync(f);
        if (rc == MPI_SUCCESS)
            rc = src;
    }
    if (!p->placed) {
        int orc = amp_op_ordered(f, p->etypes, &p->start);
        if (rc == MPI_SUCCESS)
            rc = orc;
    }

    if (rc == MPI_SUCCESS && !p->placed && !p->deferred)
        rc = amp_view_range(&f->view, p->start, p->bytes, &p->pos, a->routine);

    int collective = a->collective; /* ordered accesses too: their positions are known now */
    int agreed = 0;                 /* the collective layer knows every rank succeeded */
    if (p->deferred)
        done = p->bytes;
    else if (collective || rc == MPI_SUCCESS) {
        int mrc = amp_op_move(f, a, p->mdt, p->pos, rc == MPI_SUCCESS ? p->bytes : 0, collective,
                              rc != MPI_SUCCESS, &done, &agreed);
        if (rc == MPI_SUCCESS)
            rc = mrc;
    }
    if (a->collective && !agreed)
        rc = amp_agree(f->comm, rc);
    if (a->where == AMP_OP_INDIV && rc == MPI_SUCCESS && !p->fp_moved) {
        /* a call that failed anywhere leaves it */
        if (!p->fp_held)
            pthread_mutex_lock(&f->fp_lock);
        f->fp = p->start + (MPI_Offset)(done / esize);
        if (!p->fp_held)
            pthread_mutex_unlock(&f->fp_lock);
    }
    if (p->fp_held) {
        pthread_mutex_unlock(p->fp_held);
        p->fp_held = NULL;
    }
    if (rc == MPI_SUCCESS) {
        MPI_Count mem_bytes = p->item == p->mdt->size ? done : done / p->item * p->mdt->size;
        amp_op_status(status, mem_bytes);
    }
    return rc;
}

int amp_op_access(amp_file_t *f, const amp_op_access_t *a, MPI_Status *status)
{
    if (a->collective)
        amp_op_drain(f, 1); /* this rank's earlier collectives on the file post theirs first */
    amp_op_prep_t p;
    amp_op_prepare(f, a, 0, &p);
    int rc = amp_op_run(f, &p, status);
    amp_op_prep_free(&p);
    return rc;
}
