/* The limit row of ampio-bench-io: the same bytes, in the same calls, moved to the shared file by
 * the best hand-written code. Everything a program would know from its own decomposition (who
 * owns which part of the file, the pieces every rank sends every owner) is worked out before the
 * timed access; the timed access is open, then per call the data movement, then close:
 *
 * - data of every rank in a file range of its own (IOR, FLASH, restart): each rank writes its
 *   runs with pwrite (one per run: a contiguous block is one call), reads them with pread;
 * - interleaved data (tiles, N-D arrays): consecutive ranks whose extents overlap form a row
 *   (the row subcommunicator of a process grid whose fastest dimensions it holds whole); the
 *   row's range of the file is cut into extents of at least BENCH_LIMIT_EXTENT bytes, each owned
 *   by one rank of the row; one MPI_Alltoallv in the row brings every owner its extent's bytes
 *   (packed in file order), and the owner writes the extent with one pwrite (reads: the
 *   reverse). This is the two-phase workaround of lattice QCD codes (pmodels/mpich#7935). */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_io.h"

/* Least bytes an owner writes: the saturation point of the workaround (about 4 MB). */
#define BENCH_LIMIT_EXTENT ((MPI_Offset)4 << 20)
#define BENCH_LIMIT_ALIGN  ((MPI_Offset)4096)

typedef struct {
    MPI_Offset off, len;
    size_t at; /* sender: position in the rank's buffer; owner: in the receive buffer */
    int owner; /* row rank of the owner (sender side) */
} piece_t;

typedef struct {
    int direct;    /* every rank in a range of its own: its runs, as they are */
    piece_t *mine; /* direct: the runs; else the pieces sent, grouped by owner */
    size_t nmine;
    MPI_Comm row;
    int *scount, *sdispl, *rcount, *rdispl;
    size_t sbytes, rbytes;
    piece_t *got; /* owner: the pieces received, in receive-buffer order */
    size_t ngot;
    MPI_Offset ext_lo, ext_hi; /* owner: its extent */
    piece_t *ranges;           /* owner: the covered ranges of its extent, merged */
    size_t nranges;
} call_t;

struct bench_limit {
    int ncalls;
    call_t *calls;
    unsigned char *sbuf, *rbuf, *ebuf; /* the largest of any call */
};

