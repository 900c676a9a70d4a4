/* The "individual" component (Kulkarni and Gabriel): write_shared appends the data to a side
 * data file of the writing rank and notes a record (id, timestamp, position in the side file,
 * length); records are kept in memory and spilled to a side metadata file past a bound. At
 * collective points (ordered and collective accesses, seek_shared, set_view, sync, close) all
 * records are gathered, sorted by timestamp and their data copied into the file.
 *
 * Timestamps are MPI_Wtime corrected by each rank's offset to rank 0, measured at open by
 * ping-pong. A window component (shm or rma) keeps the pointer itself: it advances on every
 * write_shared by the record's length, so get_position_shared stays exact, and it serves the
 * calls this component cannot (read_shared). A read_shared between two merges pins the range it
 * read; merged data flows around such ranges, so nothing overlaps. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/agree.h"
#include "core/err.h"
#include "io/datarep.h"
#include "io/xfer.h"
#include "sharedfp/sfp_impl.h"

#define AMP_SFP_MAX_RECORDS  256 /* records kept in memory before spilling */
#define AMP_SFP_CLOCK_TAG    7301
#define AMP_SFP_CLOCK_ROUNDS 4

typedef struct {
    int64_t id;
    double ts;
    int64_t local; /* byte offset in the side data file; -1 for a range pinned by a read */
    int64_t len;   /* etypes */
    int64_t at;    /* pinned ranges: the position, in etypes */
    int32_t rank, pad;
} amp_sfp_rec_t;

typedef struct {
    amp_sfp_t counter; /* the window component keeping the pointer */
    double clock_offset;
    char *data_name, *meta_name;
    int data_fd, meta_fd; /* -1 until the first write_shared */
    int64_t data_end;
    amp_sfp_rec_t recs[AMP_SFP_MAX_RECORDS];
    int nrecs;
    int64_t nspilled, next_id;
    pthread_mutex_t mutex;
} amp_sfp_indiv_t;

/* Offset of this rank's MPI_Wtime to rank 0's, from the round trip with the least delay. */
static double amp_sfp_clock_offset(amp_sfp_t *s)
{
    double offset = 0, best = -1, t;
    for (int r = 1; r < s->nprocs; r++) {
        for (int k = 0; k < AMP_SFP_CLOCK_ROUNDS; k++) {
            if (s->rank == 0) {
                PMPI_Recv(&t, 1, MPI_DOUBLE, r, AMP_SFP_CLOCK_TAG, s->comm, MPI_STATUS_IGNORE);
                t = PMPI_Wtime();
                PMPI_Send(&t, 1, MPI_DOUBLE, r, AMP_SFP_CLOCK_TAG, s->comm);
            } else if (s->rank == r) {
                double t0 = PMPI_Wtime();
                PMPI_Send(&t0, 1, MPI_DOUBLE, 0, AMP_SFP_CLOCK_TAG, s->comm);
                PMPI_Recv(&t, 1, MPI_DOUBLE, 0, AMP_SFP_CLOCK_TAG, s->comm, MPI_STATUS_IGNORE);
                double t1 = PMPI_Wtime();
                if (best < 0 || t1 - t0 < best) {
                    best = t1 - t0;
                    offset = t - (t0 + t1) / 2;
                }
            }
        }
    }
    return offset;
}

static int amp_sfp_indiv_create(amp_sfp_t *s)
{
    amp_sfp_indiv_t *m = calloc(1, sizeof(*m));
    int rc = m ? MPI_SUCCESS : MPI_ERR_NO_MEM, ok, all = 0;
    char suffix[48];
    if (rc == MPI_SUCCESS) {
        snprintf(suffix, sizeof(suffix), ".%d.data", s->rank);
        rc = amp_sfp_side_name(s, suffix, &m->data_name);
    }
    if (rc == MPI_SUCCESS) {
        snprintf(suffix, sizeof(suffix), ".%d.meta", s->rank);
        rc = amp_sfp_side_name(s, suffix, &m->meta_name);
    }
    ok = rc == MPI_SUCCESS;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, s->comm);
    const amp_sfp_ops_t *chosen = NULL;
    if (all) {
        m->counter = *s;
        rc = amp_sfp_create_window(&m->counter, &chosen);
    }
    if (!all || rc != MPI_SUCCESS) {
        if (m) {
            free(m->data_name);
            free(m->meta_name);
        }
        free(m);
        return all ? rc : MPI_ERR_NO_MEM;
    }
    m->clock_offset = amp_sfp_clock_offset(s);
    m->data_fd = m->meta_fd = -1;
    pthread_mutex_init(&m->mutex, NULL);
    s->state = m;
    return MPI_SUCCESS;
}

