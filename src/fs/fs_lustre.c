/* Lustre: the layout ioctls of the client, LL_IOC_LOV_GETSTRIPE and LL_IOC_LOV_SETSTRIPE, with
 * a new file opened O_LOV_DELAY_CREATE so that its objects are allocated only once the layout is
 * set. The constants and structures below are the stable user-space ABI of lustre_user.h
 * (host-endian, packed), declared here so that no Lustre library or header is needed:
 *
 *   lov_user_md_v1 (32 bytes): u32 magic, u32 pattern, 16-byte object id, u32 stripe_size,
 *     u16 stripe_count, u16 stripe_offset (layout_gen when read), then the objects
 *   lov_user_md_v3: the same with a 16-byte pool name before the objects (48 bytes)
 *   lov_user_ost_data_v1 (24 bytes): 16-byte object id, u32 generation, u32 ost_idx
 *   lov_comp_md_v1 (32 bytes): u32 magic, u32 size, u32 layout_gen, u16 flags, u16 entry_count,
 *     u16 mirror_count, 14 bytes of padding, then entries of 48 bytes: u32 id, u32 flags,
 *     u64 extent start, u64 extent end, u32 offset of its v1/v3 blob, u32 size, ... */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "core/fault.h"
#include "fs/fs_layout.h"

#define AMP_LL_SUPER_MAGIC       0x0BD00BD0 /* statfs f_type */
#define AMP_LL_IOC_LOV_SETSTRIPE _IOW('f', 154, long)
#define AMP_LL_IOC_LOV_GETSTRIPE _IOW('f', 155, long)
#define AMP_O_LOV_DELAY_CREATE   (0100000000 | O_NOCTTY | FASYNC)

#define AMP_LOV_USER_MAGIC_V1      0x0BD10BD0u
#define AMP_LOV_USER_MAGIC_V3      0x0BD30BD0u
#define AMP_LOV_USER_MAGIC_COMP_V1 0x0BD60BD0u
#define AMP_LOV_PATTERN_RAID0      0x001u
#define AMP_LOV_PATTERN_MDT        0x100u
#define AMP_LOV_MAX_STRIPE_COUNT   2000 /* what one layout can hold */
#define AMP_LCME_FL_INIT           0x10u

enum { AMP_LUM_V1 = 32, AMP_LUM_V3 = 48, AMP_LUM_OST = 24, AMP_LCM = 32, AMP_LCME = 48 };

