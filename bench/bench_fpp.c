/* The file-per-process row of ampio-bench-io (IOR -F): each rank moves its bytes, in calls of the
 * plan's sizes, to a file of its own with POSIX calls: no shared file, no MPI-IO.
 *
 * A node's file system client may keep a file it alone wrote in its own cache (ceph-fuse keeps
 * the objects of a file whose capabilities it holds alone), where a shared file written from
 * several nodes cannot be cached. Reads of one's own file right after writing it then measure
 * that cache. With `other_node`, every rank reads instead the file a rank of the next node wrote,
 * in that rank's calls, as IOR -C does; the bytes read are checked against a hash the writer took
 * of what it wrote. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_io.h"

struct bench_fpp {
    MPI_Comm comm;
    char mine[4200], source_path[4200]; /* the file this rank writes; the one it reads */
    int source;                         /* rank whose file this rank reads */
    int *readers, nreaders;             /* ranks that read this rank's file */
    const bench_plan_t *plan;
    size_t *source_calls; /* byte counts of the source's calls, in file order */
    int source_ncalls;
    size_t source_bytes;
    unsigned char *rbuf;   /* reads land here: the source's bytes */
    uint64_t written_hash; /* of this rank's file content, taken at the last write */
};

static uint64_t fpp_hash(uint64_t h, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* For every rank, the rank whose file it reads: the rank of the same position on the next node
 * (nodes told apart by processor name, in order of their first rank), or itself on one node. */
static int *fpp_sources(MPI_Comm comm, int other_node)
{
    int n, len;
    MPI_Comm_size(comm, &n);
    char name[MPI_MAX_PROCESSOR_NAME];
    memset(name, 0, sizeof(name));
    MPI_Get_processor_name(name, &len);
    char *names = bench_xalloc((size_t)n * MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  comm);
    int *node = bench_xalloc((size_t)n * sizeof(int)),
        *local = bench_xalloc((size_t)n * sizeof(int));
    int *count = bench_xalloc((size_t)n * sizeof(int)),
        *first = bench_xalloc((size_t)n * sizeof(int));
    int *src = bench_xalloc((size_t)n * sizeof(int));
    int nnodes = 0;
    for (int r = 0; r < n; r++) { /* quadratic: a benchmark's numbers of ranks */
        int k = 0;
        while (k < nnodes && strcmp(names + (size_t)first[k] * MPI_MAX_PROCESSOR_NAME,
                                    names + (size_t)r * MPI_MAX_PROCESSOR_NAME) != 0)
            k++;
        if (k == nnodes)
            first[nnodes++] = r;
        node[r] = k;
        local[r] = count[k]++;
    }
    for (int r = 0; r < n; r++) {
        int k = (node[r] + 1) % nnodes, want = local[r] % count[k];
        src[r] = r;
        for (int q = 0; other_node && nnodes > 1 && q < n; q++)
            if (node[q] == k && local[q] == want)
                src[r] = q;
    }
    free(names), free(node), free(local), free(count), free(first);
    return src;
}

bench_fpp_t *bench_fpp_new(const char *path, const bench_plan_t *plan, int other_node,
                           MPI_Comm comm)
{
    bench_fpp_t *f = bench_xalloc(sizeof(*f));
    int n, me;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    f->comm = comm;
    f->plan = plan;
    int *src = fpp_sources(comm, other_node);
    f->source = src[me];
    snprintf(f->mine, sizeof(f->mine), "%s.fpp.%d", path, me);
    snprintf(f->source_path, sizeof(f->source_path), "%s.fpp.%d", path, f->source);
    f->readers = bench_xalloc((size_t)n * sizeof(int));
    for (int r = 0; r < n; r++)
        if (src[r] == me)
            f->readers[f->nreaders++] = r;
    free(src);

    /* the source's call sizes, which its readers repeat */
    size_t *mine = bench_xalloc((size_t)plan->ncalls * sizeof(size_t));
    for (int i = 0; i < plan->ncalls; i++)
        mine[i] = plan->calls[i].bytes;
    MPI_Request *req = bench_xalloc((size_t)(f->nreaders + 1) * sizeof(MPI_Request));
    for (int i = 0; i < f->nreaders; i++)
        MPI_Isend(mine, plan->ncalls * (int)sizeof(size_t), MPI_BYTE, f->readers[i], 0, comm,
                  &req[i]);
    MPI_Status st;
    int len;
    MPI_Probe(f->source, 0, comm, &st);
    MPI_Get_count(&st, MPI_BYTE, &len);
    f->source_ncalls = len / (int)sizeof(size_t);
    f->source_calls = bench_xalloc((size_t)len);
    MPI_Recv(f->source_calls, len, MPI_BYTE, f->source, 0, comm, MPI_STATUS_IGNORE);
    MPI_Waitall(f->nreaders, req, MPI_STATUSES_IGNORE);
    free(req);
    free(mine);
    for (int i = 0; i < f->source_ncalls; i++)
        f->source_bytes += f->source_calls[i];
    f->rbuf = bench_xalloc(f->source_bytes);
    memset(f->rbuf, 1, f->source_bytes); /* its pages faulted in before any timing */
    return f;
}

void bench_fpp_free(bench_fpp_t *f)
{
    if (!f)
        return;
    free(f->readers);
    free(f->source_calls);
    free(f->rbuf);
    free(f);
}

const char *bench_fpp_read_path(const bench_fpp_t *f)
{
    return f->source_path;
}

/* Open .. calls .. close of one file, this rank's times in `times` (whole, open, close). */
static int fpp_access(const char *name, int write, int ncalls, const size_t *sizes,
                      unsigned char *const *bufs, double times[3])
{
    double t0 = MPI_Wtime();
    int fd = write ? open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644) : open(name, O_RDONLY);
    int ok = fd >= 0;
    times[1] = MPI_Wtime() - t0;
    off_t at = 0;
    for (int i = 0; i < ncalls && ok; i++) {
        ssize_t got = write ? pwrite(fd, bufs[i], sizes[i], at) : pread(fd, bufs[i], sizes[i], at);
        ok = got == (ssize_t)sizes[i];
        at += (off_t)sizes[i];
    }
    double t1 = MPI_Wtime();
    if (fd >= 0 && close(fd) != 0)
        ok = 0;
    times[0] = MPI_Wtime() - t0;
    times[2] = MPI_Wtime() - t1;
    return ok;
}

