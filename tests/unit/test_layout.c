/* The file system providers, against test doubles of the system calls: Lustre cannot run here,
 * and the cluster's CephFS is not always up. Checks the Lustre ioctl encoding byte by byte against
 * lustre_user.h (hand-computed), the decoding of plain and composite layouts, the CephFS layout
 * attributes (set in one call), the choice of a provider, and MPI_File_open: striping hints set
 * the layout of a file it creates (O_LOV_DELAY_CREATE, then SETSTRIPE; or the attribute), never
 * that of an existing file with data, and get_info reports the layout the file really has. */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "file/fileops.h"
#include "fs/fs_layout.h"
#include "unit.h"

/* ---- the doubles: an emulated Lustre or CephFS under one directory ---- */

#define SETSTRIPE 0x4008669aUL /* _IOW('f', 154, long) on LP64: dir 1, size 8, type 'f' */
#define GETSTRIPE 0x4008669bUL /* _IOW('f', 155, long) */
#define DELAY     (0100000000 | O_NOCTTY | FASYNC)

enum { NONE, LUSTRE, CEPH };
static int fake_kind;
static char fake_dir[4096];

typedef struct {
    ino_t ino;
    long long unit, count, start, object;
} fake_layout_t;
static fake_layout_t fake_files[64];
static int fake_nfiles;

static int last_open_flags, opens_with_delay, setstripes, ceph_sets;
static unsigned char last_lum[64];
static const unsigned char *reply; /* GETSTRIPE answers these bytes when set */
static size_t reply_len;

static int under(const char *path)
{
    return strncmp(path, fake_dir, strlen(fake_dir)) == 0;
}

static fake_layout_t *fake_find(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return NULL;
    for (int i = 0; i < fake_nfiles; i++)
        if (fake_files[i].ino == st.st_ino)
            return &fake_files[i];
    fake_layout_t *l = &fake_files[fake_nfiles++];
    memset(l, 0, sizeof(*l));
    l->ino = st.st_ino;
    return l;
}

static int fake_open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = va_arg(ap, int);
    va_end(ap);
    last_open_flags = flags;
    if ((flags & DELAY) == DELAY)
        opens_with_delay++;
    return open(path, flags & ~DELAY, mode);
}

static int fake_statfs(const char *path, struct statfs *sf)
{
    memset(sf, 0, sizeof(*sf));
    sf->f_type = fake_kind == LUSTRE && under(path) ? 0x0BD00BD0 : 0xEF53;
    return 0;
}

static int fake_fstatfs(int fd, struct statfs *sf)
{
    memset(sf, 0, sizeof(*sf));
    return 0;
}

static void put32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static void put16(unsigned char *p, uint16_t v)
{
    memcpy(p, &v, 2);
}

static void put64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

static int fake_ioctl(int fd, unsigned long request, void *arg)
{
    unsigned char *b = arg;
    if (fake_kind != LUSTRE) {
        errno = ENOTTY;
        return -1;
    }
    if (request == SETSTRIPE) {
        setstripes++;
        memcpy(last_lum, b, 32);
        uint32_t unit;
        uint16_t count, start;
        memcpy(&unit, b + 24, 4);
        memcpy(&count, b + 28, 2);
        memcpy(&start, b + 30, 2);
        if (unit % 65536 != 0) { /* as a Lustre server does */
            errno = EINVAL;
            return -1;
        }
        fake_layout_t *l = fake_find(fd);
        if (l->unit) {
            errno = EEXIST;
            return -1;
        }
        l->unit = unit ? unit : 1 << 20;
        l->count = count ? count : 1;
        l->start = start == 0xffff ? 0 : start;
        return 0;
    }
    if (request == GETSTRIPE) {
        uint32_t magic;
        uint16_t room;
        memcpy(&magic, b, 4);
        memcpy(&room, b + 28, 2);
        UNIT_EQ(magic, 0x0BD10BD0); /* the kernel reads the request's magic and room */
        UNIT_CHECK(room >= 1);
        if (reply) {
            memcpy(b, reply, reply_len);
            return 0;
        }
        fake_layout_t *l = fake_find(fd);
        if (!l->unit) /* Lustre instantiates the default layout */
            l->unit = 1 << 20, l->count = 1, l->start = 0;
        memset(b, 0, 32 + 24 * (size_t)l->count);
        put32(b, 0x0BD10BD0);
        put32(b + 4, 1);
        put32(b + 24, (uint32_t)l->unit);
        put16(b + 28, (uint16_t)l->count);
        put16(b + 30, 7); /* the layout generation: not the start */
        for (int i = 0; i < l->count; i++)
            put32(b + 32 + 24 * i + 20, (uint32_t)((l->start + i) % 16));
        return 0;
    }
    errno = ENOTTY;
    return -1;
}