static uint32_t amp_get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint16_t amp_get16(const unsigned char *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static uint64_t amp_get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static void amp_put32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static void amp_put16(unsigned char *p, uint16_t v)
{
    memcpy(p, &v, 2);
}

static int amp_lustre_recognise(const amp_fs_sys_t *sys, const char *dir)
{
    struct statfs sf;
    return sys->statfs(dir, &sf) == 0 && (uint32_t)sf.f_type == AMP_LL_SUPER_MAGIC;
}

/* Reads a v1 or v3 layout of `len` bytes; returns 0 or an errno value. */
static int amp_lustre_parse_plain(const unsigned char *b, size_t len, amp_fs_layout_t *out)
{
    if (len < AMP_LUM_V1)
        return EPROTO;
    uint32_t magic = amp_get32(b);
    size_t objects = magic == AMP_LOV_USER_MAGIC_V3 ? AMP_LUM_V3 : AMP_LUM_V1;
    if (magic != AMP_LOV_USER_MAGIC_V1 && magic != AMP_LOV_USER_MAGIC_V3)
        return EPROTO;
    if ((amp_get32(b + 4) & 0xffffu) == AMP_LOV_PATTERN_MDT)
        return ENODATA; /* data on the metadata target: no stripes */
    out->unit = amp_get32(b + 24);
    out->count = amp_get16(b + 28);
    out->start = -1;
    if (out->count > 0 && len >= objects + AMP_LUM_OST)
        out->start = amp_get32(b + objects + 20); /* ost_idx of the first object */
    return out->unit > 0 && out->count > 0 ? 0 : ENODATA;
}

/* A composite layout (progressive file layouts): the last instantiated component, where a file
 * written from the start keeps growing. */
static int amp_lustre_parse_comp(const unsigned char *b, size_t len, amp_fs_layout_t *out)
{
    if (len < AMP_LCM)
        return EPROTO;
    int n = amp_get16(b + 14), rc = ENODATA;
    uint64_t best = 0;
    for (int e = 0; e < n && AMP_LCM + (size_t)(e + 1) * AMP_LCME <= len; e++) {
        const unsigned char *entry = b + AMP_LCM + (size_t)e * AMP_LCME;
        uint32_t flags = amp_get32(entry + 4), off = amp_get32(entry + 24),
                 size = amp_get32(entry + 28);
        uint64_t start = amp_get64(entry + 8);
        if (!(flags & AMP_LCME_FL_INIT) || (size_t)off + size > len || (rc == 0 && start < best))
            continue;
        amp_fs_layout_t one = *out;
        if (amp_lustre_parse_plain(b + off, size, &one) == 0) {
            *out = one;
            best = start;
            rc = 0;
        }
    }
    return rc;
}

static int amp_lustre_decode(const void *buf, size_t len, amp_fs_layout_t *out)
{
    const unsigned char *b = buf;
    if (len >= 4 && amp_get32(b) == AMP_LOV_USER_MAGIC_COMP_V1)
        return amp_lustre_parse_comp(b, len, out);
    return amp_lustre_parse_plain(b, len, out);
}

static int amp_lustre_get(const amp_fs_sys_t *sys, int fd, amp_fs_layout_t *out)
{
    /* room for the largest plain layout, and a composite one of a few components */
    size_t len = AMP_LUM_V3 + (size_t)AMP_LOV_MAX_STRIPE_COUNT * AMP_LUM_OST;
    unsigned char *b = amp_calloc(1, len);
    if (!b)
        return ENOMEM;
    amp_put32(b, AMP_LOV_USER_MAGIC_V1);
    amp_put16(b + 28, AMP_LOV_MAX_STRIPE_COUNT);
    int rc = sys->ioctl(fd, AMP_LL_IOC_LOV_GETSTRIPE, b) == 0 ? 0 : errno;
    if (rc == 0)
        rc = amp_lustre_decode(b, len, out);
    free(b);
    return rc;
}

/* A v1 layout request: the hints' unit and count, 0 for the file system's default, and the
 * first target or 0xffff for any. */
static int amp_lustre_encode(const amp_fs_layout_t *want, unsigned char out[32])
{
    if (want->unit < 0 || want->unit > UINT32_MAX || want->count < 0 || want->count >= 0xffff ||
        want->start >= 0xffff)
        return EINVAL;
    memset(out, 0, AMP_LUM_V1);
    amp_put32(out, AMP_LOV_USER_MAGIC_V1);
    amp_put32(out + 4, AMP_LOV_PATTERN_RAID0);
    amp_put32(out + 24, (uint32_t)want->unit);
    amp_put16(out + 28, (uint16_t)want->count);
    amp_put16(out + 30, want->start >= 0 ? (uint16_t)want->start : 0xffff);
    return 0;
}

static int amp_lustre_set(const amp_fs_sys_t *sys, int fd, const amp_fs_layout_t *want)
{
    unsigned char lum[AMP_LUM_V1];
    int rc = amp_lustre_encode(want, lum);
    if (rc == 0 && sys->ioctl(fd, AMP_LL_IOC_LOV_SETSTRIPE, lum) != 0)
        rc = errno;
    return rc;
}

const amp_fs_provider_t amp_fs_lustre = {
    .name = "lustre",
    .caps =
        AMP_FS_CAN_GET | AMP_FS_CAN_SET | AMP_FS_CAN_START | AMP_FS_LOCKED_RMW | AMP_FS_COHERENT,
    .create_flags = AMP_O_LOV_DELAY_CREATE,
    .recognise = amp_lustre_recognise,
    .get = amp_lustre_get,
    .set = amp_lustre_set,
};
