/* The deferring components (Kulkarni and Gabriel): write_shared appends the data to a side data
 * file of the writing process and notes a record (id, timestamp, position in the side file,
 * length, file); at collective points (ordered and collective accesses, seek_shared, set_view,
 * sync, close) rank 0 gathers the file's records from every rank and sorts them by timestamp,
 * and every rank copies its data into the places rank 0 sent it. "individual" keeps a store of side
 * files per file and process, "single" one per process for all the files it has open (sfp_store.c).
 *
 * Timestamps are MPI_Wtime corrected by each rank's offset to rank 0, measured at open by
 * ping-pong. A window component (shm or rma) keeps the pointer itself: it advances on every
 * write_shared by the record's length, so get_position_shared stays exact, and it serves the
 * calls these components cannot (read_shared). A read_shared between two merges pins the range
 * it read; merged data flows around such ranges, so nothing overlaps. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/agree.h"
#include "core/err.h"
#include "core/fault.h"
#include "core/task.h"
#include "io/datarep.h"
#include "io/view.h"
#include "io/xfer.h"
#include "sharedfp/sfp_deferred.h"

#define AMP_SFP_CLOCK_TAG    7301
#define AMP_SFP_CLOCK_ROUNDS 4

/* Offset of this rank's MPI_Wtime to rank 0's, from the round trip with the least delay. A
 * sample whose messages failed is not used: the offset only orders records better. */
static double amp_sfp_clock_offset(amp_sfp_t *s)
{
    double offset = 0, best = -1, t;
    for (int r = 1; r < s->nprocs; r++) {
        for (int k = 0; k < AMP_SFP_CLOCK_ROUNDS; k++) {
            if (s->rank == 0) {
                int bad = PMPI_Recv(&t, 1, MPI_DOUBLE, r, AMP_SFP_CLOCK_TAG, s->comm,
                                    MPI_STATUS_IGNORE) != MPI_SUCCESS;
                t = bad ? -1 : PMPI_Wtime(); /* the peer's sample is then discarded */
                (void)PMPI_Send(&t, 1, MPI_DOUBLE, r, AMP_SFP_CLOCK_TAG, s->comm);
            } else if (s->rank == r) {
                double t0 = PMPI_Wtime();
                int bad =
                    PMPI_Send(&t0, 1, MPI_DOUBLE, 0, AMP_SFP_CLOCK_TAG, s->comm) != MPI_SUCCESS;
                bad |= PMPI_Recv(&t, 1, MPI_DOUBLE, 0, AMP_SFP_CLOCK_TAG, s->comm,
                                 MPI_STATUS_IGNORE) != MPI_SUCCESS;
                double t1 = PMPI_Wtime();
                if (!bad && t >= 0 && (best < 0 || t1 - t0 < best)) {
                    best = t1 - t0;
                    offset = t - (t0 + t1) / 2;
                }
            }
        }
    }
    return offset;
}

int amp_sfp_deferred_create(amp_sfp_t *s, amp_sfp_deferred_t *m)
{
    m->counter = *s;
    m->counter.state = NULL;
    int rc = amp_sfp_create_window(&m->counter);
    /* no window (Open MPI 4 over TCP makes none across nodes): the pointer in a side file */
    if (rc != MPI_SUCCESS)
        rc = amp_sfp_try(&m->counter, &amp_sfp_lockedfile_ops);
    if (rc != MPI_SUCCESS)
        return rc;
    m->clock_offset = amp_sfp_clock_offset(s);
    s->state = m;
    return MPI_SUCCESS;
}

void amp_sfp_deferred_destroy(amp_sfp_t *s, int how)
{
    amp_sfp_deferred_t *m = s->state;
    m->counter.ops->destroy(&m->counter, how);
}

/* Notes a record of this file. Called with the store locked. */
static int amp_sfp_deferred_note(amp_sfp_t *s, amp_sfp_deferred_t *m, int64_t local, int64_t len,
                                 int64_t at)
{
    amp_sfp_rec_t r = {.ts = PMPI_Wtime() + m->clock_offset,
                       .local = local,
                       .len = len,
                       .at = at,
                       .tag = m->tag,
                       .rank = s->rank};
    return amp_sfp_store_note(m->store, &r);
}

