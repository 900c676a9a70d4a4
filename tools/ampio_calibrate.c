/* ampio-calibrate: measures the per-process write saturation point k of the storage under a
 * directory, the smallest sequential write that reaches (within a tolerance) the best bandwidth
 * one process gets, and the same with several processes writing at once. Prints the curve as a
 * table with bars, and ends with "k = <bytes>". --save writes k to the per-user config file
 * (--system: the system-wide one) as ampio_saturation_k@<mount point>, the k ampio takes for
 * files on that file system; the k of other file systems stay. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/mount.h"
#include "fs/fs_layout.h"

#define KIB 1024LL
#define MIB (1024LL * 1024)

typedef struct {
    const char *dir;
    long long max_size, unit;
    int reps, procs, use_fsync, use_direct, save, system;
    double tolerance;
} options_t;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int parse_size(const char *text, long long *out)
{
    char *end;
    double v = strtod(text, &end);
    long long mult = 1;
    switch (*end) {
    case 'k':
    case 'K':
        mult = KIB;
        break;
    case 'm':
    case 'M':
        mult = MIB;
        break;
    case 'g':
    case 'G':
        mult = 1024 * MIB;
        break;
    case '\0':
        break;
    default:
        return -1;
    }
    if (v <= 0)
        return -1;
    *out = (long long)(v * mult);
    return 0;
}

/* A fresh scratch file under the directory, made with O_EXCL under a name no one can predict
 * (a link planted in a shared directory is never followed) and unlinked at once, so that
 * nothing is left behind even when the run is killed. */
static int scratch_open(const options_t *o)
{
    char path[4096];
    int fd = -1;
    if (o->use_direct) {
        snprintf(path, sizeof(path), "%s/.ampio-calibrate.XXXXXX", o->dir);
        fd = mkostemp(path, O_DIRECT);
    }
    if (fd < 0) { /* without O_DIRECT, or the file system refuses it */
        snprintf(path, sizeof(path), "%s/.ampio-calibrate.XXXXXX", o->dir);
        fd = mkostemp(path, 0);
    }
    if (fd < 0) {
        fprintf(stderr, "ampio-calibrate: cannot create a file in %s: %s\n", o->dir,
                strerror(errno));
        exit(2);
    }
    unlink(path);
    return fd;
}

/* Writes `size` bytes sequentially into a fresh file `reps` times; returns the best MB/s. */
static double measure(const options_t *o, long long size, char *buf)
{
    double best = 0;
    for (int rep = 0; rep < o->reps; rep++) {
        int fd = scratch_open(o);
        double t0 = now();
        long long done = 0;
        while (done < size) {
            long long chunk = size - done < 4 * MIB ? size - done : 4 * MIB;
            ssize_t w = write(fd, buf, (size_t)chunk);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                fprintf(stderr, "ampio-calibrate: writing in %s: %s\n", o->dir,
                        w < 0 ? strerror(errno) : "no progress");
                exit(2);
            }
            done += w;
        }
        if (o->use_fsync)
            fsync(fd);
        double t = now() - t0;
        close(fd);
        double bw = (double)size / t / 1e6;
        if (bw > best)
            best = bw;
    }
    return best;
}

/* `procs` processes write `size` each at once; returns the aggregate MB/s (best of reps). A
 * process that cannot be started ends the run with an error rather than a wait for its
 * result. */
static double measure_together(const options_t *o, long long size, char *buf)
{
    int pipes[2];
    if (pipe(pipes) != 0) {
        fprintf(stderr, "ampio-calibrate: pipe: %s\n", strerror(errno));
        exit(2);
    }
    int started = 0, failed = 0;
    for (int p = 0; p < o->procs; p++) {
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "ampio-calibrate: cannot start process %d of %d: %s\n", p + 1, o->procs,
                    strerror(errno));
            failed = 1;
            break;
        }
        if (pid == 0) {
            close(pipes[0]);
            double bw = measure(o, size, buf);
            if (write(pipes[1], &bw, sizeof(bw)) != sizeof(bw))
                _exit(1);
            _exit(0);
        }
        started++;
    }
    close(pipes[1]); /* a child that dies without writing ends the read below */
    double sum = 0;
    for (int p = 0; p < started; p++) {
        double bw = 0;
        ssize_t n;
        do
            n = read(pipes[0], &bw, sizeof(bw));
        while (n < 0 && errno == EINTR);
        if (n == sizeof(bw))
            sum += bw;
        else
            failed = 1;
    }
    for (int p = 0; p < started; p++) {
        int status = 0;
        if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            failed = 1;
    }
    close(pipes[0]);
    if (failed) {
        fprintf(stderr, "ampio-calibrate: a measuring process failed\n");
        exit(2);
    }
    return sum;
}

