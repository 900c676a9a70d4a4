/* Any other file system: no striping of its own, so no layout to read or set; the layout in use
 * is what the striping hints say, else the file system block (amp_fs_layout_of). */
#include <errno.h>

#include "fs/fs_layout.h"

static int amp_generic_recognise(const amp_fs_sys_t *sys, const char *dir)
{
    return 1;
}

static int amp_generic_get(const amp_fs_sys_t *sys, int fd, amp_fs_layout_t *out)
{
    return ENOTSUP;
}

static int amp_generic_set(const amp_fs_sys_t *sys, int fd, const amp_fs_layout_t *want)
{
    return ENOTSUP;
}

const amp_fs_provider_t amp_fs_generic = {
    .name = "generic",
    .caps = AMP_FS_LOCKED_RMW | AMP_FS_COHERENT,
    .create_flags = 0,
    .recognise = amp_generic_recognise,
    .get = amp_generic_get,
    .set = amp_generic_set,
};
