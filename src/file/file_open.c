/* Opening, closing and deleting files. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coll/coll.h"
#include "core/agree.h"
#include "core/err.h"
#include "core/fault.h"
#include "file/errh.h"
#include "file/fileops.h"
#include "file/handle.h"
#include "io/view.h"
#include "op/op.h"
#include "sharedfp/sfp.h"

const char *amp_file_strip_prefix(const char *path)
{
    static const char *prefixes[] = {"ufs:",   "nfs:",  "lustre:", "gpfs:", "pvfs2:", "xfs:",
                                     "panfs:", "daos:", "testfs:", "gfs:",  "ime:",   "bgl:"};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (strncmp(path, prefixes[i], strlen(prefixes[i])) == 0)
            return path + strlen(prefixes[i]);
    return path;
}

static int amp_file_check_amode(int amode)
{
    int rw = !!(amode & MPI_MODE_RDONLY) + !!(amode & MPI_MODE_RDWR) + !!(amode & MPI_MODE_WRONLY);
    int known = MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY | MPI_MODE_CREATE |
                MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN |
                MPI_MODE_SEQUENTIAL | MPI_MODE_APPEND;
    if (amode & ~known)
        return amp_err(MPI_ERR_AMODE, "access mode %#x has unknown bits %#x", amode,
                       amode & ~known);
    if (rw != 1)
        return amp_err(MPI_ERR_AMODE,
                       "access mode %#x must have exactly one of MPI_MODE_RDONLY, "
                       "MPI_MODE_RDWR and MPI_MODE_WRONLY",
                       amode);
    if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return amp_err(MPI_ERR_AMODE,
                       "MPI_MODE_CREATE and MPI_MODE_EXCL cannot be used with MPI_MODE_RDONLY");
    if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        return amp_err(MPI_ERR_AMODE, "MPI_MODE_SEQUENTIAL cannot be used with MPI_MODE_RDWR");
    return MPI_SUCCESS;
}

/* Opens the descriptor: write-only files are opened read-write when permitted, so that data
 * sieving can read around the data it writes. `extra`: flags of the file system provider. */
static int amp_file_open_fd(amp_file_t *f, int create, int excl, int extra)
{
    int flags = (create ? O_CREAT : 0) | extra;
    if (excl)
        flags |= O_EXCL;
    int perm = (int)amp_cfg_num(&f->cfg, AMP_CFG_FILE_PERM);
    if (f->amode & MPI_MODE_RDONLY) {
        f->readable = 1;
        return amp_fs_open(&f->fs, f->path, flags | O_RDONLY, perm);
    }
    if (f->amode & MPI_MODE_RDWR) {
        f->readable = 1;
        return amp_fs_open(&f->fs, f->path, flags | O_RDWR, perm);
    }
    int rc = amp_fs_open(&f->fs, f->path, flags | O_RDWR, perm);
    f->readable = rc == MPI_SUCCESS;
    if (rc != MPI_SUCCESS && amp_err_class(rc) == MPI_ERR_ACCESS)
        rc = amp_fs_open(&f->fs, f->path, (flags & ~O_EXCL) | O_WRONLY, perm);
    return rc;
}

/* Creates (or opens) the file on this rank; with striping hints, on a file system that takes a
 * layout, an exclusive create first tells whether this open made the file, and only such a new
 * file (or an empty one) gets the layout. */
static int amp_file_create(amp_file_t *f, int excl)
{
    int provider = amp_file_layout_setter(f);
    if (provider < 0)
        return amp_file_open_fd(f, 1, excl, 0);
    int rc = amp_file_open_fd(f, 1, 1, amp_fs_provider(provider)->create_flags);
    int created = rc == MPI_SUCCESS;
    if (!created && !excl && amp_err_class(rc) == MPI_ERR_FILE_EXISTS)
        rc = amp_file_open_fd(f, 1, 0, 0);
    if (rc == MPI_SUCCESS)
        amp_file_layout_apply(f, provider, created);
    return rc;
}

