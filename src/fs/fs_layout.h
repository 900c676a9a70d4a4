/* The layout of a file (how it is striped over storage targets) and the one table of file
 * system providers that find and set it: Lustre (the layout ioctls), CephFS (the layout virtual
 * extended attributes) and any other file system (its block size, or what the hints say).
 *
 * A stripe unit `unit` of the file lies on target (offset / unit) mod `count`: Lustre places
 * stripe i on the i mod count-th object of the file; CephFS places stripe unit i on object
 * i mod count of its object set, each object set holding object_size / unit rows. */
#ifndef AMP_FS_LAYOUT_H
#define AMP_FS_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/statfs.h>
#include <sys/types.h>

/* Where a layout came from. */
typedef enum {
    AMP_LAYOUT_BLOCK, /* no striping: the file system block, one target */
    AMP_LAYOUT_HINTS, /* no striping in the file system: what striping_unit/factor said */
    AMP_LAYOUT_FS,    /* read from the file system (the provider's name says which) */
} amp_layout_src_t;

typedef struct amp_fs_layout {
    int64_t unit;        /* stripe unit in bytes (> 0) */
    int64_t count;       /* storage targets the stripes go round (>= 1) */
    int64_t object_size; /* CephFS: bytes of one object, 0 elsewhere */
    int64_t start;       /* Lustre: index of the first target, -1 when unknown */
    int32_t provider;    /* index in the provider table */
    int32_t source;      /* amp_layout_src_t */
    int32_t caps;        /* capabilities of the file system's provider (AMP_FS_*) */
    int32_t hints;       /* what became of the striping hints: amp_layout_hints_t */
    int32_t hints_errno; /* AMP_HINTS_REFUSED: the error the file system gave */
} amp_fs_layout_t;

/* What became of striping hints. */
typedef enum {
    AMP_HINTS_NONE,     /* none given */
    AMP_HINTS_APPLIED,  /* set on the file this open created */
    AMP_HINTS_EXISTING, /* the file existed with data, or this open did not create it */
    AMP_HINTS_REFUSED,  /* the file system refused them (hints_errno) */
    AMP_HINTS_PLANNING, /* no striping in the file system: ampio plans with them */
} amp_layout_hints_t;

/* The system calls the providers make, replaceable by test doubles. */
typedef struct amp_fs_sys {
    int (*open)(const char *path, int flags, ...);
    int (*ioctl)(int fd, unsigned long request, void *arg);
    ssize_t (*fgetxattr)(int fd, const char *name, void *value, size_t size);
    ssize_t (*getxattr)(const char *path, const char *name, void *value, size_t size);
    int (*fsetxattr)(int fd, const char *name, const void *value, size_t size, int flags);
    int (*statfs)(const char *path, struct statfs *buf);
    int (*fstatfs)(int fd, struct statfs *buf);
} amp_fs_sys_t;

/* The calls in use: the system's, unless a test installed doubles. */
extern const amp_fs_sys_t *amp_fs_sys;
extern const amp_fs_sys_t amp_fs_sys_real;

/* What a provider can do. */
enum {
    AMP_FS_CAN_GET = 1 << 0,   /* read the layout of an open file */
    AMP_FS_CAN_SET = 1 << 1,   /* set the layout of a new empty file */
    AMP_FS_CAN_START = 1 << 2, /* choose the first target (start_iodevice) */
    /* a read under a byte-range lock sees what other clients wrote before they unlocked, so
     * that read-modify-write (data sieving of writes) is safe; ceph-fuse serves such a read
     * from its cache: measured, interleaved sieved writes of 4 ranks on 4 nodes lost data */
    AMP_FS_LOCKED_RMW = 1 << 3,
    /* a client's cache never serves bytes that another client changed and flushed since: where
     * this is not declared, sync, open and byte-range locks drop the node's cached pages of the
     * file (amp_fs_set_stale_cache). ceph-fuse keeps the kernel's page cache of a file across
     * other nodes' writes: measured, reads after sync-barrier-sync returned stale bytes */
    AMP_FS_COHERENT = 1 << 4,
};

typedef struct amp_fs_provider {
    const char *name;
    unsigned caps;
    /* Open flags for a new file whose layout is set right after creation. */
    int create_flags;
    /* Whether the file system that holds directory `dir` (path) is this one. */
    int (*recognise)(const amp_fs_sys_t *sys, const char *dir);
    /* The layout of the open file; returns 0 or an errno value. */
    int (*get)(const amp_fs_sys_t *sys, int fd, amp_fs_layout_t *out);
    /* Sets the layout of the new, empty, open file; returns 0 or an errno value. */
    int (*set)(const amp_fs_sys_t *sys, int fd, const amp_fs_layout_t *want);
} amp_fs_provider_t;

extern const amp_fs_provider_t amp_fs_lustre;
extern const amp_fs_provider_t amp_fs_cephfs;
extern const amp_fs_provider_t amp_fs_generic;

/* The provider table, in order of selection; the generic provider ends it. */
const amp_fs_provider_t *amp_fs_provider(int index);

/* The first provider that declares every capability of `need` and recognises the file system
 * holding `path` (a file or a directory; the directory of a file that does not exist yet).
 * Returns its index; the generic provider when none does. */
int amp_fs_select(const char *path, unsigned need);

/* The striping the hints ask for: zeroes where they ask nothing. */
typedef struct amp_fs_want {
    int64_t unit, count, object_size, start; /* start < 0: any */
} amp_fs_want_t;

/* The layout of the open file `fd` at `path` for provider `index`: read from the file system
 * where it has one, else from the hints (want) or the block size `block`. */
void amp_fs_layout_of(int index, int fd, const amp_fs_want_t *want, int64_t block,
                      amp_fs_layout_t *out);

/* "cephfs 65536x3 object 4194304" and the like, for messages and AMPIO_EXPLAIN. */
int amp_fs_layout_describe(const amp_fs_layout_t *l, char *text, size_t len);

/* Target of file offset `off`: (off / unit) mod count. */
static inline int64_t amp_fs_layout_target(const amp_fs_layout_t *l, int64_t off)
{
    return off / l->unit % l->count;
}

#endif
