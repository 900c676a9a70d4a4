/* The "lockedfile" component, as ROMIO does it: the pointer is 8 bytes in a side file next to
 * the file, read and rewritten under an fcntl write lock. Nothing collective is needed, so the
 * side file is created by whichever rank first moves the pointer; until then the pointer is 0.
 * fcntl locks exclude processes, not threads: a mutex serialises the threads of one process.
 * The open makes nothing: a rank makes its state at its first use of the pointer.
 *
 * On a file system whose clients may serve a read under a lock from a cache that another
 * node's write has made stale (its provider does not declare AMP_FS_LOCKED_RMW: ceph-fuse keeps
 * the kernel's page cache), the side file is opened with O_DIRECT and moved in whole aligned
 * blocks, so that every read and write reaches the file system's servers. Measured on the
 * emulated cluster's CephFS: without it, the ranks of each node counted on their own. There the
 * side file is born whole (amp_sfp_side_open_filled): FUSE answers a direct read past the size
 * it cached at lookup with nothing, and a rank that looked the file up while it was empty read
 * the pointer as 0 (one record in a few thousand lost, on a loaded machine). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fault.h"
#include "sharedfp/sfp_impl.h"

#define AMP_SFP_LOCKED_BLOCK 4096 /* O_DIRECT transfers: a multiple of any logical block */

typedef struct {
    char *name;
    int fd;            /* -1 until the side file is used */
    MPI_Offset *block; /* O_DIRECT: an aligned block whose first 8 bytes hold the pointer */
    pthread_mutex_t mutex;
} amp_sfp_locked_t;

/* The state, made at the pointer's first use on this rank: the open makes nothing, so that the
 * component cannot fail there and needs no agreement (a step fewer per open). */
static int amp_sfp_locked_make(amp_sfp_t *s, amp_sfp_locked_t **out)
{
    amp_sfp_locked_t *m = amp_calloc(1, sizeof(*m));
    if (!m)
        return amp_err(MPI_ERR_NO_MEM, "out of memory for a shared file pointer");
    int rc = amp_sfp_side_name(s, ".ptr", &m->name);
    if (rc != MPI_SUCCESS) {
        free(m);
        return rc;
    }
    m->fd = -1;
    if (!(s->f->layout.caps & AMP_FS_LOCKED_RMW)) {
        void *block = NULL;
        if (posix_memalign(&block, AMP_SFP_LOCKED_BLOCK, AMP_SFP_LOCKED_BLOCK) != 0) {
            free(m->name);
            free(m);
            return amp_err(MPI_ERR_NO_MEM, "out of memory for a shared file pointer");
        }
        memset(block, 0, AMP_SFP_LOCKED_BLOCK);
        m->block = block;
    }
    pthread_mutex_init(&m->mutex, NULL);
    *out = m;
    return MPI_SUCCESS;
}

static pthread_mutex_t amp_sfp_locked_making = PTHREAD_MUTEX_INITIALIZER;

static int amp_sfp_locked_state(amp_sfp_t *s, amp_sfp_locked_t **out)
{
    int rc = MPI_SUCCESS;
    amp_sfp_locked_t *m = __atomic_load_n((amp_sfp_locked_t **)&s->state, __ATOMIC_ACQUIRE);
    if (!m) { /* the threads of one process make it once */
        pthread_mutex_lock(&amp_sfp_locked_making);
        m = s->state;
        if (!m && (rc = amp_sfp_locked_make(s, &m)) == MPI_SUCCESS)
            __atomic_store_n((amp_sfp_locked_t **)&s->state, m, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&amp_sfp_locked_making);
    }
    *out = m;
    return rc;
}

static int amp_sfp_locked_create(amp_sfp_t *s)
{
    s->state = NULL;
    return MPI_SUCCESS;
}

static void amp_sfp_locked_destroy(amp_sfp_t *s, int how)
{
    amp_sfp_locked_t *m = s->state;
    if (m && m->fd >= 0)
        close(m->fd);
    if (how == AMP_SFP_DESTROY_COLLECTIVE)
        PMPI_Barrier(s->comm); /* nobody uses the side file any more */
    char *name = m ? m->name : NULL;
    /* another rank may have made the side file where this one never used the pointer (a name
     * that cannot be made for want of memory leaves it behind) */
    if (s->rank == 0 && (name || amp_sfp_side_name(s, ".ptr", &name) == MPI_SUCCESS))
        unlink(name);
    if (!m) {
        free(name);
        return;
    }
    pthread_mutex_destroy(&m->mutex);
    free(m->block);
    free(m->name);
    free(m);
    s->state = NULL;
}