static void amp_file_destroy(amp_file_t *f)
{
    if (!f)
        return;
    amp_fs_close(&f->fs);
    if (f->view.ft)
        amp_view_free(&f->view);
    amp_coll_file_free(f);
    amp_op_file_free(f);
    amp_cfg_free(&f->cfg);
    if (f->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&f->comm);
    amp_errh_detach(&f->errh_holder);
    pthread_mutex_destroy(&f->lock);
    pthread_mutex_destroy(&f->fp_lock);
    amp_rangelock_destroy(&f->atomic_ranges);
    amp_rangelock_destroy(&f->io_ranges);
    free(f->sieve_buf);
    free(f->path);
    f->magic = 0;
    free(f);
}

/* One reduction: agrees on the local checks' outcome `rc`, and sets `*same` to whether `h` is
 * equal on every rank. */
static int amp_file_agree_checks(MPI_Comm comm, int rc, uint64_t h, int *same)
{
    uint64_t words[2] = {h, ~h};
    rc = amp_agree_or(comm, rc, words, 2);
    *same = rc == MPI_SUCCESS && amp_agree_or_same(words, h);
    return rc;
}

/* What must be equal on every rank: the access mode and the collective hints. */
static uint64_t amp_file_same_value(const amp_file_t *f, int rc)
{
    return rc == MPI_SUCCESS ? amp_cfg_coll_hash(&f->cfg) * 31 + (uint64_t)f->amode : 0;
}

static int amp_file_not_same(const amp_file_t *f)
{
    return amp_err(MPI_ERR_NOT_SAME,
                   "the access mode or the collective hints (cb_*, romio_*, striping_*, ampio_*) "
                   "passed to MPI_File_open for \"%s\" differ between ranks",
                   f->path);
}

/* The local checks agreed, and hints and access mode must agree across ranks: a mismatch is an
 * error on every rank. */
static int amp_file_check_same(amp_file_t *f, int rc)
{
    int same;
    rc = amp_file_agree_checks(f->comm, rc, amp_file_same_value(f, rc), &same);
    if (rc != MPI_SUCCESS)
        return rc;
    return same ? MPI_SUCCESS : amp_file_not_same(f);
}

/* Places the individual and shared pointers at the end of file (MPI_MODE_APPEND). */
static int amp_file_append_start(amp_file_t *f)
{
    MPI_Offset eof;
    int rc = amp_file_eof_etypes(f, &eof);
    if (rc != MPI_SUCCESS)
        return rc;
    f->fp = eof;
    if (f->rank == 0)
        rc = amp_sfp_set(f, eof);
    return rc;
}

