#include "fs/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fault.h"
#include "fs/fs_layout.h"

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

int amp_fs_open(amp_fs_t *fs, const char *path, int flags, int perm)
{
    int fd, fault;
    do
        if ((fault = amp_fault_fs(0)) != 0)
            fd = -1, errno = fault;
        else
            fd = amp_fs_sys->open(path, flags | O_CLOEXEC, perm);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return amp_err_errno(errno, "cannot open file \"%s\"", path);
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        return amp_err(MPI_ERR_BAD_FILE, "\"%s\" is a directory, not a file", path);
    }
    fs->fd = fd;
    fs->path = path;
    fs->locks = 0;
    fs->call = -1;
    fs->max_write = 0;
    fs->stale_cache = 0;
    fs->dirty = 0;
    return MPI_SUCCESS;
}

/* Drops the node's clean cached pages of [off, off + len) (len 0: to the end). */
static void amp_fs_drop_cache(amp_fs_t *fs, MPI_Offset off, MPI_Offset len)
{
    posix_fadvise(fs->fd, (off_t)off, (off_t)len, POSIX_FADV_DONTNEED);
}

void amp_fs_set_stale_cache(amp_fs_t *fs, int stale)
{
    fs->stale_cache = stale;
    if (stale)
        amp_fs_drop_cache(fs, 0, 0);
}

int amp_fs_trace_open(amp_fs_t *fs, const char *prefix, int rank)
{
    char name[4096];
    snprintf(name, sizeof(name), "%s.%d", prefix, rank);
    fs->trace = fopen(name, "a");
    if (!fs->trace)
        return amp_err_errno(errno, "cannot open the trace file \"%s\"", name);
    return MPI_SUCCESS;
}

int amp_fs_close(amp_fs_t *fs)
{
    if (fs->trace) {
        fclose(fs->trace);
        fs->trace = NULL;
    }
    if (fs->fd < 0)
        return MPI_SUCCESS;
    int rc = close(fs->fd);
    fs->fd = -1;
    if (rc != 0 && errno != EINTR)
        return amp_err_errno(errno, "closing file \"%s\" failed", fs->path);
    return MPI_SUCCESS;
}

/* Arrays longer than IOV_MAX are sent in windows; `skip` counts the bytes of the current first
 * buffer already transferred, so the caller's array stays const. */
static int amp_fs_transfer(amp_fs_t *fs, int write, const struct iovec *iov, int iovcnt,
                           MPI_Offset off, size_t *moved)
{
    size_t total = 0, skip = 0;
    int index = 0;
    *moved = 0;
    /* set by a collective call on another thread while independent accesses run */
    size_t max_write = __atomic_load_n(&fs->max_write, __ATOMIC_RELAXED);
    while (index < iovcnt) {
        struct iovec window[IOV_MAX];
        int n = iovcnt - index < IOV_MAX ? iovcnt - index : IOV_MAX;
        memcpy(window, iov + index, (size_t)n * sizeof(struct iovec));
        window[0].iov_base = (char *)window[0].iov_base + skip;
        window[0].iov_len -= skip;
        size_t want = 0;
        for (int k = 0; k < n; k++) {
            if (write && max_write > 0 && want + window[k].iov_len >= max_write) {
                window[k].iov_len = max_write - want; /* the rest in the next call */
                n = k + 1;
            }
            want += window[k].iov_len;
        }
        if (want == 0) {
            index += n;
            skip = 0;
            continue;
        }
        MPI_Offset at = off + (MPI_Offset)total;
        ssize_t r;
        int fault;
        do {
            fault = amp_fault_fs(1);
            if (fault == AMP_FAULT_SHORT) /* half of the first buffer (at least a byte) */
                window[0].iov_len = window[0].iov_len > 1 ? window[0].iov_len / 2 : 1, n = 1;
            if (fault > 0)
                r = -1, errno = fault;
            else
                r = write ? pwritev(fs->fd, window, n, (off_t)at)
                          : preadv(fs->fd, window, n, (off_t)at);
        } while (r < 0 && errno == EINTR);
        if (r < 0)
            return amp_err_errno(errno, "%s %zu bytes at offset %lld of \"%s\" failed",
                                 write ? "writing" : "reading", want, (long long)at, fs->path);
        if (r == 0) {
            if (!write)
                return MPI_SUCCESS; /* end of file */
            return amp_err_errno(ENOSPC,
                                 "writing %zu bytes at offset %lld of \"%s\" made no "
                                 "progress",
                                 want, (long long)at, fs->path);
        }
        if (fs->trace)
            fprintf(fs->trace, "%lld %c %lld %zd\n", __atomic_load_n(&fs->call, __ATOMIC_RELAXED),
                    write ? 'w' : 'r', (long long)at, r);
        total += (size_t)r;
        *moved = total;
        /* advance over the caller's buffers: a window's last one may have been cut short */
        size_t done = (size_t)r;
        int k = 0;
        while (k < n && done >= iov[index + k].iov_len - (k == 0 ? skip : 0)) {
            done -= iov[index + k].iov_len - (k == 0 ? skip : 0);
            k++;
        }
        skip = k == 0 ? skip + done : done;
        index += k;
    }
    return MPI_SUCCESS;
}

