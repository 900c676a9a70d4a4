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

int amp_sfp_side_open(const char *name, int how, int flags, int *fd)
{
    *fd = -1;
    if (how != AMP_SFP_SIDE_EXISTING)
        *fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | flags, 0600);
    if (how == AMP_SFP_SIDE_EXISTING || (*fd < 0 && errno == EEXIST && how == AMP_SFP_SIDE_SHARE)) {
        /* another rank made it: accept only a private regular file of ours */
        *fd = open(name, O_RDWR | O_NOFOLLOW | O_CLOEXEC | flags);
        if (*fd < 0 && errno == ENOENT && how == AMP_SFP_SIDE_EXISTING)
            return MPI_SUCCESS;
        struct stat st;
        if (*fd >= 0 && (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
                         (st.st_mode & 077) != 0)) {
            close(*fd);
            *fd = -1;
            return amp_err(MPI_ERR_ACCESS,
                           "the shared file pointer side file \"%s\" is not a private regular "
                           "file of this user",
                           name);
        }
    }
    if (*fd < 0)
        return amp_err_errno(errno, "cannot open the shared file pointer side file \"%s\"", name);
    return MPI_SUCCESS;
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