static int piece_cmp_owner(const void *a, const void *b)
{
    const piece_t *x = a, *y = b;
    if (x->owner != y->owner)
        return x->owner < y->owner ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

static int piece_cmp_off(const void *a, const void *b)
{
    const piece_t *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* The runs of call i: the plan's runs are in buffer order, calls consecutive in the buffer. */
static piece_t *call_runs(const bench_plan_t *plan, int i, size_t *n)
{
    const bench_call_t *c = &plan->calls[i];
    piece_t *v = bench_xalloc((plan->nruns + 1) * sizeof(*v));
    size_t k = 0, pos = 0;
    for (size_t r = 0; r < plan->nruns; r++) {
        size_t lo = pos, hi = pos + (size_t)plan->runs[r].len;
        pos = hi;
        size_t a = lo > c->buf_off ? lo : c->buf_off;
        size_t b = hi < c->buf_off + c->bytes ? hi : c->buf_off + c->bytes;
        if (b <= a)
            continue;
        v[k++] = (piece_t){plan->runs[r].off + (MPI_Offset)(a - lo), (MPI_Offset)(b - a), a, 0};
    }
    *n = k;
    return v;
}

/* Rows: consecutive ranks whose extents overlap (as ampio's grouping by extents); returns the
 * row of every rank in `row` and of this rank. */
static void rows_of(int P, const int64_t *ext, int *row)
{
    int n = 0, has = 0;
    int64_t glo = 0, ghi = 0;
    for (int r = 0; r < P; r++) {
        const int64_t *e = &ext[3 * r]; /* lo, hi, bytes */
        if (e[2] > 0) {
            if (has && (e[0] >= ghi || e[1] <= glo)) {
                n++;
                has = 0;
            }
            glo = !has || e[0] < glo ? e[0] : glo;
            ghi = !has || e[1] > ghi ? e[1] : ghi;
            has = 1;
        }
        row[r] = n;
    }
}

static void plan_call(const bench_plan_t *plan, int i, MPI_Comm comm, call_t *c)
{
    int P, me;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    size_t nruns;
    piece_t *runs = call_runs(plan, i, &nruns);
    int64_t mine[3] = {0, 0, (int64_t)plan->calls[i].bytes};
    for (size_t k = 0; k < nruns; k++) {
        mine[0] = k == 0 || runs[k].off < mine[0] ? runs[k].off : mine[0];
        mine[1] = runs[k].off + runs[k].len > mine[1] ? runs[k].off + runs[k].len : mine[1];
    }
    int64_t *ext = bench_xalloc(3 * (size_t)P * sizeof(int64_t));
    MPI_Allgather(mine, 3, MPI_INT64_T, ext, 3, MPI_INT64_T, comm);
    c->direct = 1;
    for (int r = 0, prev = -1; r < P; r++) {
        if (ext[3 * r + 2] == 0)
            continue;
        if (prev >= 0 && ext[3 * r] < ext[3 * prev + 1])
            c->direct = 0;
        prev = r;
    }
    c->row = MPI_COMM_NULL;
    if (c->direct) {
        c->mine = runs;
        c->nmine = nruns;
        free(ext);
        return;
    }
    int *row = bench_xalloc((size_t)P * sizeof(int));
    rows_of(P, ext, row);
    MPI_Comm_split(comm, row[me], me, &c->row);
    int first = me, last = me;
    while (first > 0 && row[first - 1] == row[me])
        first--;
    while (last + 1 < P && row[last + 1] == row[me])
        last++;
    int n = last - first + 1;
    int64_t rlo = -1, rhi = 0, rbytes = 0;
    for (int r = first; r <= last; r++) {
        const int64_t *e = &ext[3 * r];
        if (e[2] == 0)
            continue;
        rlo = rlo < 0 || e[0] < rlo ? e[0] : rlo;
        rhi = e[1] > rhi ? e[1] : rhi;
        rbytes += e[2];
    }
    /* owners: extents of at least BENCH_LIMIT_EXTENT, at most one per rank of the row */
    int64_t nown = rbytes / BENCH_LIMIT_EXTENT;
    nown = nown < 1 ? 1 : nown > n ? n : nown;
    MPI_Offset *bound = bench_xalloc(((size_t)nown + 1) * sizeof(MPI_Offset));
    for (int64_t j = 0; j <= nown; j++)
        bound[j] = j == 0 ? rlo
                   : j == nown
                       ? rhi
                       : (rlo + (rhi - rlo) * j / nown) / BENCH_LIMIT_ALIGN * BENCH_LIMIT_ALIGN;
    int mr = me - first; /* row rank */
    /* my pieces, cut at the extents, grouped by owner (row rank j * n / nown) */
    size_t cap = nruns + (size_t)nown + 1, k = 0;
    c->mine = bench_xalloc(cap * sizeof(piece_t));
    for (size_t r = 0; r < nruns; r++) {
        MPI_Offset off = runs[r].off, end = off + runs[r].len;
        size_t at = runs[r].at;
        int64_t j = 0;
        while (j + 1 < nown && bound[j + 1] <= off)
            j++;
        while (off < end) {
            MPI_Offset stop = j + 1 < nown && bound[j + 1] < end ? bound[j + 1] : end;
            if (k == cap) {
                cap *= 2;
                c->mine = realloc(c->mine, cap * sizeof(piece_t));
                if (!c->mine)
                    MPI_Abort(MPI_COMM_WORLD, 2);
            }
            c->mine[k++] = (piece_t){off, stop - off, at, (int)(j * n / nown)};
            at += (size_t)(stop - off);
            off = stop;
            j++;
        }
    }
    c->nmine = k;
    qsort(c->mine, k, sizeof(piece_t), piece_cmp_owner);
    c->scount = bench_xalloc((size_t)n * sizeof(int));
    c->sdispl = bench_xalloc((size_t)n * sizeof(int));
    c->rcount = bench_xalloc((size_t)n * sizeof(int));
    c->rdispl = bench_xalloc((size_t)n * sizeof(int));
    for (size_t q = 0; q < k; q++)
        c->scount[c->mine[q].owner] += (int)c->mine[q].len;
    MPI_Alltoall(c->scount, 1, MPI_INT, c->rcount, 1, MPI_INT, c->row);
    for (int q = 0; q < n; q++) {
        c->sdispl[q] = q ? c->sdispl[q - 1] + c->scount[q - 1] : 0;
        c->rdispl[q] = q ? c->rdispl[q - 1] + c->rcount[q - 1] : 0;
    }
    c->sbytes = (size_t)c->sdispl[n - 1] + (size_t)c->scount[n - 1];
    c->rbytes = (size_t)c->rdispl[n - 1] + (size_t)c->rcount[n - 1];
    /* the owners learn every sender's pieces, in the sender's packing order */
    int *mcount = bench_xalloc((size_t)n * sizeof(int)),
        *mdispl = bench_xalloc((size_t)n * sizeof(int));
    int *rmcount = bench_xalloc((size_t)n * sizeof(int)),
        *rmdispl = bench_xalloc((size_t)n * sizeof(int));
    int64_t *meta = bench_xalloc(2 * (k + 1) * sizeof(int64_t));
    for (size_t q = 0; q < k; q++) {
        meta[2 * q] = c->mine[q].off;
        meta[2 * q + 1] = c->mine[q].len;
        mcount[c->mine[q].owner] += 2;
    }
    MPI_Alltoall(mcount, 1, MPI_INT, rmcount, 1, MPI_INT, c->row);
    for (int q = 0; q < n; q++) {
        mdispl[q] = q ? mdispl[q - 1] + mcount[q - 1] : 0;
        rmdispl[q] = q ? rmdispl[q - 1] + rmcount[q - 1] : 0;
    }
    size_t nmeta = (size_t)rmdispl[n - 1] + (size_t)rmcount[n - 1];
    int64_t *rmeta = bench_xalloc((nmeta + 2) * sizeof(int64_t));
    MPI_Alltoallv(meta, mcount, mdispl, MPI_INT64_T, rmeta, rmcount, rmdispl, MPI_INT64_T, c->row);
    c->ngot = nmeta / 2;
    c->got = bench_xalloc((c->ngot + 1) * sizeof(piece_t));
    size_t at = 0;
    for (size_t q = 0; q < c->ngot; q++) { /* senders in row order, as the receive buffer */
        c->got[q] = (piece_t){rmeta[2 * q], rmeta[2 * q + 1], at, mr};
        at += (size_t)rmeta[2 * q + 1];
    }
    c->ext_lo = c->ext_hi = 0;
    if (c->ngot > 0) {
        piece_t *sorted = bench_xalloc(c->ngot * sizeof(piece_t));
        memcpy(sorted, c->got, c->ngot * sizeof(piece_t));
        qsort(sorted, c->ngot, sizeof(piece_t), piece_cmp_off);
        c->ranges = bench_xalloc(c->ngot * sizeof(piece_t));
        for (size_t q = 0; q < c->ngot; q++) {
            piece_t *last_r = c->nranges ? &c->ranges[c->nranges - 1] : NULL;
            if (last_r && last_r->off + last_r->len >= sorted[q].off) {
                MPI_Offset end = sorted[q].off + sorted[q].len;
                if (end > last_r->off + last_r->len)
                    last_r->len = end - last_r->off;
            } else {
                c->ranges[c->nranges++] = sorted[q];
            }
        }
        free(sorted);
        c->ext_lo = c->ranges[0].off;
        c->ext_hi = c->ranges[c->nranges - 1].off + c->ranges[c->nranges - 1].len;
    }
    free(meta);
    free(rmeta);
    free(mcount);
    free(mdispl);
    free(rmcount);
    free(rmdispl);
    free(bound);
    free(row);
    free(runs);
    free(ext);
}

bench_limit_t *bench_limit_new(const bench_plan_t *plan, MPI_Comm comm)
{
    bench_limit_t *l = bench_xalloc(sizeof(*l));
    l->ncalls = plan->ncalls;
    l->calls = bench_xalloc((size_t)plan->ncalls * sizeof(call_t));
    size_t smax = 1, rmax = 1, emax = 1;
    for (int i = 0; i < plan->ncalls; i++) {
        call_t *c = &l->calls[i];
        plan_call(plan, i, comm, c);
        smax = c->sbytes > smax ? c->sbytes : smax;
        rmax = c->rbytes > rmax ? c->rbytes : rmax;
        emax = (size_t)(c->ext_hi - c->ext_lo) > emax ? (size_t)(c->ext_hi - c->ext_lo) : emax;
    }
    l->sbuf = bench_xalloc(smax);
    l->rbuf = bench_xalloc(rmax);
    l->ebuf = bench_xalloc(emax);
    return l;
}

void bench_limit_free(bench_limit_t *l)
{
    for (int i = 0; i < l->ncalls; i++) {
        call_t *c = &l->calls[i];
        if (c->row != MPI_COMM_NULL)
            MPI_Comm_free(&c->row);
        free(c->mine);
        free(c->scount);
        free(c->sdispl);
        free(c->rcount);
        free(c->rdispl);
        free(c->got);
        free(c->ranges);
    }
    free(l->calls);
    free(l->sbuf);
    free(l->rbuf);
    free(l->ebuf);
    free(l);
}

static int all_io(int fd, unsigned char *buf, MPI_Offset len, MPI_Offset off, int write)
{
    if (fd < 0)
        return 0;
    while (len > 0) {
        ssize_t n = write ? pwrite(fd, buf, (size_t)len, (off_t)off)
                          : pread(fd, buf, (size_t)len, (off_t)off);
        if (n <= 0)
            return 0;
        buf += n;
        off += n;
        len -= n;
    }
    return 1;
}

static int call_write(bench_limit_t *l, const call_t *c, int fd, const unsigned char *buf)
{
    int ok = 1;
    if (c->direct) {
        for (size_t q = 0; q < c->nmine && ok; q++)
            ok =
                all_io(fd, (unsigned char *)buf + c->mine[q].at, c->mine[q].len, c->mine[q].off, 1);
        return ok;
    }
    size_t at = 0;
    for (size_t q = 0; q < c->nmine; q++) { /* grouped by owner: the send buffer's order */
        memcpy(l->sbuf + at, buf + c->mine[q].at, (size_t)c->mine[q].len);
        at += (size_t)c->mine[q].len;
    }
    MPI_Alltoallv(l->sbuf, c->scount, c->sdispl, MPI_BYTE, l->rbuf, c->rcount, c->rdispl, MPI_BYTE,
                  c->row);
    for (size_t q = 0; q < c->ngot; q++)
        memcpy(l->ebuf + (c->got[q].off - c->ext_lo), l->rbuf + c->got[q].at,
               (size_t)c->got[q].len);
    for (size_t q = 0; q < c->nranges && ok; q++)
        ok = all_io(fd, l->ebuf + (c->ranges[q].off - c->ext_lo), c->ranges[q].len,
                    c->ranges[q].off, 1);
    return ok;
}

static int call_read(bench_limit_t *l, const call_t *c, int fd, unsigned char *buf)
{
    int ok = 1;
    if (c->direct) {
        for (size_t q = 0; q < c->nmine && ok; q++)
            ok = all_io(fd, buf + c->mine[q].at, c->mine[q].len, c->mine[q].off, 0);
        return ok;
    }
    for (size_t q = 0; q < c->nranges && ok; q++)
        ok = all_io(fd, l->ebuf + (c->ranges[q].off - c->ext_lo), c->ranges[q].len,
                    c->ranges[q].off, 0);
    for (size_t q = 0; q < c->ngot; q++)
        memcpy(l->rbuf + c->got[q].at, l->ebuf + (c->got[q].off - c->ext_lo),
               (size_t)c->got[q].len);
    /* a failed read still takes part in the exchange: the others wait for it */
    MPI_Alltoallv(l->rbuf, c->rcount, c->rdispl, MPI_BYTE, l->sbuf, c->scount, c->sdispl, MPI_BYTE,
                  c->row);
    size_t at = 0;
    for (size_t q = 0; q < c->nmine; q++) {
        memcpy(buf + c->mine[q].at, l->sbuf + at, (size_t)c->mine[q].len);
        at += (size_t)c->mine[q].len;
    }
    return ok;
}

int bench_limit_access(bench_limit_t *l, const char *path, unsigned char *buf, int write,
                       double *open_s, double *close_s)
{
    double t0 = MPI_Wtime();
    int fd = write ? open(path, O_WRONLY | O_CREAT, 0644) : open(path, O_RDONLY);
    int ok = fd >= 0;
    *open_s = MPI_Wtime() - t0;
    for (int i = 0; i < l->ncalls; i++) /* every call, even after a failure: the exchanges */
        ok = (write ? call_write(l, &l->calls[i], fd, buf) : call_read(l, &l->calls[i], fd, buf)) &&
             ok;
    double t1 = MPI_Wtime();
    if (fd >= 0 && close(fd) != 0)
        ok = 0;
    *close_s = MPI_Wtime() - t1;
    return ok;
}
