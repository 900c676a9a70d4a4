/* Independent data movement between memory and the file through a view.
 *
 * The data is walked as pieces (file offset, memory address, length) in view order. Pieces
 * whose file offsets touch form a run, written or read with one vectored call. A window of
 * small, dense runs is sieved instead: read once, patched, written back under an exclusive
 * byte-range lock. Plain writes also take the lock while sieving is possible, so that another
 * rank's read-modify-write can never put back stale bytes over them. File locks do not exclude
 * the threads of the process holding them: a write takes its window among them first
 * (io_ranges), and no mutex is held while a lock is awaited. */
#include "io/xfer.h"

#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "core/err.h"
#include "core/fault.h"
#include "core/worker.h"

#define AMP_XFER_BATCH 1024

/* A sieved window must hold at least this share of data (1/8) and runs shorter than 64 KiB on
 * average: past that, the holes cost more to move than the extra system calls. */
#define AMP_SIEVE_MIN_DENSITY 8
#define AMP_SIEVE_MAX_AVG_RUN (64 * 1024)

typedef struct {
    MPI_Offset off;
    char *mem;
    MPI_Count len;
} amp_piece_t;

typedef struct {
    const amp_xfer_t *x;
    amp_file_t *f;
    int ds;            /* AMP_CFG_ENABLE, _DISABLE or _AUTOMATIC for this direction */
    MPI_Count ds_size; /* sieve buffer size */
    int lock_writes;   /* writes take byte-range locks (sieving is on somewhere) */
    MPI_Count done;
    int eof;
    int shared_buf; /* holds the file's sieve buffer (f->lock), else has one of its own */
    char *own_buf;
    size_t own_cap;
} amp_xfer_state_t;

static int amp_xfer_sieve_buffer(amp_xfer_state_t *s, size_t size, char **buf)
{
    amp_file_t *f = s->f;
    void *at = s->shared_buf ? (void *)f->sieve_buf : (void *)s->own_buf;
    size_t cap = s->shared_buf ? f->sieve_cap : s->own_cap;
    if (cap < size) {
        void *grown = amp_realloc(at, size);
        if (!grown)
            return amp_err(MPI_ERR_NO_MEM, "out of memory for a %zu-byte data sieving buffer",
                           size);
        at = grown;
        if (s->shared_buf)
            f->sieve_buf = grown, f->sieve_cap = size;
        else
            s->own_buf = grown, s->own_cap = size;
    }
    *buf = at;
    return MPI_SUCCESS;
}

/* One run: pieces [i, j) whose file offsets touch. */
static int amp_xfer_run(amp_xfer_state_t *s, const amp_piece_t *p, size_t i, size_t j)
{
    struct iovec iov_small[64];
    struct iovec *iov = j - i <= 64 ? iov_small : amp_malloc((j - i) * sizeof(*iov));
    if (!iov)
        return amp_err(MPI_ERR_NO_MEM, "out of memory describing %zu pieces", j - i);
    size_t want = 0;
    for (size_t k = i; k < j; k++) {
        iov[k - i].iov_base = p[k].mem;
        iov[k - i].iov_len = (size_t)p[k].len;
        want += (size_t)p[k].len;
    }
    int rc;
    if (s->x->write) {
        rc = amp_fs_writev(&s->f->fs, iov, (int)(j - i), p[i].off);
        if (rc == MPI_SUCCESS)
            s->done += (MPI_Count)want;
    } else {
        size_t got = 0;
        rc = amp_fs_readv(&s->f->fs, iov, (int)(j - i), p[i].off, &got);
        s->done += (MPI_Count)got;
        if (got < want)
            s->eof = 1;
    }
    if (iov != iov_small)
        free(iov);
    return rc;
}

static int amp_xfer_direct(amp_xfer_state_t *s, const amp_piece_t *p, size_t i, size_t j)
{
    for (size_t r = i; r < j && !s->eof;) {
        size_t e = r + 1;
        while (e < j && p[e - 1].off + p[e - 1].len == p[e].off)
            e++;
        int rc = amp_xfer_run(s, p, r, e);
        if (rc != MPI_SUCCESS)
            return rc;
        r = e;
    }
    return MPI_SUCCESS;
}