int amp_file_open(MPI_Comm comm, const char *path, int amode, MPI_Info info, amp_file_t **out)
{
    *out = NULL;
    if (comm == MPI_COMM_NULL)
        return amp_err(MPI_ERR_COMM, "MPI_File_open needs a communicator, not MPI_COMM_NULL");
    int inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return amp_err(MPI_ERR_COMM, "MPI_File_open needs an intracommunicator");

    amp_file_t *f = amp_calloc(1, sizeof(*f));
    if (!f) { /* the others duplicate the communicator, then agree: take part, then fail */
        int rc = amp_err(MPI_ERR_NO_MEM, "out of memory opening a file");
        MPI_Comm dup = MPI_COMM_NULL;
        if (PMPI_Comm_dup(comm, &dup) == MPI_SUCCESS) {
            PMPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
            int same;
            amp_file_agree_checks(dup, rc, 0, &same);
            PMPI_Comm_free(&dup);
        }
        return rc;
    }
    f->magic = AMP_FILE_MAGIC;
    f->fs.fd = -1;
    f->comm = MPI_COMM_NULL;
    f->amode = amode;
    f->errhandler = amp_errh_default();
    f->errh_holder = MPI_COMM_NULL;
    pthread_mutex_init(&f->lock, NULL);
    pthread_mutex_init(&f->fp_lock, NULL);
    amp_rangelock_init(&f->atomic_ranges);
    amp_rangelock_init(&f->io_ranges);
    int rc = PMPI_Comm_dup(comm, &f->comm);
    if (rc != MPI_SUCCESS) {
        f->comm = MPI_COMM_NULL;
        amp_file_destroy(f);
        return rc;
    }
    rc = PMPI_Comm_set_errhandler(f->comm, MPI_ERRORS_RETURN);
    if (amp_errh_attach(&f->errh_holder, f->errhandler) != MPI_SUCCESS)
        f->errhandler = MPI_ERRORS_RETURN; /* no reference to hold: do not risk a freed one */
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_rank(f->comm, &f->rank);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_size(f->comm, &f->nprocs);

    /* local checks, then one agreement */
    if (rc != MPI_SUCCESS)
        ;
    else if (!path)
        rc = amp_err(MPI_ERR_BAD_FILE, "the file name is NULL");
    else if (!*amp_file_strip_prefix(path))
        rc = amp_err(MPI_ERR_BAD_FILE, "the file name is empty");
    else if (!(f->path = amp_strdup(amp_file_strip_prefix(path))))
        rc = amp_err(MPI_ERR_NO_MEM, "out of memory opening \"%s\"", path);
    if (rc == MPI_SUCCESS)
        rc = amp_file_check_amode(amode);
    if (rc == MPI_SUCCESS)
        rc = amp_cfg_load_for(&f->cfg, info, f->path);
    /* A file is made only once every rank's checks passed. An open that makes none agrees on
     * them in its one reduction below, which carries (same, ~same) in the same first words as
     * this one (amp_agree_or is of one size): ranks whose access modes differ, some creating
     * and some not, meet in either reduction and fail alike. */
    int create = !!(amode & MPI_MODE_CREATE), excl = !!(amode & MPI_MODE_EXCL);
    int checked_first = create && f->nprocs > 1;
    uint64_t same = checked_first ? 0 : amp_file_same_value(f, rc);
    if (checked_first && (rc = amp_file_check_same(f, rc)) != MPI_SUCCESS) {
        amp_file_destroy(f);
        return rc;
    }
    f->fs.path = f->path;

    if (rc != MPI_SUCCESS) {    /* the agreement below tells every rank */
    } else if (checked_first) { /* rank 0 creates, then the others open what exists */
        rc = f->rank == 0 ? amp_file_create(f, excl) : MPI_SUCCESS;
        rc = amp_agree(f->comm, rc);
        if (rc == MPI_SUCCESS && f->rank != 0)
            rc = amp_file_open_fd(f, 0, 0, 0);
    } else {
        rc = create ? amp_file_create(f, excl) : amp_file_open_fd(f, 0, 0, 0);
    }
    if (rc == MPI_SUCCESS && f->cfg.str[AMP_CFG_AMPIO_TRACE] && *f->cfg.str[AMP_CFG_AMPIO_TRACE])
        rc = amp_fs_trace_open(&f->fs, f->cfg.str[AMP_CFG_AMPIO_TRACE], f->rank);
    /* when set by hint; otherwise the node layout decides below (amp_coll_file_settle) */
    f->fs.max_write = (size_t)amp_cfg_num(&f->cfg, AMP_CFG_AMPIO_WRITE_CHUNK);
    if (rc == MPI_SUCCESS)
        rc = amp_view_default(&f->view);
    if (rc == MPI_SUCCESS)
        rc = amp_sfp_prepare(f);
    /* registered before the agreement: a rank that cannot register must not leave the others
     * in the collective steps after it */
    int registered = rc == MPI_SUCCESS && (rc = amp_handle_add(f)) == MPI_SUCCESS;
    int nodes_known = 0, crowded = 0;
    if (rc == MPI_SUCCESS)
        rc = amp_coll_file_prepare(f, &nodes_known, &crowded);
    /* one reduction: the agreement (with the checks, when not made first), rank 0's layout to
     * every rank, whether every rank knew the nodes and whether some node is crowded, and the
     * shared pointer's slot */
    enum {
        SAME,
        NOT_SAME,
        NODES_UNKNOWN,
        CROWDED,
        SFP_OFFER,
        WORDS = SFP_OFFER + AMP_SFP_OPEN_WORDS
    };
    uint64_t words[WORDS] = {[SAME] = same,
                             [NOT_SAME] = checked_first ? 0 : ~same,
                             [NODES_UNKNOWN] = !nodes_known,
                             [CROWDED] = crowded != 0};
    if (rc == MPI_SUCCESS)
        amp_sfp_open_offer(f, words + SFP_OFFER);
    rc = amp_file_layout_share(f, rc, words, WORDS);
    if (rc == MPI_SUCCESS && !checked_first && !amp_agree_or_same(words + SAME, same))
        rc = amp_file_not_same(f);
    if (rc == MPI_SUCCESS)
        amp_fs_set_stale_cache(&f->fs, !(f->layout.caps & AMP_FS_COHERENT));
    if (rc == MPI_SUCCESS)
        rc = amp_coll_file_settle(f, !words[NODES_UNKNOWN], words[CROWDED] != 0);
    if (rc == MPI_SUCCESS)
        rc = amp_sfp_open(f, words + SFP_OFFER);
    else if (f->sfp)
        amp_sfp_open_withdraw(f);
    if (rc == MPI_SUCCESS && (amode & MPI_MODE_APPEND))
        rc = amp_agree(f->comm, amp_file_append_start(f));
    if (rc == MPI_SUCCESS && (amode & MPI_MODE_APPEND))
        rc = PMPI_Barrier(f->comm); /* the shared pointer is set before anyone moves it */
    if (rc != MPI_SUCCESS) {
        if (registered)
            amp_handle_remove(f);
        if (f->sfp)
            amp_sfp_close(f);
        amp_file_destroy(f);
        return rc;
    }
    amp_cfg_explain_notes(&f->cfg, f->rank, f->path);
    *out = f;
    return MPI_SUCCESS;
}