/* The file bytes of the access: encoded by the data representation, else packed. */
static int amp_sfp_deferred_bytes(amp_sfp_t *s, const void *buf, MPI_Count count, MPI_Datatype type,
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

int amp_sfp_deferred_write(amp_sfp_t *s, const void *buf, MPI_Count count, MPI_Datatype type,
                           amp_dt_t *mdt, MPI_Count bytes)
{
    amp_sfp_deferred_t *m = s->state;
    if (bytes == 0)
        return MPI_SUCCESS;
    char *data = amp_malloc((size_t)bytes);
    if (!data)
        return amp_err(MPI_ERR_NO_MEM, "out of memory deferring %lld bytes", (long long)bytes);
    int rc = amp_sfp_deferred_bytes(s, buf, count, type, mdt, bytes, data);
    MPI_Offset len = (MPI_Offset)(bytes / s->f->view.esize);
    int64_t local = 0;
    amp_sfp_store_lock(m->store);
    if (rc == MPI_SUCCESS)
        rc = amp_sfp_store_append(m->store, data, (size_t)bytes, &local);
    if (rc == MPI_SUCCESS)
        rc = amp_sfp_deferred_note(s, m, local, len, -1);
    amp_sfp_store_unlock(m->store);
    free(data);
    MPI_Offset before;
    if (rc == MPI_SUCCESS) /* the pointer moves now; the data's place is fixed at the merge */
        rc = m->counter.ops->fetch_add(&m->counter, len, &before);
    return rc;
}

int amp_sfp_deferred_fetch_add(amp_sfp_t *s, MPI_Offset delta, MPI_Offset *before)
{
    amp_sfp_deferred_t *m = s->state;
    int rc = m->counter.ops->fetch_add(&m->counter, delta, before);
    if (rc == MPI_SUCCESS && delta > 0 && !(s->f->amode & MPI_MODE_RDONLY)) {
        amp_sfp_store_lock(m->store);
        rc = amp_sfp_deferred_note(s, m, -1, delta, *before);
        amp_sfp_store_unlock(m->store);
    }
    return rc;
}

/* Every record of the epoch comes after this range, so the merge needs no note of it: it places
 * data from the pointer's value minus the records' lengths. */
int amp_sfp_deferred_fetch_add_collective(amp_sfp_t *s, MPI_Offset delta, MPI_Offset *before)
{
    amp_sfp_deferred_t *m = s->state;
    return m->counter.ops->fetch_add(&m->counter, delta, before);
}

int amp_sfp_deferred_get(amp_sfp_t *s, MPI_Offset *value)
{
    amp_sfp_deferred_t *m = s->state;
    return m->counter.ops->get(&m->counter, value);
}

int amp_sfp_deferred_set(amp_sfp_t *s, MPI_Offset value)
{
    amp_sfp_deferred_t *m = s->state;
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
static int amp_sfp_deferred_copy(amp_sfp_t *s, amp_sfp_deferred_t *m, int64_t local, int64_t len,
                                 int64_t at)
{
    MPI_Count esize = s->f->view.esize, bytes = (MPI_Count)len * esize, pos = 0;
    int rc = amp_view_range(&s->f->view, at, bytes, &pos, "placing shared file pointer data");
    if (rc != MPI_SUCCESS)
        return rc;
    char *buf = amp_malloc((size_t)bytes);
    if (!buf)
        return amp_err(MPI_ERR_NO_MEM, "out of memory merging %lld bytes", (long long)bytes);
    amp_dt_t *byte_dt = NULL;
    amp_sfp_store_lock(m->store);
    rc = amp_sfp_store_read(m->store, buf, (size_t)bytes, local);
    amp_sfp_store_unlock(m->store);
    if (rc == MPI_SUCCESS)
        rc = amp_dt_get(MPI_BYTE, &byte_dt);
    if (rc == MPI_SUCCESS) {
        amp_xfer_t x = {
            .f = s->f, .write = 1, .pos = pos, .nbytes = bytes, .mem = buf, .mdt = byte_dt};
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

/* A piece of one rank's side data and its place in the file (in etypes). */
typedef struct {
    int64_t local, len, at;
    int64_t rank;
} amp_sfp_piece_t;

static int amp_sfp_by_rank(const void *pa, const void *pb)
{
    const amp_sfp_piece_t *a = pa, *b = pb;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* Places every record (rank 0 does, for all): pinned ranges stay where they are, data fills
 * the rest of [end - total, end) in timestamp order, split around pinned ranges. Returns the
 * pieces sorted by rank (malloc'd; at most one per record and pin), NULL without memory. */
static amp_sfp_piece_t *amp_sfp_deferred_plan(amp_sfp_rec_t *all, int64_t n, MPI_Offset end,
                                              int64_t esize, int64_t *npieces)
{
    amp_sfp_rec_t *pins = amp_malloc((size_t)n * sizeof(*pins));
    amp_sfp_piece_t *out = amp_malloc((size_t)(2 * n) * sizeof(*out));
    if (!pins || !out) {
        free(pins);
        free(out);
        return NULL;
    }
    int64_t total = 0, ndata = 0, npins = 0, k = 0;
    for (int64_t i = 0; i < n; i++) {
        total += all[i].len;
        if (all[i].local >= 0)
            all[ndata++] = all[i];
        else
            pins[npins++] = all[i];
    }
    qsort(all, (size_t)ndata, sizeof(*all), amp_sfp_by_time);
    qsort(pins, (size_t)npins, sizeof(*pins), amp_sfp_by_place);
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
            out[k++] = (amp_sfp_piece_t){.local = all[i].local + done * esize,
                                         .len = piece,
                                         .at = cursor,
                                         .rank = all[i].rank};
            cursor += piece;
            done += piece;
        }
    }
    free(pins);
    qsort(out, (size_t)k, sizeof(*out), amp_sfp_by_rank);
    *npieces = k;
    return out;
}

/* Keeps the first failure in *first; returns rc. */
static int amp_sfp_keep(int *first, int rc)
{
    if (*first == MPI_SUCCESS && rc != MPI_SUCCESS)
        *first = rc;
    return rc;
}

/* What rank 0 tells the others before the records move. */
enum {
    AMP_SFP_MERGE_GO,
    AMP_SFP_MERGE_NONE,
    AMP_SFP_MERGE_MANY,
    AMP_SFP_MERGE_NO_MEM,
    AMP_SFP_MERGE_FAILED /* rank 0 could not read the pointer: its error reaches all at the end */
};

/* Rank 0 gathers the records, places them and sends each rank only the pieces it copies: memory
 * and work beyond a rank's own records are rank 0's alone. The store stays unlocked during the
 * collective part: with "single" another thread may merge another file meanwhile, and holding
 * the lock there could make two ranks wait for each other. Every rank takes every collective
 * step whatever failed before; what decides the steps comes from rank 0. */
int amp_sfp_deferred_sync(amp_sfp_t *s)
{
    amp_sfp_deferred_t *m = s->state;
    amp_sfp_rec_t *mine = NULL, *all = NULL;
    amp_sfp_piece_t *pieces = NULL, *todo = NULL;
    int64_t n = 0, npieces = 0;
    int root = s->rank == 0;
    amp_sfp_store_lock(m->store);
    int rc = amp_sfp_store_take(m->store, m->tag, &mine, &n);
    amp_sfp_store_unlock(m->store);
    if (rc != MPI_SUCCESS)
        n = 0;
    /* counts and displacements in records (a type of one record), not bytes: an int holds
     * 2^31 - 1 of them, past which the merge fails on every rank alike */
    MPI_Datatype rec_type = MPI_DATATYPE_NULL, piece_type = MPI_DATATYPE_NULL;
    long long count = n, *counts = NULL;
    int *nrec = NULL, *displs = NULL, ok = 1;
    if (root) {
        counts = amp_malloc((size_t)s->nprocs * sizeof(*counts));
        nrec = amp_malloc((size_t)s->nprocs * sizeof(*nrec));
        displs = amp_malloc((size_t)s->nprocs * sizeof(*displs));
        ok = counts && nrec && displs;
    }
    if (PMPI_Type_contiguous((int)sizeof(amp_sfp_rec_t), MPI_BYTE, &rec_type) != MPI_SUCCESS ||
        PMPI_Type_commit(&rec_type) != MPI_SUCCESS ||
        PMPI_Type_contiguous((int)sizeof(amp_sfp_piece_t), MPI_BYTE, &piece_type) != MPI_SUCCESS ||
        PMPI_Type_commit(&piece_type) != MPI_SUCCESS)
        ok = 0;
    /* the steps below decide what every rank does next: agreements, exempt from injection */
    int all_ok = 0;
    int arc = amp_task_agree_allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, s->comm);
    if (arc != MPI_SUCCESS || !all_ok) {
        rc = arc != MPI_SUCCESS ? arc
                                : amp_err(MPI_ERR_NO_MEM, "out of memory merging shared "
                                                          "pointer records");
        goto out;
    }
    amp_sfp_keep(&rc,
                 amp_task_gather(&count, 1, MPI_LONG_LONG, counts, 1, MPI_LONG_LONG, 0, s->comm));
    /* rank 0: the total, the pointer's value (every move before the merge is done, since every
     * rank has entered it) and the room for every record */
    MPI_Offset plan[2] = {AMP_SFP_MERGE_GO, 0}; /* what to do, the end of the merged data */
    int64_t total = 0;
    if (root) {
        for (int r = 0; r < s->nprocs && plan[0] == AMP_SFP_MERGE_GO; r++) {
            if (counts[r] < 0 || total + counts[r] > INT_MAX)
                plan[0] = AMP_SFP_MERGE_MANY;
            displs[r] = (int)total;
            nrec[r] = (int)counts[r];
            total += counts[r];
        }
        if (plan[0] == AMP_SFP_MERGE_GO && total == 0)
            plan[0] = AMP_SFP_MERGE_NONE;
        if (plan[0] == AMP_SFP_MERGE_GO && !(all = amp_malloc((size_t)total * sizeof(*all))))
            plan[0] = AMP_SFP_MERGE_NO_MEM;
        if (plan[0] == AMP_SFP_MERGE_GO &&
            amp_sfp_keep(&rc, m->counter.ops->get(&m->counter, &plan[1])) != MPI_SUCCESS)
            plan[0] = AMP_SFP_MERGE_FAILED;
    }
    arc = amp_task_agree_bcast(plan, 2, MPI_OFFSET, 0, s->comm);
    if (arc != MPI_SUCCESS || plan[0] != AMP_SFP_MERGE_GO) {
        if (arc != MPI_SUCCESS)
            amp_sfp_keep(&rc, arc);
        else if (plan[0] == AMP_SFP_MERGE_MANY)
            amp_sfp_keep(&rc, amp_err(MPI_ERR_INTERN,
                                      "more than %d shared file pointer records between two "
                                      "collective points: call a collective routine (or "
                                      "MPI_File_sync) more often",
                                      INT_MAX));
        else if (plan[0] == AMP_SFP_MERGE_NO_MEM)
            amp_sfp_keep(&rc, amp_err(MPI_ERR_NO_MEM, "out of memory merging shared pointer "
                                                      "records"));
        goto out;
    }
    amp_sfp_keep(&rc,
                 amp_task_gatherv(mine, (int)n, rec_type, all, nrec, displs, rec_type, 0, s->comm));
    /* rank 0 places the records and sends each rank its pieces; -1 pieces: no memory */
    if (root) {
        pieces = amp_sfp_deferred_plan(all, total, plan[1], s->f->view.esize, &npieces);
        for (int r = 0; r < s->nprocs; r++)
            nrec[r] = pieces ? 0 : -1;
        for (int64_t i = 0; pieces && i < npieces; i++)
            nrec[pieces[i].rank]++;
        for (int r = 0, at = 0; pieces && r < s->nprocs; at += nrec[r++])
            displs[r] = at;
    }
    int mine_n = 0;
    amp_sfp_keep(&rc, amp_task_scatter(nrec, 1, MPI_INT, &mine_n, 1, MPI_INT, 0, s->comm));
    ok = mine_n == 0 || (mine_n > 0 && (todo = amp_malloc((size_t)mine_n * sizeof(*todo))));
    arc = amp_task_agree_allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, s->comm);
    if (arc != MPI_SUCCESS || !all_ok) {
        amp_sfp_keep(&rc, arc != MPI_SUCCESS ? arc
                                             : amp_err(MPI_ERR_NO_MEM, "out of memory merging "
                                                                       "shared pointer records"));
        goto out;
    }
    amp_sfp_keep(&rc, amp_task_scatterv(pieces, nrec, displs, piece_type, todo, mine_n, piece_type,
                                        0, s->comm));
    for (int64_t i = 0; todo && rc == MPI_SUCCESS && i < mine_n; i++)
        rc = amp_sfp_deferred_copy(s, m, todo[i].local, todo[i].len, todo[i].at);
out:
    if (rec_type != MPI_DATATYPE_NULL)
        PMPI_Type_free(&rec_type);
    if (piece_type != MPI_DATATYPE_NULL)
        PMPI_Type_free(&piece_type);
    amp_sfp_store_lock(m->store);
    int drc = amp_sfp_store_done(m->store);
    amp_sfp_store_unlock(m->store);
    if (rc == MPI_SUCCESS)
        rc = drc;
    free(todo);
    free(pieces);
    free(all);
    free(mine);
    free(counts);
    free(nrec);
    free(displs);
    return amp_agree(s->comm, rc); /* also: the merged data is in place before anyone goes on */
}