static ssize_t fake_getxattr(const char *path, const char *name, void *value, size_t size)
{
    if (fake_kind == CEPH && under(path) && strcmp(name, "ceph.dir.entries") == 0)
        return snprintf(value, size, "0");
    errno = ENODATA;
    return -1;
}

static ssize_t fake_fgetxattr(int fd, const char *name, void *value, size_t size)
{
    if (fake_kind != CEPH || strcmp(name, "ceph.file.layout") != 0) {
        errno = ENODATA;
        return -1;
    }
    fake_layout_t *l = fake_find(fd);
    if (!l->unit) /* CephFS's default layout */
        l->unit = 4 << 20, l->count = 1, l->object = 4 << 20;
    return snprintf(value, size, "stripe_unit=%lld stripe_count=%lld object_size=%lld pool=data",
                    l->unit, l->count, l->object);
}

static int fake_fsetxattr(int fd, const char *name, const void *value, size_t size, int flags)
{
    char text[256];
    snprintf(text, sizeof(text), "%.*s", (int)size, (const char *)value);
    if (fake_kind != CEPH || strcmp(name, "ceph.file.layout") != 0) {
        errno = EINVAL; /* a single field: the intermediate layout would be invalid */
        return -1;
    }
    ceph_sets++;
    long long unit, count, object;
    struct stat st;
    if (sscanf(text, "stripe_unit=%lld stripe_count=%lld object_size=%lld", &unit, &count,
               &object) != 3 ||
        unit % 65536 || object % unit || count < 1) {
        errno = EINVAL;
        return -1;
    }
    if (fstat(fd, &st) != 0 || st.st_size > 0) {
        errno = ENOTEMPTY;
        return -1;
    }
    fake_layout_t *l = fake_find(fd);
    l->unit = unit, l->count = count, l->object = object;
    return 0;
}

static const amp_fs_sys_t fake_sys = {
    .open = fake_open,
    .ioctl = fake_ioctl,
    .fgetxattr = fake_fgetxattr,
    .getxattr = fake_getxattr,
    .fsetxattr = fake_fsetxattr,
    .statfs = fake_statfs,
    .fstatfs = fake_fstatfs,
};

/* ---- Lustre encoding and decoding ---- */

static void check_lustre_encoding(int fd)
{
    /* lov_user_md_v1: magic 0x0BD10BD0, pattern RAID0, object id 0, stripe_size, stripe_count,
     * stripe_offset, little-endian on this machine */
    static const unsigned char expect[32] = {
        0xd0, 0x0b, 0xd1, 0x0b, 0x01, 0x00, 0x00, 0x00, 0, 0, 0,    0, 0, 0, 0, 0,
        0,    0,    0,    0,    0,    0,    0,    0,    0, 0, 0x10, 0, 4, 0, 2, 0};
    amp_fs_layout_t want = {.unit = 1 << 20, .count = 4, .start = 2};
    fake_nfiles = 0;
    setstripes = 0;
    UNIT_EQ(amp_fs_lustre.set(&fake_sys, fd, &want), 0);
    UNIT_EQ(setstripes, 1);
    UNIT_CHECK(memcmp(last_lum, expect, 32) == 0);
    /* file system defaults: count 0 and any start (0xffff) */
    static const unsigned char defaults[32] = {
        0xd0, 0x0b, 0xd1, 0x0b, 0x01, 0x00, 0x00, 0x00, 0, 0, 0,    0, 0, 0, 0,    0,
        0,    0,    0,    0,    0,    0,    0,    0,    0, 0, 0x40, 0, 0, 0, 0xff, 0xff};
    amp_fs_layout_t unit_only = {.unit = 4 << 20, .count = 0, .start = -1};
    fake_nfiles = 0;
    UNIT_EQ(amp_fs_lustre.set(&fake_sys, fd, &unit_only), 0);
    UNIT_CHECK(memcmp(last_lum, defaults, 32) == 0);
    /* a count the structure cannot carry is refused before any ioctl */
    amp_fs_layout_t huge = {.unit = 1 << 20, .count = 70000, .start = -1};
    setstripes = 0;
    UNIT_EQ(amp_fs_lustre.set(&fake_sys, fd, &huge), EINVAL);
    UNIT_EQ(setstripes, 0);
    UNIT_EQ(amp_fs_lustre.create_flags, DELAY);
}

