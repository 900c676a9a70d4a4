/* Side files of shared file pointer components: named after the file and a token unique to one
 * open, created exclusively with mode 0600, never through a symbolic link. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fault.h"
#include "sharedfp/sfp.h"
#include "sharedfp/sfp_impl.h"

#define AMP_SFP_SIDE_TAG ".ampio-sfp-"

/* Splits `path` into its directory (with the final '/', or "" for the current one) and name. */
static void amp_sfp_split(const char *path, size_t *dirlen, const char **base)
{
    const char *slash = strrchr(path, '/');
    *dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    *base = slash ? slash + 1 : path;
}

int amp_sfp_side_name(const amp_sfp_t *s, const char *suffix, char **name)
{
    size_t dirlen;
    const char *base;
    amp_sfp_split(s->f->path, &dirlen, &base);
    size_t len = dirlen + 1 + strlen(base) + strlen(AMP_SFP_SIDE_TAG) + strlen(s->token) +
                 strlen(suffix) + 1;
    if (!(*name = amp_malloc(len)))
        return amp_err(MPI_ERR_NO_MEM, "out of memory naming a side file of \"%s\"", s->f->path);
    snprintf(*name, len, "%.*s.%s%s%s%s", (int)dirlen, s->f->path, base, AMP_SFP_SIDE_TAG, s->token,
             suffix);
    return MPI_SUCCESS;
}

int amp_sfp_side_name_process(const char *near, const char *suffix, char **name)
{
    size_t dirlen;
    const char *base;
    amp_sfp_split(near, &dirlen, &base);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char token[48];
    snprintf(token, sizeof(token), "proc-%lx-%lx", (unsigned long)getpid(),
             (unsigned long)ts.tv_nsec ^ ((unsigned long)ts.tv_sec << 20));
    size_t len = dirlen + 1 + strlen(AMP_SFP_SIDE_TAG) + strlen(token) + strlen(suffix) + 1;
    if (!(*name = amp_malloc(len)))
        return amp_err(MPI_ERR_NO_MEM, "out of memory naming a side file near \"%s\"", near);
    snprintf(*name, len, "%.*s%s%s%s", (int)dirlen, near, AMP_SFP_SIDE_TAG, token, suffix);
    return MPI_SUCCESS;
}

/* Accepts only a private regular file of this user as a side file another rank made. */
static int amp_sfp_side_check(const char *name, int *fd)
{
    struct stat st;
    if (*fd >= 0 && (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
                     (st.st_mode & 077) != 0)) {
        close(*fd);
        *fd = -1;
        return amp_err(MPI_ERR_ACCESS,
                       "the shared file pointer side file \"%s\" is not a private regular file "
                       "of this user",
                       name);
    }
    return MPI_SUCCESS;
}

int amp_sfp_side_open(const char *name, int how, int flags, int *fd)
{
    *fd = -1;
    if (how != AMP_SFP_SIDE_EXISTING)
        *fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | flags, 0600);
    if (how == AMP_SFP_SIDE_EXISTING || (*fd < 0 && errno == EEXIST && how == AMP_SFP_SIDE_SHARE)) {
        *fd = open(name, O_RDWR | O_NOFOLLOW | O_CLOEXEC | flags);
        if (*fd < 0 && errno == ENOENT && how == AMP_SFP_SIDE_EXISTING)
            return MPI_SUCCESS;
        int rc = amp_sfp_side_check(name, fd);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (*fd < 0)
        return amp_err_errno(errno, "cannot open the shared file pointer side file \"%s\"", name);
    return MPI_SUCCESS;
}

ssize_t amp_sfp_side_io(int write, int fd, void *buf, size_t len, off_t off)
{
    size_t done = 0;
    while (done < len) {
        int fault = amp_fault_fs(1);
        size_t ask = fault == AMP_FAULT_SHORT && len - done > 1 ? (len - done) / 2 : len - done;
        ssize_t n = fault > 0 ? (errno = fault, -1)
                    : write   ? pwrite(fd, (char *)buf + done, ask, off + (off_t)done)
                              : pread(fd, (char *)buf + done, ask, off + (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0) {
            if (write) {
                errno = ENOSPC;
                return -1;
            }
            break;
        }
        done += (size_t)n;
    }
    return (ssize_t)done;
}

int amp_sfp_side_open_filled(const char *name, int flags, const void *init, size_t len, int *fd)
{
    *fd = open(name, O_RDWR | O_NOFOLLOW | O_CLOEXEC | flags);
    if (*fd >= 0 || errno != ENOENT)
        return *fd >= 0 ? amp_sfp_side_check(name, fd)
                        : amp_err_errno(errno,
                                        "cannot open the shared file pointer side file "
                                        "\"%s\"",
                                        name);
    /* a private name, filled, then linked: nobody can see the side file before its content */
    size_t tlen = strlen(name) + 48;
    char *tmp = amp_malloc(tlen);
    if (!tmp)
        return amp_err(MPI_ERR_NO_MEM, "out of memory naming a side file of \"%s\"", name);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(tmp, tlen, "%s.new-%lx-%lx", name, (unsigned long)getpid(), (unsigned long)ts.tv_nsec);
    int rc = MPI_SUCCESS;
    *fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | flags, 0600);
    int made = *fd >= 0;
    if (!made) {
        rc = amp_err_errno(errno, "cannot create the shared file pointer side file \"%s\"", tmp);
    } else if (amp_sfp_side_io(1, *fd, (void *)init, len, 0) != (ssize_t)len || fsync(*fd) != 0) {
        rc = amp_err_errno(errno, "cannot write the shared file pointer side file \"%s\"", tmp);
    } else if (link(tmp, name) != 0) {
        int err = errno;
        close(*fd);
        *fd = -1;
        if (err == EEXIST) /* another rank published it first: use that one */
            rc = amp_sfp_side_open(name, AMP_SFP_SIDE_EXISTING, flags, fd);
        else
            rc =
                amp_err_errno(err, "cannot publish the shared file pointer side file \"%s\"", name);
    }
    if (rc != MPI_SUCCESS && *fd >= 0) {
        close(*fd);
        *fd = -1;
    }
    if (made)
        unlink(tmp); /* the side file keeps its other name */
    free(tmp);
    return rc;
}

void amp_sfp_delete_side_files(const char *path)
{
    size_t dirlen;
    const char *base;
    amp_sfp_split(path, &dirlen, &base);
    char *dir = dirlen ? amp_strndup(path, dirlen) : amp_strdup(".");
    size_t plen = 1 + strlen(base) + strlen(AMP_SFP_SIDE_TAG) + 1;
    char *prefix = amp_malloc(plen);
    DIR *d = dir && prefix ? opendir(dir) : NULL;
    if (d) {
        snprintf(prefix, plen, ".%s%s", base, AMP_SFP_SIDE_TAG);
        int dfd = dirfd(d);
        struct dirent *e;
        while ((e = readdir(d))) {
            struct stat st;
            if (strncmp(e->d_name, prefix, plen - 1) == 0 &&
                fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
                st.st_uid == geteuid())
                unlinkat(dfd, e->d_name, 0);
        }
        closedir(d);
    }
    free(prefix);
    free(dir);
}
