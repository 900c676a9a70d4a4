/* CephFS: the layout lives in virtual extended attributes, "ceph.file.layout" (all fields as
 * "stripe_unit=4194304 stripe_count=1 object_size=4194304 pool=...") and one attribute per field.
 * It is recognised by them: through ceph-fuse, statfs says FUSE. A new, empty file takes a
 * layout in one call setting the whole attribute; field by field fails (EINVAL) as soon as an
 * intermediate layout is invalid, such as an object size that is not a multiple of the unit. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/fs_layout.h"

#define AMP_CEPH_SUPER_MAGIC 0x00c36400 /* the kernel client's statfs f_type */

static int amp_cephfs_recognise(const amp_fs_sys_t *sys, const char *dir)
{
    char value[64];
    struct statfs sf;
    if (sys->statfs(dir, &sf) == 0 && (uint32_t)sf.f_type == AMP_CEPH_SUPER_MAGIC)
        return 1;
    return sys->getxattr(dir, "ceph.dir.entries", value, sizeof(value)) >= 0;
}

/* "key=value" of a layout text, or -1. */
static long long amp_cephfs_field(const char *text, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = text; (p = strstr(p, key)) != NULL; p += n)
        if ((p == text || p[-1] == ' ') && p[n] == '=')
            return strtoll(p + n + 1, NULL, 10);
    return -1;
}

static long long amp_cephfs_attr(const amp_fs_sys_t *sys, int fd, const char *name)
{
    char value[64];
    ssize_t n = sys->fgetxattr(fd, name, value, sizeof(value) - 1);
    if (n <= 0)
        return -1;
    value[n] = '\0';
    return strtoll(value, NULL, 10);
}

static int amp_cephfs_get(const amp_fs_sys_t *sys, int fd, amp_fs_layout_t *out)
{
    char text[512];
    long long unit = -1, count = -1, object = -1;
    ssize_t n = sys->fgetxattr(fd, "ceph.file.layout", text, sizeof(text) - 1);
    if (n > 0) {
        text[n] = '\0';
        unit = amp_cephfs_field(text, "stripe_unit");
        count = amp_cephfs_field(text, "stripe_count");
        object = amp_cephfs_field(text, "object_size");
    } else {
        unit = amp_cephfs_attr(sys, fd, "ceph.file.layout.stripe_unit");
        count = amp_cephfs_attr(sys, fd, "ceph.file.layout.stripe_count");
        object = amp_cephfs_attr(sys, fd, "ceph.file.layout.object_size");
    }
    if (unit <= 0 || count <= 0 || object <= 0)
        return n < 0 ? errno : ENODATA;
    out->unit = unit;
    out->count = count;
    out->object_size = object;
    out->start = -1;
    return 0;
}

static int amp_cephfs_set(const amp_fs_sys_t *sys, int fd, const amp_fs_layout_t *want)
{
    amp_fs_layout_t now;
    int rc = amp_cephfs_get(sys, fd, &now); /* the fields the hints leave alone */
    if (rc != 0)
        return rc;
    long long unit = want->unit > 0 ? want->unit : now.unit;
    long long count = want->count > 0 ? want->count : now.count;
    long long object = want->object_size;
    if (object <= 0) /* the file system's object size, made a multiple of the unit */
        object = (now.object_size + unit - 1) / unit * unit;
    char text[256];
    int len = snprintf(text, sizeof(text), "stripe_unit=%lld stripe_count=%lld object_size=%lld",
                       unit, count, object);
    return sys->fsetxattr(fd, "ceph.file.layout", text, (size_t)len, 0) == 0 ? 0 : errno;
}

const amp_fs_provider_t amp_fs_cephfs = {
    .name = "cephfs",
    .caps = AMP_FS_CAN_GET | AMP_FS_CAN_SET,
    .create_flags = 0,
    .recognise = amp_cephfs_recognise,
    .get = amp_cephfs_get,
    .set = amp_cephfs_set,
};