/* The first size whose bandwidth is within the tolerance of the best, rounded up to the unit. */
static long long saturation(const long long *sizes, const double *bw, int n, double tol,
                            long long unit)
{
    double best = 0;
    for (int i = 0; i < n; i++)
        if (bw[i] > best)
            best = bw[i];
    long long k = sizes[n - 1];
    for (int i = 0; i < n; i++)
        if (bw[i] >= (1 - tol) * best) {
            k = sizes[i];
            break;
        }
    return (k + unit - 1) / unit * unit;
}

static void print_curve(const char *title, const long long *sizes, const double *bw, int n)
{
    double best = 0;
    for (int i = 0; i < n; i++)
        if (bw[i] > best)
            best = bw[i];
    printf("\n%s\n%12s %12s  %s\n", title, "size", "MB/s", "");
    for (int i = 0; i < n; i++) {
        char bar[51];
        int len = best > 0 ? (int)(50 * bw[i] / best + 0.5) : 0;
        memset(bar, '#', (size_t)len);
        bar[len] = '\0';
        if (sizes[i] >= MIB)
            printf("%10lld M %12.1f  %s\n", sizes[i] / MIB, bw[i], bar);
        else
            printf("%10lld K %12.1f  %s\n", sizes[i] / KIB, bw[i], bar);
    }
}

/* Whether the config file line sets `key` (blanks around it and the '=' allowed). */
static int line_sets(const char *line, const char *key)
{
    const char *p = line + strspn(line, " \t");
    size_t n = strlen(key);
    if (strncmp(p, key, n) != 0)
        return 0;
    p += n;
    p += strspn(p, " \t");
    return *p == '=';
}