static int amp_xfer_sieve_read(amp_xfer_state_t *s, const amp_piece_t *p, size_t i, size_t j)
{
    MPI_Offset start = p[i].off, span = p[j - 1].off + p[j - 1].len - start;
    char *buf = NULL;
    int rc = amp_xfer_sieve_buffer(s, (size_t)span, &buf);
    if (rc != MPI_SUCCESS)
        return rc;
    struct iovec iov = {buf, (size_t)span};
    size_t got = 0;
    rc = amp_fs_readv(&s->f->fs, &iov, 1, start, &got);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Offset end = start + (MPI_Offset)got;
    for (size_t k = i; k < j; k++) {
        if (p[k].off + p[k].len <= end) {
            memcpy(p[k].mem, buf + (p[k].off - start), (size_t)p[k].len);
            s->done += p[k].len;
            continue;
        }
        if (p[k].off < end) {
            memcpy(p[k].mem, buf + (p[k].off - start), (size_t)(end - p[k].off));
            s->done += end - p[k].off;
        }
        s->eof = 1;
        break;
    }
    return MPI_SUCCESS;
}

/* Read-modify-write of the window, the caller holding the lock over it. */
static int amp_xfer_sieve_write(amp_xfer_state_t *s, const amp_piece_t *p, size_t i, size_t j)
{
    MPI_Offset start = p[i].off, span = p[j - 1].off + p[j - 1].len - start;
    char *buf = NULL;
    int rc = amp_xfer_sieve_buffer(s, (size_t)span, &buf);
    if (rc != MPI_SUCCESS)
        return rc;
    struct iovec iov = {buf, (size_t)span};
    size_t got = 0;
    rc = amp_fs_readv(&s->f->fs, &iov, 1, start, &got);
    if (rc != MPI_SUCCESS)
        return rc;
    if (got < (size_t)span)
        memset(buf + got, 0, (size_t)span - got); /* beyond the end of file: a hole */
    for (size_t k = i; k < j; k++)
        memcpy(buf + (p[k].off - start), p[k].mem, (size_t)p[k].len);
    rc = amp_fs_writev(&s->f->fs, &iov, 1, start);
    if (rc == MPI_SUCCESS)
        for (size_t k = i; k < j; k++)
            s->done += p[k].len;
    return rc;
}

/* Whether pieces [i, j) are worth sieving. */
static int amp_xfer_want_sieve(const amp_xfer_state_t *s, const amp_piece_t *p, size_t i, size_t j)
{
    if (s->ds == AMP_CFG_DISABLE || j - i < 2)
        return 0;
    if (s->x->write && (!s->f->readable || __atomic_load_n(&s->f->fs.locks, __ATOMIC_RELAXED) < 0 ||
                        !(s->f->layout.caps & AMP_FS_LOCKED_RMW)))
        return 0;
    size_t runs = 1;
    MPI_Count data = p[i].len;
    for (size_t k = i + 1; k < j; k++) {
        runs += p[k - 1].off + p[k - 1].len != p[k].off;
        data += p[k].len;
    }
    if (runs < 2)
        return 0;
    if (s->ds == AMP_CFG_ENABLE)
        return 1;
    MPI_Offset span = p[j - 1].off + p[j - 1].len - p[i].off;
    return data * AMP_SIEVE_MIN_DENSITY >= span && data / (MPI_Count)runs < AMP_SIEVE_MAX_AVG_RUN;
}

/* A batch of pieces, split into windows no larger than the sieve buffer. */
static int amp_xfer_batch(amp_xfer_state_t *s, const amp_piece_t *p, size_t n)
{
    amp_fs_t *fs = &s->f->fs;
    for (size_t i = 0; i < n && !s->eof;) {
        size_t j = i + 1;
        while (j < n && p[j].off + p[j].len - p[i].off <= s->ds_size)
            j++;
        MPI_Offset start = p[i].off, span = p[j - 1].off + p[j - 1].len - start;
        int sieve = amp_xfer_want_sieve(s, p, i, j);
        int rc, locked = 0, held = !s->x->lock_held && s->x->write;
        amp_range_t mine;
        if (held) /* the window among this process's threads, before any file lock */
            amp_rangelock_acquire(&s->f->io_ranges, &mine, start, start + span);
        if (s->x->write && (sieve || s->lock_writes) && !s->x->lock_held) {
            rc = amp_fs_lock(fs, 1, start, span, &locked);
            if (rc != MPI_SUCCESS) {
                amp_rangelock_release(&s->f->io_ranges, &mine);
                return rc;
            }
            if (!locked)
                sieve = 0; /* no working locks: never read-modify-write */
        }
        if (!sieve)
            rc = amp_xfer_direct(s, p, i, j);
        else if (s->x->write)
            rc = amp_xfer_sieve_write(s, p, i, j);
        else
            rc = amp_xfer_sieve_read(s, p, i, j);
        if (locked)
            amp_fs_unlock(fs, start, span);
        if (held)
            amp_rangelock_release(&s->f->io_ranges, &mine);
        if (rc != MPI_SUCCESS)
            return rc;
        i = j;
    }
    return MPI_SUCCESS;
}