int amp_fs_writev(amp_fs_t *fs, const struct iovec *iov, int iovcnt, MPI_Offset off)
{
    size_t moved;
    if (fs->stale_cache)
        fs->dirty = 1;
    return amp_fs_transfer(fs, 1, iov, iovcnt, off, &moved);
}

int amp_fs_readv(amp_fs_t *fs, const struct iovec *iov, int iovcnt, MPI_Offset off, size_t *got)
{
    return amp_fs_transfer(fs, 0, iov, iovcnt, off, got);
}

int amp_fs_size(amp_fs_t *fs, MPI_Offset *size)
{
    struct stat st;
    int rc, fault;
    do
        if ((fault = amp_fault_fs(0)) > 0)
            rc = -1, errno = fault;
        else
            rc = fstat(fs->fd, &st);
    while (rc != 0 && errno == EINTR);
    if (rc != 0)
        return amp_err_errno(errno, "cannot get the size of \"%s\"", fs->path);
    *size = (MPI_Offset)st.st_size;
    return MPI_SUCCESS;
}

int amp_fs_truncate(amp_fs_t *fs, MPI_Offset size)
{
    int rc, fault;
    do
        if ((fault = amp_fault_fs(0)) > 0)
            rc = -1, errno = fault;
        else
            rc = ftruncate(fs->fd, (off_t)size);
    while (rc != 0 && errno == EINTR);
    if (rc != 0)
        return amp_err_errno(errno, "cannot resize \"%s\" to %lld bytes", fs->path,
                             (long long)size);
    return MPI_SUCCESS;
}

int amp_fs_allocate(amp_fs_t *fs, MPI_Offset size)
{
    if (size == 0)
        return MPI_SUCCESS;
    int rc;
    do {
        rc = amp_fault_fs(0);
        if (rc <= 0)
            rc = posix_fallocate(fs->fd, 0, (off_t)size);
    } while (rc == EINTR);
    if (rc == EOPNOTSUPP || rc == EINVAL) {
        /* no fallocate here: extending the size is all MPI promises to be visible */
        MPI_Offset now;
        int err = amp_fs_size(fs, &now);
        if (err != MPI_SUCCESS || now >= size)
            return err;
        return amp_fs_truncate(fs, size);
    }
    if (rc != 0)
        return amp_err_errno(rc, "cannot preallocate %lld bytes for \"%s\"", (long long)size,
                             fs->path);
    return MPI_SUCCESS;
}