static void check_lustre_decoding(int fd)
{
    unsigned char b[4096];
    amp_fs_layout_t l;
    /* v1: 4 MiB x 8, first object on OST 5; the u16 after the count is the layout generation */
    memset(b, 0, sizeof(b));
    put32(b, 0x0BD10BD0);
    put32(b + 4, 1);
    put32(b + 24, 4 << 20);
    put16(b + 28, 8);
    put16(b + 30, 3);
    put32(b + 32 + 20, 5);
    reply = b, reply_len = sizeof(b);
    UNIT_EQ(amp_fs_lustre.get(&fake_sys, fd, &l), 0);
    UNIT_EQ(l.unit, 4 << 20);
    UNIT_EQ(l.count, 8);
    UNIT_EQ(l.start, 5);
    /* v3: the pool name moves the objects to byte 48 */
    memset(b, 0, sizeof(b));
    put32(b, 0x0BD30BD0);
    put32(b + 4, 1);
    put32(b + 24, 65536);
    put16(b + 28, 3);
    memcpy(b + 32, "flash", 5);
    put32(b + 48 + 20, 7);
    UNIT_EQ(amp_fs_lustre.get(&fake_sys, fd, &l), 0);
    UNIT_EQ(l.unit, 65536);
    UNIT_EQ(l.count, 3);
    UNIT_EQ(l.start, 7);
    /* composite: [0, 1M) 1M x 1, [1M, 64M) 4M x 4 (v3),
     * [64M, EOF) 16M x 16 not instantiated: the last instantiated one counts */
    memset(b, 0, sizeof(b));
    put32(b, 0x0BD60BD0);
    put16(b + 14, 3);
    size_t blob = 32 + 3 * 48;
    uint64_t ext[3][2] = {{0, 1 << 20}, {1 << 20, 64 << 20}, {64 << 20, ~0ULL}};
    uint32_t flags[3] = {0x10, 0x10, 0};
    for (int e = 0; e < 3; e++) {
        unsigned char *entry = b + 32 + 48 * e, *m = b + blob + 80 * e;
        put32(entry, (uint32_t)e + 1);
        put32(entry + 4, flags[e]);
        put64(entry + 8, ext[e][0]);
        put64(entry + 16, ext[e][1]);
        put32(entry + 24, (uint32_t)(blob + 80 * e));
        put32(entry + 28, 80);
        put32(m, e == 1 ? 0x0BD30BD0 : 0x0BD10BD0);
        put32(m + 4, 1);
        put32(m + 24, e == 0 ? 1 << 20 : e == 1 ? 4 << 20 : 16 << 20);
        put16(m + 28, e == 0 ? 1 : e == 1 ? 4 : 16);
        put32(m + (e == 1 ? 48 : 32) + 20, e == 1 ? 9 : 0);
    }
    UNIT_EQ(amp_fs_lustre.get(&fake_sys, fd, &l), 0);
    UNIT_EQ(l.unit, 4 << 20);
    UNIT_EQ(l.count, 4);
    UNIT_EQ(l.start, 9);
    /* data on the metadata target: no stripes to plan with */
    memset(b, 0, sizeof(b));
    put32(b, 0x0BD10BD0);
    put32(b + 4, 0x100);
    put32(b + 24, 1 << 20);
    put16(b + 28, 0);
    UNIT_CHECK(amp_fs_lustre.get(&fake_sys, fd, &l) != 0);
    reply = NULL;
}

/* ---- CephFS ---- */