/* Replaces or appends "key = k" in the config file; the keys of other file systems stay. */
static int save_k(const char *path, const char *key, long long k)
{
    char tmp[4200], line[8192];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
    /* O_EXCL and O_NOFOLLOW: never through a link planted under the temporary name */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!out) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    FILE *in = fopen(path, "r");
    if (in) {
        while (fgets(line, sizeof(line), in))
            if (!line_sets(line, key))
                fputs(line, out);
        fclose(in);
    }
    fprintf(out, "%s = %lld\n", key, k);
    if (fclose(out) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static const char *config_path(int system, char *buf, size_t len)
{
    if (system) {
        snprintf(buf, len, "%s/ampio.conf", AMPIO_SYSCONFDIR);
        return buf;
    }
    /* where ampio looks: $XDG_CONFIG_HOME/ampio, else ~/.config/ampio */
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    char base[3072];
    if (xdg && *xdg) {
        snprintf(base, sizeof(base), "%s", xdg);
    } else {
        snprintf(base, sizeof(base), "%s/.config", home ? home : ".");
        mkdir(base, 0700);
    }
    snprintf(buf, len, "%s/ampio", base);
    mkdir(buf, 0755);
    snprintf(buf, len, "%s/ampio/ampio.conf", base);
    return buf;
}

/* The stripe unit a new file gets under `dir` where the file system stripes files, else 0. */
static long long stripe_unit(const char *dir)
{
    int p = amp_fs_select(dir, AMP_FS_CAN_GET);
    if (!(amp_fs_provider(p)->caps & AMP_FS_CAN_GET))
        return 0;
    char path[4096];
    snprintf(path, sizeof(path), "%s/.ampio-calibrate.%d.layout", dir, (int)getpid());
    int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
    if (fd < 0)
        return 0;
    amp_fs_want_t none = {0, 0, 0, -1};
    amp_fs_layout_t l;
    amp_fs_layout_of(p, fd, &none, 0, &l);
    close(fd);
    unlink(path);
    return l.source == AMP_LAYOUT_FS ? l.unit : 0;
}

static void usage(void)
{
    puts("usage: ampio-calibrate [--dir DIR] [--max-size 64M] [--reps 3] [--procs N]\n"
         "                       [--tolerance 0.1] [--unit BYTES] [--no-fsync] [--direct]\n"
         "                       [--save [--system]]\n"
         "Measures the smallest sequential write size k at which one process reaches its best\n"
         "write bandwidth under DIR, and the same with N processes at once.");
}

int main(int argc, char **argv)
{
    options_t o = {
        .dir = ".", .max_size = 64 * MIB, .reps = 3, .procs = 2, .use_fsync = 1, .tolerance = 0.1};
    static const struct option longs[] = {
        {"dir", 1, 0, 'd'},      {"max-size", 1, 0, 'm'},  {"reps", 1, 0, 'r'},
        {"procs", 1, 0, 'p'},    {"tolerance", 1, 0, 't'}, {"unit", 1, 0, 'u'},
        {"no-fsync", 0, 0, 'F'}, {"direct", 0, 0, 'D'},    {"save", 0, 0, 's'},
        {"system", 0, 0, 'S'},   {"help", 0, 0, 'h'},      {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "d:m:r:p:t:u:FDsSh", longs, NULL)) != -1) {
        switch (c) {
        case 'd':
            o.dir = optarg;
            break;
        case 'm':
            if (parse_size(optarg, &o.max_size) != 0 || o.max_size < 64 * KIB) {
                fprintf(stderr, "ampio-calibrate: bad --max-size \"%s\" (at least 64K)\n", optarg);
                return 2;
            }
            break;
        case 'r':
            o.reps = atoi(optarg) > 0 ? atoi(optarg) : 1;
            break;
        case 'p':
            o.procs = atoi(optarg) > 0 ? atoi(optarg) : 1;
            break;
        case 't':
            o.tolerance = atof(optarg);
            break;
        case 'u':
            if (parse_size(optarg, &o.unit) != 0) {
                fprintf(stderr, "ampio-calibrate: bad --unit \"%s\"\n", optarg);
                return 2;
            }
            break;
        case 'F':
            o.use_fsync = 0;
            break;
        case 'D':
            o.use_direct = 1;
            break;
        case 's':
            o.save = 1;
            break;
        case 'S':
            o.system = 1;
            break;
        default:
            usage();
            return c == 'h' ? 0 : 2;
        }
    }
    if (o.tolerance <= 0 || o.tolerance >= 1) {
        fprintf(stderr, "ampio-calibrate: --tolerance must be between 0 and 1\n");
        return 2;
    }
    struct statvfs sv;
    if (statvfs(o.dir, &sv) != 0) {
        fprintf(stderr, "ampio-calibrate: %s: %s\n", o.dir, strerror(errno));
        return 2;
    }
    /* k is kept per file system: ampio takes the k of the file system a file is on */
    char mount[4096] = "/", type[256] = "?";
    if (amp_mount_of(o.dir, mount, sizeof(mount), type, sizeof(type)) != 0)
        fprintf(stderr, "ampio-calibrate: cannot find the mount point of %s; using /\n", o.dir);
    long long stripe = stripe_unit(o.dir);
    if (o.unit <= 0) /* the stripe unit of a new file, else the locking and allocation unit */
        o.unit = stripe > 0 ? stripe : sv.f_bsize > 0 ? (long long)sv.f_bsize : 4096;
    printf("ampio-calibrate: file system %s (%s), unit %lld%s\n", mount, type, o.unit,
           stripe > 0 ? " (stripe unit of a new file)" : "");

    char *buf = NULL;
    if (posix_memalign((void **)&buf, 4096, 4 * MIB) != 0)
        return 2;
    memset(buf, 0xa5, 4 * MIB);
    long long sizes[64];
    double one[64], many[64];
    int n = 0;
    for (long long s = 64 * KIB; s <= o.max_size && n < 64; s *= 2)
        sizes[n++] = s;
    printf("ampio-calibrate: %s, sizes 64K..%lldM, %d repetitions%s%s, %d processes at once\n",
           o.dir, o.max_size / MIB, o.reps, o.use_fsync ? ", fsync" : "",
           o.use_direct ? ", O_DIRECT" : "", o.procs);
    for (int i = 0; i < n; i++) {
        fprintf(stderr, "\r  measuring %d/%d (%lld KiB)   ", i + 1, n, sizes[i] / KIB);
        one[i] = measure(&o, sizes[i], buf);
        many[i] = o.procs > 1 ? measure_together(&o, sizes[i], buf) : one[i];
    }
    fprintf(stderr, "\r%40s\r", "");
    print_curve("one process writing:", sizes, one, n);
    long long k1 = saturation(sizes, one, n, o.tolerance, o.unit);
    long long kn = k1;
    if (o.procs > 1) {
        char title[64];
        snprintf(title, sizeof(title), "%d processes writing at once (sum):", o.procs);
        print_curve(title, sizes, many, n);
        kn = saturation(sizes, many, n, o.tolerance, o.unit);
        printf("\nk with %d processes at once = %lld bytes\n", o.procs, kn);
    }
    free(buf);
    if (o.save) {
        char path[4096], key[4200];
        config_path(o.system, path, sizeof(path));
        snprintf(key, sizeof(key), "ampio_saturation_k@%s", mount);
        if (save_k(path, key, k1) != 0) {
            fprintf(stderr, "ampio-calibrate: cannot write %s: %s\n", path, strerror(errno));
            return 1;
        }
        printf("saved %s = %lld in %s\n", key, k1, path);
    }
    printf("k = %lld\n", k1);
    return 0;
}
