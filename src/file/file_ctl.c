/* File control: size, synchronisation, hints, atomicity, views and file pointers. */
#include <string.h>

#include "coll/coll.h"
#include "core/agree.h"
#include "core/err.h"
#include "file/fileops.h"
#include "op/op.h"
#include "io/datarep.h"
#include "io/view.h"
#include "sharedfp/sfp.h"

/* Checks that `value` is the same on every rank of a collective call, and learns in the same
 * reduction whether `flag` is true on some rank. */
static int amp_file_same_any(amp_file_t *f, uint64_t value, int flag, int *any, const char *routine,
                             const char *what)
{
    int same;
    int rc = amp_agree_same_any(f->comm, value, flag, &same, any);
    if (rc == MPI_SUCCESS && !same)
        rc = amp_err(MPI_ERR_NOT_SAME, "%s on \"%s\": %s differs between ranks", routine, f->path,
                     what);
    return rc;
}

static int amp_file_same(amp_file_t *f, uint64_t value, const char *routine, const char *what)
{
    int any;
    return amp_file_same_any(f, value, 0, &any, routine, what);
}

static int amp_file_writable(amp_file_t *f, const char *routine)
{
    if (f->amode & MPI_MODE_RDONLY)
        return amp_err(MPI_ERR_READ_ONLY, "%s: \"%s\" was opened MPI_MODE_RDONLY", routine,
                       f->path);
    return MPI_SUCCESS;
}

static int amp_file_resize(amp_file_t *f, MPI_Offset size, int allocate, const char *routine)
{
    int rc = MPI_SUCCESS;
    if (size < 0)
        rc = amp_err(MPI_ERR_ARG, "%s: size %lld is negative", routine, (long long)size);
    else if (f->amode & MPI_MODE_SEQUENTIAL)
        rc = amp_err(MPI_ERR_UNSUPPORTED_OPERATION, "%s: \"%s\" was opened MPI_MODE_SEQUENTIAL",
                     routine, f->path);
    else
        rc = amp_file_writable(f, routine);
    rc = amp_agree(f->comm, rc);
    if (rc == MPI_SUCCESS)
        rc = amp_file_same(f, (uint64_t)size, routine, "the size");
    if (rc != MPI_SUCCESS)
        return rc;
    if (f->rank == 0)
        rc = allocate ? amp_fs_allocate(&f->fs, size) : amp_fs_truncate(&f->fs, size);
    return amp_agree(f->comm, rc);
}

int amp_file_set_size(amp_file_t *f, MPI_Offset size)
{
    amp_op_drain(f, 0);
    return amp_file_resize(f, size, 0, "MPI_File_set_size");
}

int amp_file_preallocate(amp_file_t *f, MPI_Offset size)
{
    amp_op_drain(f, 0);
    return amp_file_resize(f, size, 1, "MPI_File_preallocate");
}

int amp_file_get_size(amp_file_t *f, MPI_Offset *size)
{
    return amp_fs_size(&f->fs, size);
}

int amp_file_sync(amp_file_t *f)
{
    amp_op_drain(f, 0);
    int rc = amp_sfp_sync(f); /* deferred shared pointer writes reach the file first */
    int frc = amp_fs_sync(&f->fs);
    if (rc == MPI_SUCCESS)
        rc = frc;
    return amp_agree(f->comm, rc);
}

/* Hints of set_info and set_view are applied to a copy, and take effect only when every rank
 * accepted them and the collective ones agree: a rank must never be left with other values. */
static int amp_file_try_hints(amp_file_t *f, MPI_Info info, int rc, amp_cfg_t *next)
{
    int crc = amp_cfg_copy(next, &f->cfg);
    if (crc == MPI_SUCCESS)
        crc = amp_cfg_update(next, info);
    if (rc == MPI_SUCCESS)
        rc = crc;
    return rc;
}

static void amp_file_commit_hints(amp_file_t *f, amp_cfg_t *next, int rc)
{
    if (rc == MPI_SUCCESS) {
        amp_cfg_free(&f->cfg);
        f->cfg = *next;
        amp_cfg_explain_notes(&f->cfg, f->rank, f->path);
    } else {
        amp_cfg_free(next);
    }
}

int amp_file_set_info(amp_file_t *f, MPI_Info info)
{
    amp_cfg_t next;
    memset(&next, 0, sizeof(next));
    int rc = amp_file_try_hints(f, info, MPI_SUCCESS, &next);
    rc = amp_agree(f->comm, rc);
    if (rc == MPI_SUCCESS)
        rc = amp_file_same(f, amp_cfg_coll_hash(&next), "MPI_File_set_info", "a collective hint");
    amp_file_commit_hints(f, &next, rc);
    return rc;
}