static void check_ceph_attributes(int fd)
{
    amp_fs_layout_t l;
    fake_nfiles = 0;
    UNIT_EQ(amp_fs_cephfs.get(&fake_sys, fd, &l), 0);
    UNIT_EQ(l.unit, 4 << 20);
    UNIT_EQ(l.count, 1);
    UNIT_EQ(l.object_size, 4 << 20);
    /* unit 3 MiB: the default object size of 4 MiB rounds up to 6 MiB, in one call */
    amp_fs_layout_t want = {.unit = 3 << 20, .count = 3};
    ceph_sets = 0;
    UNIT_EQ(amp_fs_cephfs.set(&fake_sys, fd, &want), 0);
    UNIT_EQ(ceph_sets, 1);
    UNIT_EQ(amp_fs_cephfs.get(&fake_sys, fd, &l), 0);
    UNIT_EQ(l.unit, 3 << 20);
    UNIT_EQ(l.count, 3);
    UNIT_EQ(l.object_size, 6 << 20);
    /* an object size given by hint; a unit Ceph refuses */
    fake_nfiles = 0;
    amp_fs_layout_t obj = {.unit = 65536, .count = 2, .object_size = 1 << 20};
    UNIT_EQ(amp_fs_cephfs.set(&fake_sys, fd, &obj), 0);
    UNIT_EQ(amp_fs_cephfs.get(&fake_sys, fd, &l), 0);
    UNIT_EQ(l.object_size, 1 << 20);
    amp_fs_layout_t odd = {.unit = 1000, .count = 2};
    UNIT_EQ(amp_fs_cephfs.set(&fake_sys, fd, &odd), EINVAL);
}

static void check_selection(void)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/new-file", fake_dir);
    fake_kind = LUSTRE;
    UNIT_EQ(amp_fs_select(path, AMP_FS_CAN_SET | AMP_FS_CAN_START),
            amp_fs_select(path, AMP_FS_CAN_GET));
    UNIT_CHECK(strcmp(amp_fs_provider(amp_fs_select(path, AMP_FS_CAN_SET))->name, "lustre") == 0);
    UNIT_CHECK(strcmp(amp_fs_provider(amp_fs_select("/", AMP_FS_CAN_GET))->name, "generic") == 0);
    fake_kind = CEPH;
    UNIT_CHECK(strcmp(amp_fs_provider(amp_fs_select(path, AMP_FS_CAN_SET))->name, "cephfs") == 0);
    /* CephFS does not choose targets: a request for that capability finds no provider */
    UNIT_CHECK(strcmp(amp_fs_provider(amp_fs_select(path, AMP_FS_CAN_START))->name, "generic") ==
               0);
    fake_kind = NONE;
    UNIT_CHECK(strcmp(amp_fs_provider(amp_fs_select(path, 0))->name, "generic") == 0);
}

/* ---- MPI_File_open with striping hints ---- */

static const char *info_get(MPI_Info info, const char *key, char *value)
{
    int flag = 0;
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    return flag ? value : "(absent)";
}

/* Opens `name` under the fake directory with the hints, writes `bytes` bytes, reports the
 * layout get_info gives. */
static void open_with(const char *name, const char *unit, const char *factor, const char *start,
                      int amode, int bytes, char out[4][MPI_MAX_INFO_VAL + 1])
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", fake_dir, name);
    MPI_Info hints;
    MPI_Info_create(&hints);
    if (unit)
        MPI_Info_set(hints, "striping_unit", unit);
    if (factor)
        MPI_Info_set(hints, "striping_factor", factor);
    if (start)
        MPI_Info_set(hints, "start_iodevice", start);
    amp_file_t *f = NULL;
    UNIT_EQ(amp_file_open(MPI_COMM_SELF, path, amode, hints, &f), MPI_SUCCESS);
    MPI_Info_free(&hints);
    if (!f)
        return;
    if (bytes > 0) {
        char data[4096] = {1};
        struct iovec iov = {data, (size_t)bytes};
        UNIT_EQ(amp_fs_writev(&f->fs, &iov, 1, 0), MPI_SUCCESS);
    }
    MPI_Info info;
    UNIT_EQ(amp_file_get_info(f, &info), MPI_SUCCESS);
    const char *keys[4] = {"striping_unit", "striping_factor", "start_iodevice",
                           "ampio_striping_hints"};
    for (int k = 0; k < 4; k++) {
        char value[MPI_MAX_INFO_VAL + 1];
        snprintf(out[k], MPI_MAX_INFO_VAL + 1, "%s", info_get(info, keys[k], value));
    }
    MPI_Info_free(&info);
    UNIT_EQ(amp_file_close(f), MPI_SUCCESS);
}

#define SAYS(v, text) UNIT_CHECK(strstr((v), (text)) != NULL)