static void amp_sfp_indiv_destroy(amp_sfp_t *s, int collective)
{
    amp_sfp_indiv_t *m = s->state;
    if (!m)
        return;
    if (m->data_fd >= 0) {
        close(m->data_fd);
        unlink(m->data_name);
    }
    if (m->meta_fd >= 0) {
        close(m->meta_fd);
        unlink(m->meta_name);
    }
    m->counter.ops->destroy(&m->counter, collective);
    pthread_mutex_destroy(&m->mutex);
    free(m->data_name);
    free(m->meta_name);
    free(m);
    s->state = NULL;
}

static int amp_sfp_full_pwrite(int fd, const void *buf, size_t len, off_t off)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = pwrite(fd, p, len, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return amp_err_errno(n < 0 ? errno : EIO, "cannot write a shared file pointer "
                                                      "side file");
        p += n, len -= (size_t)n, off += n;
    }
    return MPI_SUCCESS;
}

static int amp_sfp_full_pread(int fd, void *buf, size_t len, off_t off)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = pread(fd, p, len, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return amp_err_errno(n < 0 ? errno : EIO, "cannot read a shared file pointer "
                                                      "side file");
        p += n, len -= (size_t)n, off += n;
    }
    return MPI_SUCCESS;
}

/* Adds a record, spilling the full in-memory list first. Called with the mutex held. */
static int amp_sfp_indiv_note(amp_sfp_t *s, amp_sfp_indiv_t *m, int64_t local, int64_t len,
                              int64_t at)
{
    int rc = MPI_SUCCESS;
    if (m->nrecs == AMP_SFP_MAX_RECORDS) {
        if (m->meta_fd < 0)
            rc = amp_sfp_side_open(m->meta_name, AMP_SFP_SIDE_NEW, &m->meta_fd);
        if (rc == MPI_SUCCESS)
            rc = amp_sfp_full_pwrite(m->meta_fd, m->recs, sizeof(m->recs),
                                     (off_t)(m->nspilled * (int64_t)sizeof(amp_sfp_rec_t)));
        if (rc != MPI_SUCCESS)
            return rc;
        m->nspilled += m->nrecs;
        m->nrecs = 0;
    }
    amp_sfp_rec_t *r = &m->recs[m->nrecs++];
    memset(r, 0, sizeof(*r));
    r->id = m->next_id++;
    r->ts = PMPI_Wtime() + m->clock_offset;
    r->local = local;
    r->len = len;
    r->at = at;
    r->rank = s->rank;
    return MPI_SUCCESS;
}

/* The file bytes of the access: encoded by the data representation, else packed. */
static int amp_sfp_indiv_bytes(amp_sfp_t *s, const void *buf, MPI_Count count, MPI_Datatype type,
                               amp_dt_t *mdt, MPI_Count bytes, char *out)
{
    const amp_datarep_t *rep = s->f->view.rep;
    if (amp_datarep_converts(rep))
        return amp_datarep_encode(rep, buf, type, mdt, count, out);
    if (count > INT_MAX || bytes > INT_MAX)
        return amp_err(MPI_ERR_COUNT,
                       "MPI_File_write_shared: %lld bytes is too much for one "
                       "deferred shared pointer write",
                       (long long)bytes);
    int pos = 0;
    return PMPI_Pack(buf, (int)count, type, out, (int)bytes, &pos, MPI_COMM_SELF);
}

static int amp_sfp_indiv_write(amp_sfp_t *s, const void *buf, MPI_Count count, MPI_Datatype type,
                               amp_dt_t *mdt, MPI_Count bytes)
{
    amp_sfp_indiv_t *m = s->state;
    if (bytes == 0)
        return MPI_SUCCESS;
    char *data = malloc((size_t)bytes);
    if (!data)
        return amp_err(MPI_ERR_NO_MEM, "out of memory deferring %lld bytes", (long long)bytes);
    int rc = amp_sfp_indiv_bytes(s, buf, count, type, mdt, bytes, data);
    MPI_Offset len = (MPI_Offset)(bytes / s->f->view.esize);
    pthread_mutex_lock(&m->mutex);
    if (rc == MPI_SUCCESS && m->data_fd < 0)
        rc = amp_sfp_side_open(m->data_name, AMP_SFP_SIDE_NEW, &m->data_fd);
    if (rc == MPI_SUCCESS)
        rc = amp_sfp_full_pwrite(m->data_fd, data, (size_t)bytes, (off_t)m->data_end);
    if (rc == MPI_SUCCESS)
        rc = amp_sfp_indiv_note(s, m, m->data_end, len, -1);
    if (rc == MPI_SUCCESS)
        m->data_end += bytes;
    pthread_mutex_unlock(&m->mutex);
    free(data);
    MPI_Offset before;
    if (rc == MPI_SUCCESS) /* the pointer moves now; the data's place is fixed at the merge */
        rc = m->counter.ops->fetch_add(&m->counter, len, &before);
    return rc;
}