int amp_file_get_info(amp_file_t *f, MPI_Info *info)
{
    int rc = PMPI_Info_create(info);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = amp_cfg_to_info(&f->cfg, *info);
    if (rc == MPI_SUCCESS) /* the layout the file has, not the one the hints asked for */
        rc = amp_file_layout_info(f, *info);
    if (rc == MPI_SUCCESS)
        rc = amp_coll_info(f, *info);
    if (rc == MPI_SUCCESS && f->sfp)
        rc = PMPI_Info_set(*info, "ampio_sharedfp_method", amp_sfp_method(f));
    if (rc != MPI_SUCCESS)
        PMPI_Info_free(info);
    return rc;
}

int amp_file_set_atomicity(amp_file_t *f, int flag)
{
    amp_op_drain(f, 0);
    int rc = amp_file_same(f, flag != 0, "MPI_File_set_atomicity", "the flag");
    if (rc == MPI_SUCCESS)
        __atomic_store_n(&f->atomic, flag != 0, __ATOMIC_RELEASE);
    return rc;
}

int amp_file_eof_etypes(amp_file_t *f, MPI_Offset *eof)
{
    MPI_Offset size;
    int rc = amp_fs_size(&f->fs, &size);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Count bytes = amp_view_bytes_before(&f->view, size);
    *eof = (MPI_Offset)((bytes + f->view.esize - 1) / f->view.esize);
    return MPI_SUCCESS;
}

static uint64_t amp_hash_text(const char *s, uint64_t h)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

int amp_file_set_view(amp_file_t *f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, MPI_Info info)
{
    amp_op_drain(f, 0);
    int rc = amp_sfp_sync(f); /* deferred shared pointer writes belong to the old view */
    if (rc == MPI_SUCCESS && disp == MPI_DISPLACEMENT_CURRENT) {
        if (!(f->amode & MPI_MODE_SEQUENTIAL)) {
            rc = amp_err(MPI_ERR_ARG, "MPI_DISPLACEMENT_CURRENT needs a file opened "
                                      "MPI_MODE_SEQUENTIAL");
        } else {
            MPI_Offset shared = 0;
            rc = amp_sfp_get(f, &shared);
            if (rc == MPI_SUCCESS)
                rc = amp_view_etype_offset(&f->view, shared, &disp, "MPI_File_set_view");
        }
    }
    amp_view_t view;
    memset(&view, 0, sizeof(view));
    int writable = !(f->amode & MPI_MODE_RDONLY);
    if (rc == MPI_SUCCESS)
        rc = amp_view_build(&view, disp, etype, filetype, datarep, writable);
    amp_cfg_t next;
    memset(&next, 0, sizeof(next));
    rc = amp_file_try_hints(f, info, rc, &next);
    /* one reduction: the outcome, the same representation, etype size and hints everywhere,
     * whether some rank's view has holes, and whether some rank moved the shared pointer */
    uint64_t h = rc == MPI_SUCCESS
                     ? amp_hash_text(datarep, (uint64_t)view.esize) * 31 + amp_cfg_coll_hash(&next)
                     : 0;
    enum { HOLES = 1, MOVED = 2 };
    uint64_t words[3] = {h, ~h,
                         (rc == MPI_SUCCESS && amp_view_has_holes(&view) ? HOLES : 0) |
                             (amp_sfp_moved(f) ? MOVED : 0)};
    rc = amp_agree_or(f->comm, rc, words, 3);
    if (rc == MPI_SUCCESS && !amp_agree_or_same(words, h))
        rc = amp_err(MPI_ERR_NOT_SAME,
                     "MPI_File_set_view on \"%s\": the data representation, the etype size or a "
                     "collective hint differs between ranks",
                     f->path);
    int holes = (words[2] & HOLES) != 0, moved = (words[2] & MOVED) != 0;
    amp_file_commit_hints(f, &next, rc);
    if (rc != MPI_SUCCESS) {
        if (view.ft)
            amp_view_free(&view);
        return rc;
    }
    amp_view_free(&f->view);
    f->view = view;
    f->view_holes = holes;
    pthread_mutex_lock(&f->fp_lock);
    f->fp = 0;
    pthread_mutex_unlock(&f->fp_lock);
    if (!moved)
        return MPI_SUCCESS; /* the shared pointer is at 0 already: nothing to reset or order */
    rc = amp_sfp_reset(f, moved);
    return amp_agree(f->comm, rc); /* also orders the reset before any later shared access */
}

