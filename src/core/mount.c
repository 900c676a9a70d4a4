/* The mount point of a path, which keys per-file-system values of the configuration. */
#include "core/mount.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void amp_mount_dir_of(const char *path, char *dir, size_t len)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(dir, len, "%s", path);
        return;
    }
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, len, ".");
    else if (slash == path)
        snprintf(dir, len, "/");
    else
        snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

/* mountinfo escapes blanks and backslashes as \ooo */
static void amp_mount_unescape(char *s)
{
    char *out = s;
    for (char *in = s; *in;) {
        if (in[0] == '\\' && in[1] >= '0' && in[1] <= '7' && in[2] && in[3]) {
            *out++ = (char)strtol((char[4]){in[1], in[2], in[3], 0}, NULL, 8);
            in += 4;
        } else {
            *out++ = *in++;
        }
    }
    *out = '\0';
}

int amp_mount_of(const char *path, char *mount, size_t mlen, char *type, size_t tlen)
{
    char dir[PATH_MAX], real[PATH_MAX];
    amp_mount_dir_of(path, dir, sizeof(dir));
    if (!realpath(dir, real))
        return -1;
    FILE *f = fopen("/proc/self/mountinfo", "r");
    if (!f)
        return -1;
    char line[4096];
    size_t best = 0;
    int found = -1;
    while (fgets(line, sizeof(line), f)) {
        char point[PATH_MAX], fstype[256];
        /* id parent major:minor root mount-point options [optional fields] - type source */
        if (sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1)
            continue;
        const char *dash = strstr(line, " - ");
        if (!dash || sscanf(dash + 3, "%255s", fstype) != 1)
            continue;
        amp_mount_unescape(point);
        size_t n = strlen(point);
        int above = strcmp(point, "/") == 0 ||
                    (strncmp(real, point, n) == 0 && (real[n] == '/' || real[n] == '\0'));
        if (!above || (found == 0 && n < best))
            continue;
        best = n; /* later mounts on the same point hide earlier ones */
        found = 0;
        snprintf(mount, mlen, "%s", point);
        if (type)
            snprintf(type, tlen, "%s", fstype);
    }
    fclose(f);
    return found;
}