int amp_file_close(amp_file_t *f)
{
    amp_op_drain(f, 0); /* pending accesses complete first; each reports at its own wait */
    amp_coll_stats_report(f);
    amp_handle_remove(f);
    int src = amp_sfp_close_sync(f); /* may still write deferred data into the file */
    int rc = amp_fs_close(&f->fs);
    if (rc == MPI_SUCCESS)
        rc = src;
    rc = amp_agree(f->comm, rc);
    amp_sfp_close_free(f); /* after the agreement: nobody uses the pointer any more */
    if ((f->amode & MPI_MODE_DELETE_ON_CLOSE) && f->rank == 0 && unlink(f->path) != 0 &&
        errno != ENOENT && rc == MPI_SUCCESS)
        rc = amp_err_errno(errno, "cannot delete \"%s\" on close", f->path);
    if (f->amode & MPI_MODE_DELETE_ON_CLOSE)
        rc = amp_agree(f->comm, rc);
    amp_file_destroy(f);
    return rc;
}

void amp_file_reap(amp_file_t *f)
{
    amp_op_drain(f, 0);
    amp_handle_remove(f);
    if (f->amode & MPI_MODE_DELETE_ON_CLOSE && f->rank == 0)
        unlink(f->path);
    amp_sfp_reap(f); /* windows are collective to free: MPI_Finalize reclaims them */
    amp_file_destroy(f);
}

static int amp_file_same_inode(amp_file_t *f, void *ctx)
{
    const struct stat *want = ctx;
    struct stat st;
    return fstat(f->fs.fd, &st) == 0 && st.st_dev == want->st_dev && st.st_ino == want->st_ino;
}

int amp_file_delete(const char *path, MPI_Info info)
{
    (void)info;
    if (!path || !*amp_file_strip_prefix(path))
        return amp_err(MPI_ERR_BAD_FILE, "the file name to delete is NULL or empty");
    const char *name = amp_file_strip_prefix(path);
    struct stat st;
    if (stat(name, &st) == 0 && amp_handle_find(amp_file_same_inode, &st))
        return amp_err(MPI_ERR_FILE_IN_USE, "\"%s\" is open in this process", name);
    amp_sfp_delete_side_files(name);
    if (unlink(name) != 0)
        return amp_err_errno(errno, "cannot delete \"%s\"", name);
    return MPI_SUCCESS;
}