static int amp_sfp_indiv_fetch_add(amp_sfp_t *s, MPI_Offset delta, MPI_Offset *before)
{
    amp_sfp_indiv_t *m = s->state;
    int rc = m->counter.ops->fetch_add(&m->counter, delta, before);
    if (rc == MPI_SUCCESS && delta > 0 && !(s->f->amode & MPI_MODE_RDONLY)) {
        pthread_mutex_lock(&m->mutex);
        rc = amp_sfp_indiv_note(s, m, -1, delta, *before);
        pthread_mutex_unlock(&m->mutex);
    }
    return rc;
}

/* Every record of the epoch comes after this range, so the merge needs no note of it: it places
 * data from the pointer's value minus the records' lengths. */
static int amp_sfp_indiv_fetch_add_collective(amp_sfp_t *s, MPI_Offset delta, MPI_Offset *before)
{
    amp_sfp_indiv_t *m = s->state;
    return m->counter.ops->fetch_add(&m->counter, delta, before);
}

static int amp_sfp_indiv_get(amp_sfp_t *s, MPI_Offset *value)
{
    amp_sfp_indiv_t *m = s->state;
    return m->counter.ops->get(&m->counter, value);
}

static int amp_sfp_indiv_set(amp_sfp_t *s, MPI_Offset value)
{
    amp_sfp_indiv_t *m = s->state;
    return m->counter.ops->set(&m->counter, value);
}