static int amp_file_return_type(MPI_Datatype held, MPI_Datatype *out)
{
    int ni, na, nd, combiner;
    PMPI_Type_get_envelope(held, &ni, &na, &nd, &combiner);
    if (combiner == MPI_COMBINER_NAMED) {
        *out = held;
        return MPI_SUCCESS;
    }
    return PMPI_Type_dup(held, out);
}

int amp_file_get_view(amp_file_t *f, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                      char *datarep)
{
    int rc = amp_file_return_type(f->view.etype, etype);
    if (rc == MPI_SUCCESS)
        rc = amp_file_return_type(f->view.filetype, filetype);
    if (rc != MPI_SUCCESS)
        return rc;
    *disp = f->view.disp;
    strcpy(datarep, f->view.datarep);
    return MPI_SUCCESS;
}

/* The new pointer value for a seek, or an error. */
static int amp_file_seek_target(amp_file_t *f, MPI_Offset current, MPI_Offset offset, int whence,
                                const char *routine, MPI_Offset *target)
{
    MPI_Offset base;
    if (whence == MPI_SEEK_SET) {
        base = 0;
    } else if (whence == MPI_SEEK_CUR) {
        base = current;
    } else if (whence == MPI_SEEK_END) {
        int rc = amp_file_eof_etypes(f, &base);
        if (rc != MPI_SUCCESS)
            return rc;
    } else {
        return amp_err(MPI_ERR_ARG,
                       "%s: whence %d is not MPI_SEEK_SET, MPI_SEEK_CUR or "
                       "MPI_SEEK_END",
                       routine, whence);
    }
    MPI_Offset to = 0;
    if (__builtin_add_overflow(base, offset, &to))
        return amp_err(MPI_ERR_ARG, "%s: %lld + %lld etypes overflows", routine, (long long)base,
                       (long long)offset);
    if (to < 0)
        return amp_err(MPI_ERR_ARG, "%s: the new position %lld is before the start of the view",
                       routine, (long long)to);
    *target = to; /* an access from a position past the largest offset fails (amp_view_range) */
    return MPI_SUCCESS;
}

int amp_file_seek(amp_file_t *f, MPI_Offset offset, int whence)
{
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return amp_err(MPI_ERR_UNSUPPORTED_OPERATION,
                       "MPI_File_seek: \"%s\" was opened MPI_MODE_SEQUENTIAL", f->path);
    pthread_mutex_lock(&f->fp_lock);
    MPI_Offset target;
    int rc = amp_file_seek_target(f, f->fp, offset, whence, "MPI_File_seek", &target);
    if (rc == MPI_SUCCESS)
        f->fp = target;
    pthread_mutex_unlock(&f->fp_lock);
    return rc;
}

int amp_file_seek_shared(amp_file_t *f, MPI_Offset offset, int whence)
{
    int rc = amp_sfp_sync(f); /* deferred shared pointer writes take their place first */
    if (rc == MPI_SUCCESS) {  /* both compared as they are: no hash of the two can collide */
        uint64_t args[2] = {(uint64_t)offset, (uint64_t)(int64_t)whence};
        int same = 0;
        rc = amp_agree_same_n(f->comm, args, 2, &same);
        if (rc == MPI_SUCCESS && !same)
            rc = amp_err(MPI_ERR_NOT_SAME,
                         "MPI_File_seek_shared on \"%s\": the offset or whence differs between "
                         "ranks",
                         f->path);
    }
    if (rc != MPI_SUCCESS)
        return rc;
    if (f->rank == 0) {
        MPI_Offset current = 0, target = 0;
        rc = amp_sfp_get(f, &current);
        if (rc == MPI_SUCCESS)
            rc = amp_file_seek_target(f, current, offset, whence, "MPI_File_seek_shared", &target);
        if (rc == MPI_SUCCESS)
            rc = amp_sfp_set(f, target);
    }
    return amp_agree(f->comm, rc);
}

int amp_file_get_position_shared(amp_file_t *f, MPI_Offset *offset)
{
    return amp_sfp_get(f, offset);
}

int amp_file_get_byte_offset(amp_file_t *f, MPI_Offset offset, MPI_Offset *disp)
{
    if (offset < 0)
        return amp_err(MPI_ERR_ARG, "MPI_File_get_byte_offset: offset %lld is negative",
                       (long long)offset);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return amp_err(MPI_ERR_UNSUPPORTED_OPERATION,
                       "MPI_File_get_byte_offset: \"%s\" was opened MPI_MODE_SEQUENTIAL", f->path);
    return amp_view_etype_offset(&f->view, offset, disp, "MPI_File_get_byte_offset");
}