static int amp_sfp_locked_fcntl(int fd, short type)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 8};
    while (fcntl(fd, F_SETLKW, &fl) != 0)
        if (errno != EINTR)
            return amp_err_errno(errno, "cannot lock the shared file pointer side file");
    return MPI_SUCCESS;
}

/* Reads the pointer (0 when nobody wrote it yet); returns the bytes read or -1. */
static ssize_t amp_sfp_locked_read(amp_sfp_locked_t *m, MPI_Offset *value)
{
    MPI_Offset *from = m->block ? m->block : value;
    ssize_t got =
        amp_sfp_side_io(0, m->fd, from, m->block ? AMP_SFP_LOCKED_BLOCK : sizeof(*value), 0);
    *value = got >= (ssize_t)sizeof(*value) ? *from : 0;
    return got;
}

static int amp_sfp_locked_write(amp_sfp_locked_t *m, MPI_Offset value)
{
    if (!m->block)
        return amp_sfp_side_io(1, m->fd, &value, sizeof(value), 0) == (ssize_t)sizeof(value);
    m->block[0] = value;
    return amp_sfp_side_io(1, m->fd, m->block, AMP_SFP_LOCKED_BLOCK, 0) == AMP_SFP_LOCKED_BLOCK;
}

/* Runs one read-modify-write: value' = replace ? arg : value + arg. `create` says whether a
 * missing side file must be made (a pure read, or a write of 0, finds it unnecessary). */
static int amp_sfp_locked_update(amp_sfp_t *s, MPI_Offset arg, int replace, int create,
                                 MPI_Offset *before)
{
    amp_sfp_locked_t *m;
    *before = 0;
    int rc = amp_sfp_locked_state(s, &m);
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&m->mutex);
    if (m->fd < 0 && m->block && create)
        rc = amp_sfp_side_open_filled(m->name, O_DIRECT, m->block, AMP_SFP_LOCKED_BLOCK, &m->fd);
    else if (m->fd < 0)
        rc = amp_sfp_side_open(m->name, create ? AMP_SFP_SIDE_SHARE : AMP_SFP_SIDE_EXISTING,
                               m->block ? O_DIRECT : 0, &m->fd);
    if (rc != MPI_SUCCESS || m->fd < 0) {
        pthread_mutex_unlock(&m->mutex);
        return rc;
    }
    rc = amp_sfp_locked_fcntl(m->fd, F_WRLCK);
    if (rc == MPI_SUCCESS) {
        MPI_Offset value = 0;
        if (amp_sfp_locked_read(m, &value) < 0)
            rc = amp_err_errno(errno, "cannot read the shared file pointer side file");
        *before = value;
        MPI_Offset after = replace ? arg : value + arg;
        if (rc == MPI_SUCCESS && after != value && !amp_sfp_locked_write(m, after))
            rc = amp_err_errno(errno ? errno : EIO,
                               "cannot write the shared file pointer side file");
        amp_sfp_locked_fcntl(m->fd, F_UNLCK);
    }
    pthread_mutex_unlock(&m->mutex);
    return rc;
}

static int amp_sfp_locked_fetch_add(amp_sfp_t *s, MPI_Offset delta, MPI_Offset *before)
{
    return amp_sfp_locked_update(s, delta, 0, delta != 0, before);
}

static int amp_sfp_locked_get(amp_sfp_t *s, MPI_Offset *value)
{
    return amp_sfp_locked_update(s, 0, 0, 0, value);
}

static int amp_sfp_locked_set(amp_sfp_t *s, MPI_Offset value)
{
    MPI_Offset old;
    return amp_sfp_locked_update(s, value, 1, value != 0, &old);
}

const amp_sfp_ops_t amp_sfp_lockedfile_ops = {
    .name = "lockedfile",
    .create = amp_sfp_locked_create,
    .agreed = 1, /* create cannot fail */
    .destroy = amp_sfp_locked_destroy,
    .fetch_add = amp_sfp_locked_fetch_add,
    .get = amp_sfp_locked_get,
    .set = amp_sfp_locked_set,
};
