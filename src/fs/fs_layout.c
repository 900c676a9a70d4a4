/* The provider table, the choice of a provider for a path and the layout of an open file. */
#include "fs/fs_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "core/mount.h"

static int amp_fs_real_ioctl(int fd, unsigned long request, void *arg)
{
    return ioctl(fd, request, arg);
}

const amp_fs_sys_t amp_fs_sys_real = {
    .open = open,
    .ioctl = amp_fs_real_ioctl,
    .fgetxattr = fgetxattr,
    .getxattr = getxattr,
    .fsetxattr = fsetxattr,
    .statfs = statfs,
    .fstatfs = fstatfs,
};

const amp_fs_sys_t *amp_fs_sys = &amp_fs_sys_real;

/* Striping file systems first; the generic provider recognises everything. */
static const amp_fs_provider_t *const amp_fs_providers[] = {&amp_fs_lustre, &amp_fs_cephfs,
                                                            &amp_fs_generic};
enum { AMP_FS_NPROVIDERS = sizeof(amp_fs_providers) / sizeof(amp_fs_providers[0]) };

const amp_fs_provider_t *amp_fs_provider(int index)
{
    if (index < 0 || index >= AMP_FS_NPROVIDERS)
        index = AMP_FS_NPROVIDERS - 1;
    return amp_fs_providers[index];
}

/* The provider that recognised each file system met so far, by device. A directory's file system
 * does not change, and recognising one costs a statfs or an extended attribute at every open:
 * on CephFS through ceph-fuse a metadata server's answer, 1-12 ms on the emulated cluster, on
 * the rank every other waits for in the open's agreement. Not kept for test doubles. */
enum { AMP_FS_KNOWN = 16 };
typedef struct {
    dev_t dev;
    int provider;
} amp_fs_known_t;
static amp_fs_known_t amp_fs_known[AMP_FS_KNOWN];
static int amp_fs_nknown;
static pthread_mutex_t amp_fs_known_lock = PTHREAD_MUTEX_INITIALIZER;

/* The provider kept for `dev`, or -1. */
static int amp_fs_known_provider(dev_t dev)
{
    int found = -1;
    pthread_mutex_lock(&amp_fs_known_lock);
    for (int i = 0; i < amp_fs_nknown && found < 0; i++)
        if (amp_fs_known[i].dev == dev)
            found = amp_fs_known[i].provider;
    pthread_mutex_unlock(&amp_fs_known_lock);
    return found;
}

static void amp_fs_know(dev_t dev, int provider)
{
    pthread_mutex_lock(&amp_fs_known_lock);
    if (amp_fs_nknown < AMP_FS_KNOWN)
        amp_fs_known[amp_fs_nknown++] = (amp_fs_known_t){dev, provider};
    pthread_mutex_unlock(&amp_fs_known_lock);
}

int amp_fs_select(const char *path, unsigned need)
{
    char dir[PATH_MAX];
    amp_mount_dir_of(path, dir, sizeof(dir));
    struct stat st;
    int keep = amp_fs_sys == &amp_fs_sys_real && stat(dir, &st) == 0;
    int known = keep ? amp_fs_known_provider(st.st_dev) : -1;
    if (known < 0) { /* the first provider that recognises it: one at most but the generic */
        known = AMP_FS_NPROVIDERS - 1;
        for (int i = 0; i < AMP_FS_NPROVIDERS - 1 && known == AMP_FS_NPROVIDERS - 1; i++)
            if (amp_fs_providers[i]->recognise(amp_fs_sys, dir))
                known = i;
        if (keep)
            amp_fs_know(st.st_dev, known);
    }
    return (amp_fs_providers[known]->caps & need) == need ? known : AMP_FS_NPROVIDERS - 1;
}

void amp_fs_layout_of(int index, int fd, const amp_fs_want_t *want, int64_t block,
                      amp_fs_layout_t *out)
{
    const amp_fs_provider_t *p = amp_fs_provider(index);
    memset(out, 0, sizeof(*out));
    out->start = -1;
    if ((p->caps & AMP_FS_CAN_GET) && p->get(amp_fs_sys, fd, out) == 0 && out->unit > 0 &&
        out->count > 0) {
        out->provider = index;
        out->source = AMP_LAYOUT_FS;
        out->caps = (int32_t)p->caps;
        return;
    }
    /* nothing to read: the hints' striping where the file system has none of its own */
    memset(out, 0, sizeof(*out));
    out->start = -1;
    out->caps = (int32_t)p->caps;
    out->provider = AMP_FS_NPROVIDERS - 1;
    int hinted = !(p->caps & AMP_FS_CAN_GET) && (want->unit > 0 || want->count > 0);
    out->source = hinted ? AMP_LAYOUT_HINTS : AMP_LAYOUT_BLOCK;
    out->unit = hinted && want->unit > 0 ? want->unit : block > 0 ? block : 4096;
    out->count = hinted && want->count > 0 ? want->count : 1;
}

int amp_fs_layout_describe(const amp_fs_layout_t *l, char *text, size_t len)
{
    static const char *sources[] = {"block size", "hints", NULL};
    const char *from =
        l->source == AMP_LAYOUT_FS ? amp_fs_provider(l->provider)->name : sources[l->source];
    int n = snprintf(text, len, "%s %lldx%lld", from, (long long)l->unit, (long long)l->count);
    if (l->object_size > 0 && n >= 0 && (size_t)n < len)
        n += snprintf(text + n, len - (size_t)n, " object %lld", (long long)l->object_size);
    if (l->start >= 0 && n >= 0 && (size_t)n < len)
        n += snprintf(text + n, len - (size_t)n, " start %lld", (long long)l->start);
    return n;
}
