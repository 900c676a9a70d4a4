/* The side files of deferred shared-pointer writes. */
#include "sharedfp/sfp_store.h"

#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fault.h"
#include "sharedfp/sfp_impl.h"

#define AMP_SFP_MAX_RECORDS 256 /* records kept in memory before spilling */

struct amp_sfp_store {
    char *data_name, *meta_name;
    int data_fd, meta_fd; /* -1 until needed */
    int64_t data_end;
    amp_sfp_rec_t recs[AMP_SFP_MAX_RECORDS];
    int nrecs;
    int64_t nspilled, next_id;
    int taking; /* takes not yet done: their data must stay */
    pthread_mutex_t mutex;
};

amp_sfp_store_t *amp_sfp_store_new(char *data_name, char *meta_name)
{
    amp_sfp_store_t *st = amp_calloc(1, sizeof(*st));
    if (!st) {
        free(data_name);
        free(meta_name);
        return NULL;
    }
    st->data_name = data_name;
    st->meta_name = meta_name;
    st->data_fd = st->meta_fd = -1;
    pthread_mutex_init(&st->mutex, NULL);
    return st;
}

void amp_sfp_store_free(amp_sfp_store_t *st)
{
    if (!st)
        return;
    if (st->data_fd >= 0) {
        close(st->data_fd);
        unlink(st->data_name);
    }
    if (st->meta_fd >= 0) {
        close(st->meta_fd);
        unlink(st->meta_name);
    }
    pthread_mutex_destroy(&st->mutex);
    free(st->data_name);
    free(st->meta_name);
    free(st);
}

void amp_sfp_store_lock(amp_sfp_store_t *st)
{
    pthread_mutex_lock(&st->mutex);
}

void amp_sfp_store_unlock(amp_sfp_store_t *st)
{
    pthread_mutex_unlock(&st->mutex);
}

/* All `len` bytes, or an error. */
static int amp_sfp_full_io(int write, int fd, void *buf, size_t len, off_t off)
{
    ssize_t n = amp_sfp_side_io(write, fd, buf, len, off);
    if (n != (ssize_t)len)
        return amp_err_errno(n < 0 ? errno : EIO, "cannot %s a shared file pointer side file",
                             write ? "write" : "read");
    return MPI_SUCCESS;
}

int amp_sfp_store_append(amp_sfp_store_t *st, const void *data, size_t bytes, int64_t *local)
{
    int rc = MPI_SUCCESS;
    if (st->data_fd < 0)
        rc = amp_sfp_side_open(st->data_name, AMP_SFP_SIDE_NEW, 0, &st->data_fd);
    if (rc == MPI_SUCCESS)
        rc = amp_sfp_full_io(1, st->data_fd, (void *)data, bytes, (off_t)st->data_end);
    if (rc == MPI_SUCCESS) {
        *local = st->data_end;
        st->data_end += (int64_t)bytes;
    }
    return rc;
}

/* Adds a record as it is, spilling the full in-memory list first. */
static int amp_sfp_store_add(amp_sfp_store_t *st, const amp_sfp_rec_t *rec)
{
    int rc = MPI_SUCCESS;
    if (st->nrecs == AMP_SFP_MAX_RECORDS) {
        if (st->meta_fd < 0)
            rc = amp_sfp_side_open(st->meta_name, AMP_SFP_SIDE_NEW, 0, &st->meta_fd);
        if (rc == MPI_SUCCESS)
            rc = amp_sfp_full_io(1, st->meta_fd, st->recs, sizeof(st->recs),
                                 (off_t)(st->nspilled * (int64_t)sizeof(amp_sfp_rec_t)));
        if (rc != MPI_SUCCESS)
            return rc;
        st->nspilled += st->nrecs;
        st->nrecs = 0;
    }
    st->recs[st->nrecs++] = *rec;
    return MPI_SUCCESS;
}

int amp_sfp_store_note(amp_sfp_store_t *st, amp_sfp_rec_t *rec)
{
    rec->id = st->next_id;
    int rc = amp_sfp_store_add(st, rec);
    if (rc == MPI_SUCCESS)
        st->next_id++;
    return rc;
}

int amp_sfp_store_take(amp_sfp_store_t *st, int64_t tag, amp_sfp_rec_t **out, int64_t *n)
{
    st->taking++; /* done() ends the take even when it failed */
    int64_t total = st->nspilled + st->nrecs;
    amp_sfp_rec_t *all = amp_malloc((size_t)(total ? total : 1) * sizeof(*all));
    *out = NULL;
    *n = 0;
    if (!all)
        return amp_err(MPI_ERR_NO_MEM, "out of memory merging shared pointer records");
    int rc = MPI_SUCCESS;
    if (st->nspilled)
        rc = amp_sfp_full_io(0, st->meta_fd, all, (size_t)st->nspilled * sizeof(*all), 0);
    if (rc != MPI_SUCCESS) {
        free(all);
        return rc;
    }
    memcpy(all + st->nspilled, st->recs, (size_t)st->nrecs * sizeof(*all));
    /* the taken records move to the front; the others are added again */
    int64_t taken = 0;
    st->nspilled = 0;
    st->nrecs = 0;
    for (int64_t i = 0; i < total; i++) {
        if (all[i].tag == tag)
            all[taken++] = all[i];
        else if (rc == MPI_SUCCESS)
            rc = amp_sfp_store_add(st, &all[i]);
    }
    *out = all;
    *n = taken;
    return rc;
}

int amp_sfp_store_read(amp_sfp_store_t *st, void *buf, size_t len, int64_t local)
{
    return amp_sfp_full_io(0, st->data_fd, buf, len, (off_t)local);
}

int amp_sfp_store_done(amp_sfp_store_t *st)
{
    if (--st->taking > 0 || st->nrecs > 0 || st->nspilled > 0)
        return MPI_SUCCESS;
    st->data_end = 0;
    int rc = MPI_SUCCESS;
    if (st->data_fd >= 0 && ftruncate(st->data_fd, 0) != 0)
        rc = amp_err_errno(errno, "cannot empty \"%s\"", st->data_name);
    if (st->meta_fd >= 0 && ftruncate(st->meta_fd, 0) != 0 && rc == MPI_SUCCESS)
        rc = amp_err_errno(errno, "cannot empty \"%s\"", st->meta_name);
    return rc;
}
