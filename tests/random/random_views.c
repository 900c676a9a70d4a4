/* Random nested derived datatypes as file views and memory types, written with a random mix of
 * access routines, read back with another, and checked against a model of the file computed
 * from the type specifications alone (see rv_spec.h) as well as against the native MPI-IO.
 *
 *   random_views OUTDIR [--seed S] [--cases N] [--tight-views] [--verbose]
 *                [--check-types | --only-types]
 *
 * --tight-views keeps every filetype's data within [0, extent) relative to the displacement (by
 * default some views are shifted so that a filetype's data runs past its extent).
 * --check-types prints where the host MPI's extent or size of a type differs from the model
 * (--only-types does only that), a check of the model itself.
 *
 * Case i uses seed S+i and writes case<seed>.dat; a failing case prints its seed and
 * description, and `--seed <seed> --cases 1` runs it alone. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amptest.h"
#include "rv_case.h"

#define SENTINEL 0xA5
#define GUARD    16384 /* sentinel bytes around every buffer: stray writes of an MPI land there */

typedef struct {
    const rv_case *c;
    char name[64];
    int reported;
} run_state;

/* A disagreement with the model: an ampio failure, or a native defect of this file. */
static void mismatch(run_state *rs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints the case once, so that it can be run again alone. */
static void report_case(run_state *rs)
{
    if (rs->reported)
        return;
    static char desc[8192];
    rv_case_describe(rs->c, amptest_rank, desc, sizeof(desc));
    fprintf(stderr, "random_views [%s] case %s\n", amptest_under_ampio() ? "ampio" : "native",
            desc);
    rs->reported = 1;
}

static void mismatch(run_state *rs, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    report_case(rs);
    amptest_model_mismatch(rs->name, "seed %llu: %s", rs->c->seed, msg);
}

static int ok(run_state *rs, int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return 1;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    mismatch(rs, "%s failed: %s", what, text);
    return 0;
}

static MPI_Datatype etype_of(int granule)
{
    return granule == 4 ? MPI_INT : granule == 8 ? MPI_DOUBLE : MPI_BYTE;
}

static int is_collective(int fam)
{
    return fam == FAM_AT_ALL || fam == FAM_ALL || fam == FAM_ALL_SPLIT || fam == FAM_AT_SPLIT ||
           fam == FAM_IAT_ALL || fam == FAM_I_ALL;
}

static int uses_pointer(int fam)
{
    return fam == FAM_ALL || fam == FAM_PLAIN || fam == FAM_I || fam == FAM_ALL_SPLIT ||
           fam == FAM_I_ALL;
}

/* One access of family `fam`. Nonblocking individual accesses are left pending in *req; the
 * others complete here and fill *st. */
static int access_file(MPI_File fh, int fam, int write, MPI_Offset off, void *buf, int count,
                       MPI_Datatype t, MPI_Request *req, MPI_Status *st)
{
    int rc = MPI_SUCCESS;
    *req = MPI_REQUEST_NULL;
    switch (fam) {
    case FAM_AT_ALL:
        return write ? MPI_File_write_at_all(fh, off, buf, count, t, st)
                     : MPI_File_read_at_all(fh, off, buf, count, t, st);
    case FAM_ALL:
        return write ? MPI_File_write_all(fh, buf, count, t, st)
                     : MPI_File_read_all(fh, buf, count, t, st);
    case FAM_AT:
        return write ? MPI_File_write_at(fh, off, buf, count, t, st)
                     : MPI_File_read_at(fh, off, buf, count, t, st);
    case FAM_PLAIN:
        return write ? MPI_File_write(fh, buf, count, t, st) : MPI_File_read(fh, buf, count, t, st);
    case FAM_IAT:
        return write ? MPI_File_iwrite_at(fh, off, buf, count, t, req)
                     : MPI_File_iread_at(fh, off, buf, count, t, req);
    case FAM_I:
        return write ? MPI_File_iwrite(fh, buf, count, t, req)
                     : MPI_File_iread(fh, buf, count, t, req);
    case FAM_ALL_SPLIT:
        rc = write ? MPI_File_write_all_begin(fh, buf, count, t)
                   : MPI_File_read_all_begin(fh, buf, count, t);
        if (rc == MPI_SUCCESS)
            rc = write ? MPI_File_write_all_end(fh, buf, st) : MPI_File_read_all_end(fh, buf, st);
        return rc;
    case FAM_AT_SPLIT:
        rc = write ? MPI_File_write_at_all_begin(fh, off, buf, count, t)
                   : MPI_File_read_at_all_begin(fh, off, buf, count, t);
        if (rc == MPI_SUCCESS)
            rc = write ? MPI_File_write_at_all_end(fh, buf, st)
                       : MPI_File_read_at_all_end(fh, buf, st);
        return rc;
    case FAM_IAT_ALL:
        rc = write ? MPI_File_iwrite_at_all(fh, off, buf, count, t, req)
                   : MPI_File_iread_at_all(fh, off, buf, count, t, req);
        break;
    default:
        rc = write ? MPI_File_iwrite_all(fh, buf, count, t, req)
                   : MPI_File_iread_all(fh, buf, count, t, req);
        break;
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(req, st);
    return rc;
}

static void check_count(run_state *rs, MPI_Status *st, MPI_Datatype t, int expect,
                        const char *what)
{
    int got = -1;
    MPI_Get_count(st, t, &got);
    if (got != expect)
        mismatch(rs, "%s: status count %d, expected %d", what, got, expect);
}

/* Buffers of the accesses: the memory type tiled `count` times from GUARD on, gaps and guards
 * left as SENTINEL. */
static size_t span_of(const rv_spec *mt, int count)
{
    size_t data = count ? (size_t)((count - 1) * (mt->ub - mt->lb) + mt->true_ub) : 0;
    return data + 2 * GUARD;
}

/* Fills `buf` (laid out by the memory type) with the bytes of access j: from the rank's data
 * stream when writing, from the model of the file when reading back. */
static void fill_access(const rv_case *c, int j, unsigned char *buf, int from_file)
{
    const rv_rank_plan *rp = &c->rank[amptest_rank];
    long long n = rp->count[j] * rp->mt->size, pos = rp->offset[j] * c->granule;
    rv_layout ml, fl;
    rv_layout_init(&ml, rp->mt, 0);
    rv_layout_init(&fl, rp->ft, rp->disp);
    for (long long k = 0; k < n;) {
        long long mrun, frun;
        long long mo = rv_layout_at(&ml, k, &mrun), fo = rv_layout_at(&fl, pos + k, &frun);
        long long len = mrun < frun ? mrun : frun;
        for (long long i = 0; i < len && k < n; i++, k++)
            buf[GUARD + mo + i] =
                from_file ? c->image[fo + i] : amptest_byte(amptest_rank, rp->stream[j] + k);
    }
    rv_layout_free(&ml);
    rv_layout_free(&fl);
}

/* Moves the individual file pointer to `want` (etypes) unless it is there already. */
static void seek_to(run_state *rs, MPI_File fh, long long *fp, long long want, int how)
{
    if (*fp == want)
        return;
    int rc = how ? MPI_File_seek(fh, (MPI_Offset)(want - *fp), MPI_SEEK_CUR)
                 : MPI_File_seek(fh, (MPI_Offset)want, MPI_SEEK_SET);
    ok(rs, rc, "seek");
    *fp = want;
}

typedef struct {
    MPI_Request req[RV_MAXOPS];
    int op[RV_MAXOPS], n;
} pending;

static void complete(run_state *rs, pending *p, MPI_Datatype mt, int write)
{
    for (int i = 0; i < p->n; i++) {
        int j = p->op[i];
        const char *what = rv_family_name(write ? rs->c->wfam[j] : rs->c->rfam[j], write);
        MPI_Status st;
        if (ok(rs, MPI_Wait(&p->req[i], &st), what))
            check_count(rs, &st, mt, rs->c->rank[amptest_rank].count[j], what);
    }
    p->n = 0;
}

/* The accesses of one phase, writes or reads, in the order of the plan. */
static void run_accesses(run_state *rs, MPI_File fh, MPI_Datatype mt, unsigned char **bufs,
                         int write, rv_rng *local)
{
    const rv_case *c = rs->c;
    const rv_rank_plan *rp = &c->rank[amptest_rank];
    long long fp = 0;
    pending p = {.n = 0};
    for (int j = 0; j < c->nops; j++) {
        int fam = write ? c->wfam[j] : c->rfam[j];
        if (is_collective(fam) && c->wait_early)
            complete(rs, &p, mt, write);
        if (uses_pointer(fam))
            seek_to(rs, fh, &fp, rp->offset[j], rv_chance(local, 50));
        MPI_Status st;
        MPI_Request req;
        int rc = access_file(fh, fam, write, (MPI_Offset)rp->offset[j], bufs[j] + GUARD,
                             rp->count[j], mt, &req, &st);
        if (!ok(rs, rc, rv_family_name(fam, write)))
            continue;
        if (uses_pointer(fam))
            fp += rp->count[j] * rp->mt->size / c->granule;
        if (req != MPI_REQUEST_NULL) {
            p.req[p.n] = req;
            p.op[p.n++] = j;
        } else {
            check_count(rs, &st, mt, rp->count[j], rv_family_name(fam, write));
        }
    }
    complete(rs, &p, mt, write);
    MPI_Offset pos = -1;
    if (ok(rs, MPI_File_get_position(fh, &pos), "get_position") && pos != fp)
        mismatch(rs, "individual file pointer at %lld after the %s, expected %lld", (long long)pos,
                 write ? "writes" : "reads", fp);
}

static MPI_Info make_info(const rv_case *c)
{
    MPI_Info info;
    MPI_Info_create(&info);
    for (int h = 0; h < c->nhints; h++)
        MPI_Info_set(info, c->hint_key[h], c->hint_val[h]);
    return info;
}

/* Reads the whole view up to the end of file in one access and compares it with the model. */
static void read_everything(run_state *rs, MPI_File fh)
{
    const rv_case *c = rs->c;
    const rv_rank_plan *rp = &c->rank[amptest_rank];
    rv_layout fl;
    rv_layout_init(&fl, rp->ft, rp->disp);
    long long pos = 0, run;
    for (;;) { /* the view's data below the end of file: a prefix, the view being monotone */
        long long off = rv_layout_at(&fl, pos, &run);
        if (off >= c->fsize)
            break;
        if (off + run > c->fsize) {
            pos += c->fsize - off;
            break;
        }
        pos += run;
    }
    int n = (int)(pos / c->granule);
    long long bytes = (long long)n * c->granule;
    unsigned char *got = malloc((size_t)bytes + GUARD), *want = malloc((size_t)bytes + GUARD);
    memset(got, SENTINEL, (size_t)bytes + GUARD);
    memset(want, SENTINEL, (size_t)bytes + GUARD);
    for (long long k = 0; k < bytes;) {
        long long off = rv_layout_at(&fl, k, &run);
        for (long long i = 0; i < run && k < bytes; i++, k++)
            want[k] = c->image[off + i];
    }
    rv_layout_free(&fl);
    MPI_Datatype et = etype_of(c->granule);
    MPI_Status st;
    MPI_Request req;
    if (c->full_fam == FAM_ALL)
        ok(rs, MPI_File_seek(fh, 0, MPI_SEEK_SET), "seek");
    if (ok(rs, access_file(fh, c->full_fam, 0, 0, got, n, et, &req, &st), "whole-view read")) {
        check_count(rs, &st, et, n, "whole-view read");
        for (long long k = 0; k < bytes + GUARD; k++)
            if (got[k] != want[k]) {
                mismatch(rs, "whole-view read: byte %lld of %lld is %#x, model %#x", k, bytes,
                         got[k], want[k]);
                break;
            }
    }
    free(got);
    free(want);
}

static void write_phase(run_state *rs, MPI_Info info, MPI_Datatype ft, MPI_Datatype mt,
                        rv_rng *local)
{
    const rv_case *c = rs->c;
    const rv_rank_plan *rp = &c->rank[amptest_rank];
    const char *path = amptest_path(rs->name);
    if (!c->truncate) {
        if (amptest_rank == 0)
            MPI_File_delete(path, MPI_INFO_NULL); /* absent on a first run */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_File fh;
    if (!ok(rs, MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
            "open"))
        return;
    if (c->truncate)
        ok(rs, MPI_File_set_size(fh, 0), "set_size");
    ok(rs, MPI_File_set_view(fh, rp->disp, etype_of(c->granule), ft, "native", info), "set_view");
    unsigned char *bufs[RV_MAXOPS];
    for (int j = 0; j < c->nops; j++) {
        size_t span = span_of(rp->mt, rp->count[j]);
        bufs[j] = malloc(span);
        memset(bufs[j], SENTINEL, span);
        fill_access(c, j, bufs[j], 0);
    }
    run_accesses(rs, fh, mt, bufs, 1, local);
    ok(rs, MPI_File_close(&fh), "close");
    for (int j = 0; j < c->nops; j++)
        free(bufs[j]);
}

static void read_phase(run_state *rs, MPI_Info info, MPI_Datatype ft, MPI_Datatype mt,
                       rv_rng *local)
{
    const rv_case *c = rs->c;
    const rv_rank_plan *rp = &c->rank[amptest_rank];
    MPI_File fh;
    int amode = c->reopen_rdonly ? MPI_MODE_RDONLY : MPI_MODE_RDWR;
    if (!ok(rs, MPI_File_open(MPI_COMM_WORLD, amptest_path(rs->name), amode, info, &fh), "reopen"))
        return;
    MPI_Offset size = -1;
    if (ok(rs, MPI_File_get_size(fh, &size), "get_size") && size != c->fsize)
        mismatch(rs, "file size %lld, model %lld", (long long)size, c->fsize);
    ok(rs, MPI_File_set_view(fh, rp->disp, etype_of(c->granule), ft, "native", info), "set_view");
    unsigned char *bufs[RV_MAXOPS], *want[RV_MAXOPS];
    size_t spans[RV_MAXOPS];
    for (int j = 0; j < c->nops; j++) {
        spans[j] = span_of(rp->mt, rp->count[j]);
        bufs[j] = malloc(spans[j]);
        want[j] = malloc(spans[j]);
        memset(bufs[j], SENTINEL, spans[j]);
        memset(want[j], SENTINEL, spans[j]);
        fill_access(c, j, want[j], 1);
    }
    run_accesses(rs, fh, mt, bufs, 0, local);
    for (int j = 0; j < c->nops; j++) {
        for (size_t k = 0; k < spans[j]; k++)
            if (bufs[j][k] != want[j][k]) {
                mismatch(rs, "access %d (%s of %d): memory byte %lld is %#x, expected %#x", j,
                         rv_family_name(c->rfam[j], 0), rp->count[j], (long long)k - GUARD,
                         bufs[j][k], want[j][k]);
                break;
            }
        free(bufs[j]);
        free(want[j]);
    }
    read_everything(rs, fh);
    ok(rs, MPI_File_close(&fh), "close");
}

/* Diagnostic for the model itself (--check-types): the host MPI's view of a built type. The
 * model never uses it; a difference means the model or the host's datatypes are wrong. */
static void check_type(const rv_case *c, const rv_spec *s, MPI_Datatype t, const char *what)
{
    MPI_Aint lb, ext, tlb, text;
    int size;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    MPI_Type_size(t, &size);
    (void)tlb; /* Open MPI's true extents of darrays and structs include padding: not compared */
    (void)text;
    if (lb != s->lb || ext != s->ub - s->lb || size != s->size) {
        char desc[4096];
        rv_describe(s, desc, sizeof(desc));
        printf("seed %llu rank %d %s: MPI lb %ld extent %ld true %ld+%ld size %d, model lb %lld "
               "extent %lld true %lld+%lld size %lld: %s\n",
               c->seed, amptest_rank, what, (long)lb, (long)ext, (long)tlb, (long)text, size,
               s->lb, s->ub - s->lb, s->true_lb, s->true_ub - s->true_lb, s->size, desc);
    }
}

static void run_case(unsigned long long seed, int tight, int verbose, int check_types)
{
    rv_case c;
    rv_case_make(&c, seed, amptest_size, tight);
    run_state rs = {.c = &c, .reported = 0};
    snprintf(rs.name, sizeof(rs.name), "case%llu.dat", seed);
    if (verbose && amptest_rank == 0) {
        static char desc[8192];
        rv_case_describe(&c, 0, desc, sizeof(desc));
        printf("%s\n", desc);
        fflush(stdout);
    }
    const rv_rank_plan *rp = &c.rank[amptest_rank];
    MPI_Datatype ft = rv_build(rp->ft), mt = rv_build(rp->mt);
    if (check_types) {
        check_type(&c, rp->ft, ft, "filetype");
        check_type(&c, rp->mt, mt, "memory type");
    }
    if (check_types < 2) {
        MPI_Info info = make_info(&c);
        rv_rng local = rv_seeded(seed, 5000 + (uint64_t)amptest_rank);
        write_phase(&rs, info, ft, mt, &local);
        MPI_Barrier(MPI_COMM_WORLD);
        if (amptest_rank == 0 && !amptest_compare_file(rs.name, c.image, (size_t)c.fsize))
            report_case(&rs);
        read_phase(&rs, info, ft, mt, &local);
        MPI_Info_free(&info);
    }
    if (rp->ft->kind != RV_BASIC)
        MPI_Type_free(&ft);
    if (rp->mt->kind != RV_BASIC)
        MPI_Type_free(&mt);
    rv_case_free(&c);
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    unsigned long long seed = 1;
    int cases = 60, verbose = 0, check_types = 0, tight = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--cases") == 0 && i + 1 < argc)
            cases = atoi(argv[++i]);
        else if (strcmp(argv[i], "--verbose") == 0)
            verbose = 1;
        else if (strcmp(argv[i], "--tight-views") == 0)
            tight = 1;
        else if (strcmp(argv[i], "--check-types") == 0)
            check_types = 1;
        else if (strcmp(argv[i], "--only-types") == 0)
            check_types = 2;
    }
    for (int i = 0; i < cases; i++)
        run_case(seed + (unsigned long long)i, tight, verbose, check_types);
    return amptest_finish();
}
