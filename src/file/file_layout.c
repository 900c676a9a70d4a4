/* The layout of a file: the striping hints set it on a file MPI_File_open creates, where the file
 * system has striping (fs/fs_layout.h); rank 0 then reads the layout the file really has and
 * every rank takes it from there, so that plans agree; get_info, AMPIO_EXPLAIN and ampio-info
 * report it, and what became of the hints. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/agree.h"
#include "core/err.h"
#include "coll/coll.h"
#include "file/fileops.h"

amp_fs_want_t amp_file_want(const amp_cfg_t *cfg)
{
    amp_fs_want_t w = {
        .unit = amp_cfg_num(cfg, AMP_CFG_STRIPING_UNIT),
        .count = amp_cfg_num(cfg, AMP_CFG_STRIPING_FACTOR),
        .object_size = amp_cfg_num(cfg, AMP_CFG_AMPIO_OBJECT_SIZE),
        .start = amp_cfg_num(cfg, AMP_CFG_START_IODEVICE),
    };
    return w;
}

static int amp_file_wants(const amp_fs_want_t *w)
{
    return w->unit > 0 || w->count > 0 || w->object_size > 0 || w->start >= 0;
}

int amp_file_layout_setter(amp_file_t *f)
{
    amp_fs_want_t want = amp_file_want(&f->cfg);
    if (!amp_file_wants(&want))
        return -1;
    int p = amp_fs_select(f->path, AMP_FS_CAN_SET);
    return amp_fs_provider(p)->caps & AMP_FS_CAN_SET ? p : -1;
}

void amp_file_layout_apply(amp_file_t *f, int provider, int created)
{
    amp_fs_want_t want = amp_file_want(&f->cfg);
    amp_fs_layout_t req = {.unit = want.unit,
                           .count = want.count,
                           .object_size = want.object_size,
                           .start = want.start};
    struct stat st;
    /* a file that existed keeps its layout, unless it is empty (CephFS takes one then) */
    if (!created && (fstat(f->fs.fd, &st) != 0 || st.st_size > 0)) {
        f->layout.hints = AMP_HINTS_EXISTING;
        return;
    }
    int e = amp_fs_provider(provider)->set(amp_fs_sys, f->fs.fd, &req);
    f->layout.hints = e == 0 ? AMP_HINTS_APPLIED : created ? AMP_HINTS_REFUSED : AMP_HINTS_EXISTING;
    f->layout.hints_errno = e;
}

int amp_file_layout_share(amp_file_t *f, int rc, uint64_t *extra, int nextra)
{
    enum { LAYOUT = (sizeof(amp_fs_layout_t) + sizeof(uint64_t) - 1) / sizeof(uint64_t) };
    if (LAYOUT + nextra > AMP_AGREE_OR_WORDS)
        return amp_agree(f->comm, amp_err(MPI_ERR_INTERN, "too many words for the open"));
    /* the extras first, so that a word keeps its place whatever the layout's size; the others
     * pass zeros in the layout: the or is rank 0's */
    uint64_t words[AMP_AGREE_OR_WORDS] = {0};
    memcpy(words, extra, (size_t)nextra * sizeof(*extra));
    if (f->rank == 0) {
        amp_fs_want_t want = amp_file_want(&f->cfg);
        int hints = f->layout.hints, err = f->layout.hints_errno;
        struct stat st;
        int64_t block = rc == MPI_SUCCESS && fstat(f->fs.fd, &st) == 0 ? st.st_blksize : 4096;
        int p = rc == MPI_SUCCESS ? amp_fs_select(f->path, AMP_FS_CAN_GET) : -1;
        amp_fs_layout_of(p, rc == MPI_SUCCESS ? f->fs.fd : -1, &want, block, &f->layout);
        if (!amp_file_wants(&want))
            hints = AMP_HINTS_NONE;
        else if (f->layout.source == AMP_LAYOUT_HINTS)
            hints = AMP_HINTS_PLANNING;
        else if (hints == AMP_HINTS_NONE) /* not created by this open */
            hints = AMP_HINTS_EXISTING;
        f->layout.hints = hints;
        f->layout.hints_errno = err;
        memcpy(words + nextra, &f->layout, sizeof(f->layout));
    }
    rc = amp_agree_or(f->comm, rc, words, LAYOUT + nextra);
    if (rc == MPI_SUCCESS) {
        memcpy(&f->layout, words + nextra, sizeof(f->layout));
        memcpy(extra, words, (size_t)nextra * sizeof(*extra));
    }
    return rc;
}

const char *amp_file_layout_hints_text(const amp_fs_layout_t *l, char *text, size_t len)
{
    switch (l->hints) {
    case AMP_HINTS_APPLIED:
        return "set on the new file";
    case AMP_HINTS_EXISTING:
        return "not applied: the file existed with data or was not created by this open";
    case AMP_HINTS_REFUSED:
        snprintf(text, len, "refused by the file system: %s", strerror(l->hints_errno));
        return text;
    case AMP_HINTS_PLANNING:
        return "the file system has no striping: used to plan collective access";
    default:
        return NULL;
    }
}

static int amp_file_info_num(MPI_Info info, const char *key, long long value)
{
    char text[32];
    snprintf(text, sizeof(text), "%lld", value);
    return PMPI_Info_set(info, key, text);
}

/* Deletes `key` if present (MPI_Info_delete fails on a missing key). */
static int amp_file_info_drop(MPI_Info info, const char *key)
{
    int len = 0, flag = 0;
    PMPI_Info_get_valuelen(info, key, &len, &flag);
    return flag ? PMPI_Info_delete(info, key) : MPI_SUCCESS;
}

int amp_file_layout_info(const amp_file_t *f, MPI_Info info)
{
    const amp_fs_layout_t *l = &f->layout;
    char text[256];
    int rc = amp_file_info_num(info, "striping_unit", (long long)l->unit);
    if (rc == MPI_SUCCESS)
        rc = amp_file_info_num(info, "striping_factor", (long long)l->count);
    if (rc == MPI_SUCCESS)
        rc = l->start >= 0 ? amp_file_info_num(info, "start_iodevice", (long long)l->start)
                           : amp_file_info_drop(info, "start_iodevice");
    if (rc == MPI_SUCCESS)
        rc = l->object_size > 0 ? amp_file_info_num(info, "ampio_object_size", l->object_size)
                                : amp_file_info_drop(info, "ampio_object_size");
    if (rc == MPI_SUCCESS) {
        amp_fs_layout_describe(l, text, sizeof(text));
        rc = PMPI_Info_set(info, "ampio_layout", text);
    }
    const char *hints = amp_file_layout_hints_text(l, text, sizeof(text));
    if (rc == MPI_SUCCESS && hints)
        rc = PMPI_Info_set(info, "ampio_striping_hints", hints);
    if (rc == MPI_SUCCESS)
        rc = amp_file_info_num(info, "cb_buffer_size",
                               (long long)amp_coll_cycle_buffer(&f->cfg, &f->layout));
    return rc;
}