static int amp_sfp_by_time(const void *pa, const void *pb)
{
    const amp_sfp_rec_t *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

static int amp_sfp_by_place(const void *pa, const void *pb)
{
    const amp_sfp_rec_t *a = pa, *b = pb;
    return a->at < b->at ? -1 : a->at > b->at;
}

/* Copies `len` etypes of this rank's side data from `local` to the file at position `at`. */
static int amp_sfp_indiv_copy(amp_sfp_t *s, amp_sfp_indiv_t *m, int64_t local, int64_t len,
                              int64_t at)
{
    MPI_Count esize = s->f->view.esize, bytes = (MPI_Count)len * esize;
    char *buf = malloc((size_t)bytes);
    if (!buf)
        return amp_err(MPI_ERR_NO_MEM, "out of memory merging %lld bytes", (long long)bytes);
    amp_dt_t *byte_dt = NULL;
    int rc = amp_sfp_full_pread(m->data_fd, buf, (size_t)bytes, (off_t)local);
    if (rc == MPI_SUCCESS)
        rc = amp_dt_get(MPI_BYTE, &byte_dt);
    if (rc == MPI_SUCCESS) {
        amp_xfer_t x = {.f = s->f,
                        .write = 1,
                        .pos = (MPI_Count)at * esize,
                        .nbytes = bytes,
                        .mem = buf,
                        .mdt = byte_dt};
        MPI_Count done = 0;
        rc = amp_xfer(&x, &done);
        if (rc == MPI_SUCCESS && done != bytes)
            rc = amp_err(MPI_ERR_IO, "merging shared pointer data wrote %lld of %lld bytes",
                         (long long)done, (long long)bytes);
    }
    amp_dt_release(byte_dt);
    free(buf);
    return rc;
}

/* Places every record: pinned ranges stay where they are, data fills the rest of
 * [end - total, end) in timestamp order, split around pinned ranges. Writes this rank's. */
static int amp_sfp_indiv_place(amp_sfp_t *s, amp_sfp_indiv_t *m, amp_sfp_rec_t *all, int64_t n,
                               MPI_Offset end)
{
    amp_sfp_rec_t *pins = malloc((size_t)n * sizeof(*pins));
    if (!pins)
        return amp_err(MPI_ERR_NO_MEM, "out of memory merging shared pointer records");
    int64_t total = 0, ndata = 0, npins = 0;
    for (int64_t i = 0; i < n; i++) {
        total += all[i].len;
        if (all[i].local >= 0)
            all[ndata++] = all[i];
        else
            pins[npins++] = all[i];
    }
    qsort(all, (size_t)ndata, sizeof(*all), amp_sfp_by_time);
    qsort(pins, (size_t)npins, sizeof(*pins), amp_sfp_by_place);
    int rc = MPI_SUCCESS;
    int64_t cursor = end - total, p = 0;
    for (int64_t i = 0; i < ndata; i++) {
        int64_t done = 0;
        while (done < all[i].len) {
            while (p < npins && pins[p].at <= cursor) {
                if (pins[p].at + pins[p].len > cursor)
                    cursor = pins[p].at + pins[p].len;
                p++;
            }
            int64_t piece = all[i].len - done;
            if (p < npins && pins[p].at - cursor < piece)
                piece = pins[p].at - cursor;
            if (all[i].rank == s->rank && rc == MPI_SUCCESS)
                rc =
                    amp_sfp_indiv_copy(s, m, all[i].local + done * s->f->view.esize, piece, cursor);
            cursor += piece;
            done += piece;
        }
    }
    free(pins);
    return rc;
}

/* This rank's records: the spilled ones, then those in memory. Called with the mutex held. */
static int amp_sfp_indiv_mine(amp_sfp_indiv_t *m, amp_sfp_rec_t **out, int64_t *n)
{
    *n = m->nspilled + m->nrecs;
    *out = malloc((size_t)(*n ? *n : 1) * sizeof(**out));
    if (!*out)
        return amp_err(MPI_ERR_NO_MEM, "out of memory merging shared pointer records");
    int rc = MPI_SUCCESS;
    if (m->nspilled)
        rc = amp_sfp_full_pread(m->meta_fd, *out, (size_t)m->nspilled * sizeof(**out), 0);
    memcpy(*out + m->nspilled, m->recs, (size_t)m->nrecs * sizeof(**out));
    return rc;
}

static int amp_sfp_indiv_sync(amp_sfp_t *s)
{
    amp_sfp_indiv_t *m = s->state;
    pthread_mutex_lock(&m->mutex);
    amp_sfp_rec_t *mine = NULL, *all = NULL;
    int64_t n = 0, total = 0;
    int rc = amp_sfp_indiv_mine(m, &mine, &n);
    if (rc != MPI_SUCCESS)
        n = 0;
    long long count = n, *counts = malloc((size_t)s->nprocs * sizeof(*counts));
    int *bytes = malloc((size_t)s->nprocs * sizeof(*bytes));
    int *displs = malloc((size_t)s->nprocs * sizeof(*displs));
    int ok = counts && bytes && displs, all_ok = 0;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, s->comm);
    if (!all_ok) {
        rc = amp_err(MPI_ERR_NO_MEM, "out of memory merging shared pointer records");
        goto out;
    }
    PMPI_Allgather(&count, 1, MPI_LONG_LONG, counts, 1, MPI_LONG_LONG, s->comm);
    for (int r = 0; r < s->nprocs; r++) {
        displs[r] = (int)(total * (int64_t)sizeof(amp_sfp_rec_t));
        bytes[r] = (int)(counts[r] * (int64_t)sizeof(amp_sfp_rec_t));
        total += counts[r];
    }
    if (total == 0)
        goto out;
    /* every rank has entered the merge, so every pointer move before it is done */
    MPI_Offset end = 0;
    int grc = s->rank == 0 ? m->counter.ops->get(&m->counter, &end) : MPI_SUCCESS;
    PMPI_Bcast(&end, 1, MPI_OFFSET, 0, s->comm);
    all = malloc((size_t)total * sizeof(*all));
    ok = all != NULL;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, s->comm);
    if (!all_ok) {
        rc = amp_err(MPI_ERR_NO_MEM, "out of memory merging shared pointer records");
        goto out;
    }
    PMPI_Allgatherv(mine, bytes[s->rank], MPI_BYTE, all, bytes, displs, MPI_BYTE, s->comm);
    int prc = amp_sfp_indiv_place(s, m, all, total, end);
    if (rc == MPI_SUCCESS)
        rc = grc != MPI_SUCCESS ? grc : prc;
    m->nrecs = 0;
    m->nspilled = 0;
    m->data_end = 0;
    if (m->data_fd >= 0 && ftruncate(m->data_fd, 0) != 0 && rc == MPI_SUCCESS)
        rc = amp_err_errno(errno, "cannot empty \"%s\"", m->data_name);
    if (m->meta_fd >= 0 && ftruncate(m->meta_fd, 0) != 0 && rc == MPI_SUCCESS)
        rc = amp_err_errno(errno, "cannot empty \"%s\"", m->meta_name);
out:
    pthread_mutex_unlock(&m->mutex);
    free(all);
    free(mine);
    free(counts);
    free(bytes);
    free(displs);
    return amp_agree(s->comm, rc); /* also: the merged data is in place before anyone goes on */
}

const amp_sfp_ops_t amp_sfp_individual_ops = {
    .name = "individual",
    .create = amp_sfp_indiv_create,
    .destroy = amp_sfp_indiv_destroy,
    .fetch_add = amp_sfp_indiv_fetch_add,
    .fetch_add_collective = amp_sfp_indiv_fetch_add_collective,
    .get = amp_sfp_indiv_get,
    .set = amp_sfp_indiv_set,
    .write = amp_sfp_indiv_write,
    .sync = amp_sfp_indiv_sync,
};
