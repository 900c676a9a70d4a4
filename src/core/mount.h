/* The mount point of the file system that holds a path: the key of the configuration's
 * per-file-system values (name@mount point), such as the k ampio-calibrate keeps per file system.
 */
#ifndef AMP_MOUNT_H
#define AMP_MOUNT_H

#include <stddef.h>

/* The mount point of the file system holding `path` (a file, or the directory of a file that
 * does not exist yet): the longest mount point above it in /proc/self/mountinfo; and its type
 * (`type` may be NULL). Returns 0, or -1 when unknown. */
int amp_mount_of(const char *path, char *mount, size_t mlen, char *type, size_t tlen);

/* The directory that holds `path`, or `path` itself when it is a directory. */
void amp_mount_dir_of(const char *path, char *dir, size_t len);

#endif