int amp_fs_sync(amp_fs_t *fs)
{
    int rc, fault;
    do
        if ((fault = amp_fault_fs(0)) > 0)
            rc = -1, errno = fault;
        else
            rc = fsync(fs->fd);
    while (rc != 0 && errno == EINTR);
    if (rc != 0 && errno != EINVAL && errno != EROFS)
        return amp_err_errno(errno, "cannot flush \"%s\" to storage", fs->path);
    fs->dirty = 0;
    if (fs->stale_cache)
        amp_fs_drop_cache(fs, 0, 0);
    return MPI_SUCCESS;
}

static int amp_fs_fcntl_lock(int fd, int ofd, int type, MPI_Offset off, MPI_Offset len)
{
    struct flock fl;
    memset(&fl, 0, sizeof(fl));
    fl.l_type = (short)type;
    fl.l_whence = SEEK_SET;
    fl.l_start = (off_t)off;
    fl.l_len = (off_t)len;
    int rc;
#ifdef F_OFD_SETLKW
    if (ofd) {
        do
            rc = fcntl(fd, F_OFD_SETLKW, &fl);
        while (rc != 0 && errno == EINTR);
        return rc == 0 ? 0 : errno;
    }
#endif
    do
        rc = fcntl(fd, F_SETLKW, &fl);
    while (rc != 0 && errno == EINTR);
    return rc == 0 ? 0 : errno;
}

/* Open-file-description locks: not dropped when another descriptor of the same file is closed
 * in this process, and they conflict between two handles of one process. */
static int amp_fs_use_ofd = 1; /* read and written by any thread: atomically */

static int amp_fs_ofd(void)
{
    return __atomic_load_n(&amp_fs_use_ofd, __ATOMIC_RELAXED);
}

int amp_fs_lock(amp_fs_t *fs, int exclusive, MPI_Offset off, MPI_Offset len, int *locked)
{
    *locked = 0;
    if (__atomic_load_n(&fs->locks, __ATOMIC_RELAXED) < 0 || len <= 0)
        return MPI_SUCCESS;
    int type = exclusive ? F_WRLCK : F_RDLCK;
    int fault = amp_fault_fs(0); /* an interrupted wait is retried: EINTR is no failure here */
    int e = fault > 0 && fault != EINTR ? fault
                                        : amp_fs_fcntl_lock(fs->fd, amp_fs_ofd(), type, off, len);
    if (e == EINVAL && amp_fs_ofd()) {
        __atomic_store_n(&amp_fs_use_ofd, 0, __ATOMIC_RELAXED);
        e = amp_fs_fcntl_lock(fs->fd, 0, type, off, len);
    }
    if (e == EBADF && exclusive) /* opened read-only: a shared lock is all there is */
        e = amp_fs_fcntl_lock(fs->fd, amp_fs_ofd(), F_RDLCK, off, len);
    if (e == 0) {
        __atomic_store_n(&fs->locks, 1, __ATOMIC_RELAXED);
        *locked = 1;
        if (fs->stale_cache)
            amp_fs_drop_cache(fs, off, len);
        return MPI_SUCCESS;
    }
    if (e == ENOLCK || e == EOPNOTSUPP || e == ENOSYS || e == EINVAL) {
        __atomic_store_n(&fs->locks, -1, __ATOMIC_RELAXED);
        return MPI_SUCCESS;
    }
    return amp_err_errno(e, "cannot lock bytes %lld..%lld of \"%s\"", (long long)off,
                         (long long)(off + len), fs->path);
}

void amp_fs_unlock(amp_fs_t *fs, MPI_Offset off, MPI_Offset len)
{
    if (__atomic_load_n(&fs->locks, __ATOMIC_RELAXED) > 0 && len > 0) {
        if (fs->stale_cache && fs->dirty && fdatasync(fs->fd) == 0)
            fs->dirty = 0;
        amp_fs_fcntl_lock(fs->fd, amp_fs_ofd(), F_UNLCK, off, len);
    }
}