int amp_xfer_writes_lock(const amp_file_t *f)
{
    /* Only a view with holes makes a write sieved (every access through a view without holes
     * is one range of the file), so while no rank has one, no read-modify-write can race with
     * a plain write and plain writes take no lock; nor where no rank ever sieves a write (the
     * layout, the same on every rank, does not declare locked read-modify-write safe). */
    return amp_cfg_num(&f->cfg, AMP_CFG_ROMIO_DS_WRITE) != AMP_CFG_DISABLE && f->nprocs > 1 &&
           f->view_holes && (f->layout.caps & AMP_FS_LOCKED_RMW);
}

int amp_xfer(const amp_xfer_t *x, MPI_Count *done)
{
    amp_file_t *f = x->f;
    const amp_view_t *v = &f->view;
    amp_xfer_state_t s = {.x = x, .f = f};
    s.ds = (int)amp_cfg_num(&f->cfg, x->write ? AMP_CFG_ROMIO_DS_WRITE : AMP_CFG_ROMIO_DS_READ);
    s.ds_size =
        amp_cfg_num(&f->cfg, x->write ? AMP_CFG_IND_WR_BUFFER_SIZE : AMP_CFG_IND_RD_BUFFER_SIZE);
    s.lock_writes = amp_xfer_writes_lock(f);
    *done = 0;
    if (x->nbytes == 0)
        return MPI_SUCCESS;

    amp_piece_t *p = amp_malloc(AMP_XFER_BATCH * sizeof(*p));
    if (!p)
        return amp_err(MPI_ERR_NO_MEM, "out of memory for the transfer of %lld bytes",
                       (long long)x->nbytes);
    amp_dt_iter_t fi, mi;
    amp_dt_iter_init(&fi, v->ft, (MPI_Aint)v->disp, x->pos);
    amp_dt_iter_init(&mi, x->mdt, (MPI_Aint)x->mem, 0);
    MPI_Aint faddr = 0, maddr = 0;
    MPI_Count fleft = 0, mleft = 0, remaining = x->nbytes;
    int rc = MPI_SUCCESS;

    /* the file's sieve buffer when no other thread has it, else one of this call's own */
    s.shared_buf = pthread_mutex_trylock(&f->lock) == 0;
    while (remaining > 0 && rc == MPI_SUCCESS && !s.eof) {
        size_t n = 0;
        while (n < AMP_XFER_BATCH && remaining > 0) {
            if (fleft == 0)
                amp_dt_iter_next(&fi, remaining, &faddr, &fleft);
            if (mleft == 0)
                amp_dt_iter_next(&mi, remaining, &maddr, &mleft);
            MPI_Count len = fleft < mleft ? fleft : mleft;
            if (n > 0 && p[n - 1].off + p[n - 1].len == faddr &&
                p[n - 1].mem + p[n - 1].len == (char *)maddr) {
                p[n - 1].len += len;
            } else {
                p[n].off = faddr;
                p[n].mem = (char *)maddr;
                p[n].len = len;
                n++;
            }
            faddr += (MPI_Aint)len;
            maddr += (MPI_Aint)len;
            fleft -= len;
            mleft -= len;
            remaining -= len;
        }
        rc = amp_xfer_batch(&s, p, n);
    }
    if (s.shared_buf)
        pthread_mutex_unlock(&f->lock);
    free(s.own_buf);
    free(p);
    *done = s.done;
    return rc;
}

int amp_xfer_job(void *job)
{
    amp_xfer_job_t *j = job;
    int rc = amp_xfer(j->x, &j->done);
    amp_worker_count(j->done);
    return rc;
}