static void check_open_lustre(void)
{
    char got[4][MPI_MAX_INFO_VAL + 1];
    fake_kind = LUSTRE;
    fake_nfiles = 0;
    opens_with_delay = setstripes = 0;
    int create = MPI_MODE_CREATE | MPI_MODE_RDWR;
    open_with("l1", "1M", "4", "2", create, 100, got);
    UNIT_EQ(opens_with_delay, 1);
    UNIT_CHECK(last_open_flags & O_EXCL); /* only a file this open creates gets a layout */
    UNIT_EQ(setstripes, 1);
    SAYS(got[0], "1048576");
    SAYS(got[1], "4");
    SAYS(got[2], "2");
    SAYS(got[3], "set on the new file");
    /* the file exists with data: opened as is, get_info tells its real layout */
    opens_with_delay = setstripes = 0;
    open_with("l1", "2M", "2", NULL, create, 0, got);
    UNIT_EQ(setstripes, 0);
    SAYS(got[0], "1048576");
    SAYS(got[1], "4");
    SAYS(got[3], "not applied");
    /* a unit the file system refuses: the default layout, and why */
    open_with("l2", "100000", "2", NULL, create, 10, got);
    SAYS(got[0], "1048576");
    SAYS(got[1], "1");
    SAYS(got[3], "refused by the file system: Invalid argument");
    /* no hints: no exclusive create, no delayed objects */
    opens_with_delay = 0;
    open_with("l3", NULL, NULL, NULL, create, 10, got);
    UNIT_EQ(opens_with_delay, 0);
    SAYS(got[3], "(absent)");
    SAYS(got[0], "1048576");
}

static void check_open_ceph(void)
{
    char got[4][MPI_MAX_INFO_VAL + 1];
    fake_kind = CEPH;
    fake_nfiles = 0;
    ceph_sets = 0;
    int create = MPI_MODE_CREATE | MPI_MODE_RDWR;
    open_with("c1", "64K", "3", NULL, create, 100, got);
    UNIT_EQ(ceph_sets, 1);
    SAYS(got[0], "65536");
    SAYS(got[1], "3");
    SAYS(got[2], "(absent)");
    SAYS(got[3], "set on the new file");
    ceph_sets = 0;
    open_with("c1", "1M", "2", NULL, create, 0, got);
    UNIT_EQ(ceph_sets, 0);
    SAYS(got[0], "65536");
    SAYS(got[3], "not applied");
    /* an existing empty file takes a layout */
    char path[4200];
    snprintf(path, sizeof(path), "%s/c2", fake_dir);
    close(open(path, O_CREAT | O_WRONLY, 0600));
    open_with("c2", "128K", "2", NULL, create, 0, got);
    SAYS(got[0], "131072");
    SAYS(got[1], "2");
    SAYS(got[3], "set on the new file");
    /* without MPI_MODE_CREATE the hints do not touch the file */
    ceph_sets = 0;
    open_with("c2", "64K", "3", NULL, MPI_MODE_RDWR, 0, got);
    UNIT_EQ(ceph_sets, 0);
    SAYS(got[0], "131072");
}

static void check_open_generic(void)
{
    char got[4][MPI_MAX_INFO_VAL + 1];
    fake_kind = NONE;
    /* no striping in the file system: the hints are the layout collective access plans with */
    open_with("g1", "8192", "3", NULL, MPI_MODE_CREATE | MPI_MODE_RDWR, 10, got);
    SAYS(got[0], "8192");
    SAYS(got[1], "3");
    SAYS(got[3], "no striping");
    open_with("g2", NULL, NULL, NULL, MPI_MODE_CREATE | MPI_MODE_RDWR, 10, got);
    SAYS(got[1], "1");
    SAYS(got[3], "(absent)");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(fake_dir, sizeof(fake_dir), "%s/ampio-test-layout.XXXXXX", tmp);
    if (!mkdtemp(fake_dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[4200];
    snprintf(path, sizeof(path), "%s/scratch", fake_dir);
    int fd = open(path, O_CREAT | O_RDWR, 0600);
    amp_fs_sys = &fake_sys;
    fake_kind = LUSTRE;
    check_lustre_encoding(fd);
    check_lustre_decoding(fd);
    fake_kind = CEPH;
    check_ceph_attributes(fd);
    close(fd);
    unlink(path);
    check_selection();
    check_open_lustre();
    check_open_ceph();
    check_open_generic();
    amp_fs_sys = &amp_fs_sys_real;
    const char *names[] = {"l1", "l2", "l3", "c1", "c2", "g1", "g2"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", fake_dir, names[i]);
        unlink(path);
    }
    rmdir(fake_dir);
    int rc = unit_report("test_layout");
    MPI_Finalize();
    return rc;
}
