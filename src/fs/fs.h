/* The file system layer: POSIX calls with the loops they need (short transfers, EINTR, the
 * iovec limit), errors turned into MPI codes that name the file and offset, and byte-range
 * locks on the open file description. */
#ifndef AMP_FS_H
#define AMP_FS_H

#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>

typedef struct amp_fs {
    int fd;
    const char *path; /* for messages */
    int locks;        /* 1: byte-range locks work, 0: unknown yet, -1: unavailable */
    FILE *trace;      /* AMPIO_TRACE: one line per system call that moved data */
    long long call;   /* the collective call in progress (its sequence number), or -1 */
    long long ncalls; /* collective calls so far */
    size_t max_write; /* largest write system call, 0: no limit (see amp_fs_writev) */
    /* 1: this node's cache of the file may keep bytes that another node has since changed
     * (the provider does not declare AMP_FS_COHERENT): sync and locks then drop it */
    int stale_cache;
    int dirty; /* stale_cache: written since the last flush */
} amp_fs_t;

/* Opens with POSIX flags; on failure an MPI error naming `path`. */
int amp_fs_open(amp_fs_t *fs, const char *path, int flags, int perm);
int amp_fs_close(amp_fs_t *fs);

/* Appends a line "<call> <r|w> <offset> <bytes>" to "<prefix>.<rank>" for every read or write
 * system call, so that tests can check which rank touched which bytes in which collective call
 * (call -1: an independent access). */
int amp_fs_trace_open(amp_fs_t *fs, const char *prefix, int rank);

/* Writes all `iovcnt` buffers at `off`, in system calls of at most `max_write` bytes when it is
 * set: a buffered write holds the file's inode lock for its whole copy, and on a node with more
 * writers than cores a holder can lose its core mid-copy while the others wait for the lock. */
int amp_fs_writev(amp_fs_t *fs, const struct iovec *iov, int iovcnt, MPI_Offset off);

/* Reads into the buffers at `off` until they are full or the end of file; `*got` is the number
 * of bytes read. */
int amp_fs_readv(amp_fs_t *fs, const struct iovec *iov, int iovcnt, MPI_Offset off, size_t *got);

/* Sets whether this node's cache of the file may be stale (amp_fs_t.stale_cache); if so drops
 * it now, so that an open sees what other nodes wrote before their close. */
void amp_fs_set_stale_cache(amp_fs_t *fs, int stale);

int amp_fs_size(amp_fs_t *fs, MPI_Offset *size);
int amp_fs_truncate(amp_fs_t *fs, MPI_Offset size);
int amp_fs_allocate(amp_fs_t *fs, MPI_Offset size);
/* fsync; where the cache may be stale, also drops it, so that after sync-barrier-sync this
 * node reads what the others wrote. */
int amp_fs_sync(amp_fs_t *fs);

/* Blocking byte-range lock (write lock if `exclusive`) of [off, off + len). `*locked` is 0
 * when the file system has no working locks (then nothing is locked). Where the cache may be
 * stale, the range's cached pages are dropped once locked, and unlocking first flushes what
 * was written, so that the next holder on another node reads it. */
int amp_fs_lock(amp_fs_t *fs, int exclusive, MPI_Offset off, MPI_Offset len, int *locked);
void amp_fs_unlock(amp_fs_t *fs, MPI_Offset off, MPI_Offset len);

#endif