/* The buffers of this rank's calls (from `buf`, as the plan places them) and their sizes. */
static void fpp_calls(const bench_plan_t *plan, const unsigned char *buf, unsigned char **bufs,
                      size_t *sizes)
{
    for (int i = 0; i < plan->ncalls; i++) {
        bufs[i] = (unsigned char *)buf + plan->calls[i].buf_off;
        sizes[i] = plan->calls[i].bytes;
    }
}

int bench_fpp_write(bench_fpp_t *f, const unsigned char *buf, double times[3])
{
    int n = f->plan->ncalls;
    unsigned char **bufs = bench_xalloc((size_t)n * sizeof(*bufs));
    size_t *sizes = bench_xalloc((size_t)n * sizeof(size_t));
    fpp_calls(f->plan, buf, bufs, sizes);
    MPI_Barrier(f->comm);
    int ok = fpp_access(f->mine, 1, n, sizes, bufs, times);
    f->written_hash = 0xcbf29ce484222325ull;
    for (int i = 0; i < n; i++)
        f->written_hash = fpp_hash(f->written_hash, bufs[i], sizes[i]);
    free(bufs);
    free(sizes);
    return ok;
}

int bench_fpp_verify_write(bench_fpp_t *f, const unsigned char *buf, unsigned char *back)
{
    int n = f->plan->ncalls, ok = 1;
    unsigned char **bufs = bench_xalloc((size_t)n * sizeof(*bufs));
    size_t *sizes = bench_xalloc((size_t)n * sizeof(size_t));
    double ignored[3];
    fpp_calls(f->plan, back, bufs, sizes);
    ok = fpp_access(f->mine, 0, n, sizes, bufs, ignored);
    for (int i = 0; i < n && ok; i++)
        ok = memcmp(bufs[i], buf + f->plan->calls[i].buf_off, sizes[i]) == 0;
    free(bufs);
    free(sizes);
    return ok;
}

int bench_fpp_read(bench_fpp_t *f, double times[3])
{
    int n = f->source_ncalls;
    unsigned char **bufs = bench_xalloc((size_t)n * sizeof(*bufs));
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        bufs[i] = f->rbuf + at;
        at += f->source_calls[i];
    }
    memset(f->rbuf, 0, f->source_bytes);
    /* the writer's hash reaches its readers untimed */
    uint64_t expect = 0;
    MPI_Request *req = bench_xalloc((size_t)(f->nreaders + 1) * sizeof(MPI_Request));
    for (int i = 0; i < f->nreaders; i++)
        MPI_Isend(&f->written_hash, 1, MPI_UINT64_T, f->readers[i], 2, f->comm, &req[i]);
    MPI_Recv(&expect, 1, MPI_UINT64_T, f->source, 2, f->comm, MPI_STATUS_IGNORE);
    MPI_Waitall(f->nreaders, req, MPI_STATUSES_IGNORE);
    free(req);
    MPI_Barrier(f->comm);
    int ok = fpp_access(f->source_path, 0, n, f->source_calls, bufs, times);
    free(bufs);
    return ok && fpp_hash(0xcbf29ce484222325ull, f->rbuf, f->source_bytes) == expect;
}

void bench_fpp_remove(const bench_fpp_t *f)
{
    unlink(f->mine);
}
