#include "rv_case.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amptest.h"

#define STREAM_BUDGET (16 * 1024)  /* most data bytes one rank accesses in a case */
#define SPAN_BUDGET   (256 * 1024) /* and the file span that data may be spread over */

void rv_layout_init(rv_layout *l, const rv_spec *t, long long base)
{
    l->t = t;
    l->base = base;
    l->prefix = malloc((size_t)(t->npieces + 1) * sizeof(long long));
    long long at = 0;
    for (int i = 0; i < t->npieces; i++) {
        l->prefix[i] = at;
        at += t->pieces[i].len;
    }
}

void rv_layout_free(rv_layout *l)
{
    free(l->prefix);
}

long long rv_layout_at(const rv_layout *l, long long pos, long long *run)
{
    const rv_spec *t = l->t;
    long long tile = pos / t->size, in = pos % t->size;
    int lo = 0, hi = t->npieces - 1; /* the last piece starting at or before `in` */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (l->prefix[mid] <= in)
            lo = mid;
        else
            hi = mid - 1;
    }
    const rv_piece *p = &t->pieces[lo];
    *run = p->len - (in - l->prefix[lo]);
    return l->base + tile * (t->ub - t->lb) + p->off + (in - l->prefix[lo]);
}

const char *rv_family_name(int fam, int write)
{
    static const char *names[2][FAM_COUNT] = {
        {"read_at_all", "read_all", "read_at", "read", "iread_at", "iread", "read_all_split",
         "read_at_all_split", "iread_at_all", "iread_all"},
        {"write_at_all", "write_all", "write_at", "write", "iwrite_at", "iwrite", "write_all_split",
         "write_at_all_split", "iwrite_at_all", "iwrite_all"}};
    return names[write != 0][fam];
}

static long long round_up(long long v, long long g)
{
    return (v + g - 1) / g * g;
}

/* Filetypes and displacements of all ranks. */
static void make_views(rv_case *c, rv_rng *cr)
{
    int P = c->nprocs, g = c->granule;
    rv_ctx fctx = {g, 0, 4096, 16384};
    long long base = (long long)rv_int(cr, 0, 16) * g;
    rv_rng start = *cr, t = *cr;
    if (c->view == VIEW_PARTITION) {
        for (int q = 0; q < P; q++) {
            t = start; /* the same draws on every rank: only the rank's own part differs */
            rv_spec *ft = rv_partition(&t, &fctx, P, q);
            int wrap = rv_int(&t, 0, 2);
            if (wrap == 1)
                ft = rv_contiguous(ft, rv_int(&t, 2, 3));
            else if (wrap == 2)
                ft = rv_resized(ft, 0, ft->ub + (long long)rv_int(&t, 1, 8) * g);
            c->rank[q].ft = ft;
            c->rank[q].disp = base;
        }
        *cr = t;
        return;
    }
    int depth = rv_int(cr, 1, 3);
    long long slot = 0;
    start = *cr;
    for (int q = 0; q < P; q++) { /* a tile per rank, then one slot of the file per tile */
        rv_rng own = rv_seeded(c->seed, 100 + (uint64_t)q);
        t = start;
        rv_spec *tile = rv_generate(c->view == VIEW_TILED_SAME ? &t : &own, &fctx, depth);
        if (tile->true_ub > slot)
            slot = tile->true_ub;
        c->rank[q].ft = tile;
    }
    *cr = t;
    slot = round_up(slot, g) + (long long)rv_int(cr, 0, 3) * g;
    int plain = P == 1 && rv_chance(cr, 50) && !c->tight;
    /* The data of rank q lies in slot q of every P slots of the file. Its filetype may hold it
     * `shift` bytes further, the displacement being that much lower: then the data of one
     * filetype runs past its extent into where the next one starts. */
    long long shift = 0;
    if (!plain && rv_chance(cr, 50))
        shift = (long long)rv_int(cr, 0, (int)(P * slot / g)) * g;
    if (c->tight)
        shift = 0;
    base += shift;
    for (int q = 0; q < P; q++) {
        rv_spec *tile = c->rank[q].ft;
        rv_rng own = rv_seeded(c->seed, 200 + (uint64_t)q);
        long long lb = rv_chance(&own, 50) ? 0 : rv_int(&own, 0, (int)(tile->true_lb / g)) * g;
        if (!plain)
            c->rank[q].ft = rv_resized(shift ? rv_shifted(tile, shift) : tile, shift + lb,
                                       (long long)P * slot);
        c->rank[q].disp = base + (long long)q * slot - shift;
    }
}

/* Memory type, counts and offsets of rank q's accesses. */
static void make_accesses(rv_case *c, int q)
{
    rv_rank_plan *rp = &c->rank[q];
    rv_rng mr = rv_seeded(c->seed, 1000 + (uint64_t)q);
    int g = c->granule;
    rv_ctx mctx = {g, 1, 2048, 8192};
    long long fsz = rp->ft->size, fext = rp->ft->ub - rp->ft->lb;
    long long tiles = SPAN_BUDGET / fext > 1 ? SPAN_BUDGET / fext : 1;
    long long budget = fsz * tiles < STREAM_BUDGET ? fsz * tiles : STREAM_BUDGET;
    if (budget < g)
        budget = g;
    rp->mt = rv_generate(&mr, &mctx, rv_chance(&mr, 35) ? 0 : rv_int(&mr, 1, 3));
    if (rp->mt->size * 2 > budget) {
        rv_free(rp->mt);
        rp->mt = rv_generate(&mr, &mctx, 0);
    }
    long long msz = rp->mt->size;
    int idle = rv_chance(&mr, 10);
    long long most = budget / (c->nops * msz);
    for (int j = 0; j < c->nops; j++)
        rp->count[j] = idle || rv_chance(&mr, 15) ? 0 : rv_int(&mr, 1, most > 1 ? (int)most : 1);
    /* disjoint ranges of the view, taken in a random order */
    int order[RV_MAXOPS];
    for (int j = 0; j < c->nops; j++)
        order[j] = j;
    for (int j = c->nops - 1; j > 0; j--) {
        int k = rv_int(&mr, 0, j), s = order[j];
        order[j] = order[k];
        order[k] = s;
    }
    int tile_etypes = (int)(fsz / g);
    long long cursor = rv_chance(&mr, 50) ? 0 : rv_int(&mr, 0, tile_etypes);
    for (int i = 0; i < c->nops; i++) {
        int j = order[i];
        if (rv_chance(&mr, 50))
            cursor += rv_int(&mr, 0, tile_etypes);
        rp->offset[j] = cursor;
        cursor += rp->count[j] * msz / g;
    }
    long long stream = 0;
    for (int j = 0; j < c->nops; j++) {
        rp->stream[j] = stream;
        stream += rp->count[j] * msz;
    }
}

static void make_hints(rv_case *c, rv_rng *cr)
{
    static const char *fcoll[] = {"two_phase", "dynamic_seg", "static_seg", "individual", "auto"};
    static const char *cbsize[] = {"4096", "8192", "65536"}; /* ampio's least is 4096 */
    static const char *bufsize[] = {"512", "4096"};
    static const char *toggle[] = {"enable", "disable", "automatic"};
    static const char *nodes[] = {"1", "2", "3", "4", "5", "6", "7", "8"};
    int n = 0;
#define HINT(key, val)                                                                             \
    do {                                                                                           \
        c->hint_key[n] = key;                                                                      \
        c->hint_val[n++] = val;                                                                    \
    } while (0)
    if (rv_chance(cr, 60))
        HINT("ampio_fcoll", fcoll[rv_int(cr, 0, 4)]);
    if (rv_chance(cr, 40))
        HINT("cb_buffer_size", cbsize[rv_int(cr, 0, 2)]);
    if (rv_chance(cr, 30))
        HINT("romio_ds_write", toggle[rv_int(cr, 0, 1)]);
    if (rv_chance(cr, 20))
        HINT("romio_ds_read", toggle[rv_int(cr, 0, 1)]);
    if (rv_chance(cr, 30))
        HINT("romio_cb_write", toggle[rv_int(cr, 0, 2)]);
    if (rv_chance(cr, 20))
        HINT("romio_cb_read", toggle[rv_int(cr, 0, 2)]);
    if (rv_chance(cr, 30))
        HINT("cb_nodes", nodes[rv_int(cr, 0, c->nprocs - 1 < 7 ? c->nprocs - 1 : 7)]);
    if (rv_chance(cr, 15))
        HINT("ind_wr_buffer_size", bufsize[rv_int(cr, 0, 1)]);
#undef HINT
    c->nhints = n;
}

/* The file every rank's writes produce: rank q's data byte k is amptest_byte(q, k). */
static void make_image(rv_case *c)
{
    long long fsize = 0;
    for (int q = 0; q < c->nprocs; q++) {
        rv_rank_plan *rp = &c->rank[q];
        rv_layout fl;
        rv_layout_init(&fl, rp->ft, rp->disp);
        for (int j = 0; j < c->nops; j++) {
            long long n = rp->count[j] * rp->mt->size, run;
            if (n == 0)
                continue;
            long long end = rv_layout_at(&fl, rp->offset[j] * c->granule + n - 1, &run) + 1;
            if (end > fsize)
                fsize = end;
        }
        rv_layout_free(&fl);
    }
    c->fsize = fsize;
    c->image = calloc((size_t)fsize + 1, 1);
    for (int q = 0; q < c->nprocs; q++) {
        rv_rank_plan *rp = &c->rank[q];
        rv_layout fl;
        rv_layout_init(&fl, rp->ft, rp->disp);
        for (int j = 0; j < c->nops; j++) {
            long long n = rp->count[j] * rp->mt->size, pos = rp->offset[j] * c->granule, run;
            for (long long k = 0; k < n;) {
                long long off = rv_layout_at(&fl, pos + k, &run);
                for (long long i = 0; i < run && k < n; i++, k++)
                    c->image[off + i] = amptest_byte(q, rp->stream[j] + k);
            }
        }
        rv_layout_free(&fl);
    }
}

void rv_case_make(rv_case *c, unsigned long long seed, int nprocs, int tight)
{
    memset(c, 0, sizeof(*c));
    c->seed = seed;
    c->tight = tight;
    c->nprocs = nprocs;
    c->rank = calloc((size_t)nprocs, sizeof(rv_rank_plan));
    rv_rng cr = rv_seeded(seed, 0);
    int gr = rv_int(&cr, 0, 9);
    c->granule = gr < 5 ? 1 : gr < 8 ? 4 : 8;
    c->view = rv_int(&cr, 0, 2);
    c->nops = rv_int(&cr, 1, RV_MAXOPS);
    for (int j = 0; j < c->nops; j++) {
        c->wfam[j] = rv_int(&cr, 0, FAM_COUNT - 1);
        c->rfam[j] = rv_int(&cr, 0, FAM_COUNT - 1);
    }
    static const int full[] = {FAM_AT_ALL, FAM_AT, FAM_ALL, FAM_IAT_ALL};
    c->full_fam = full[rv_int(&cr, 0, 3)];
    c->truncate = rv_chance(&cr, 30);
    c->wait_early = rv_chance(&cr, 50);
    c->reopen_rdonly = rv_chance(&cr, 50);
    make_hints(c, &cr);
    make_views(c, &cr);
    for (int q = 0; q < nprocs; q++)
        make_accesses(c, q);
    make_image(c);
}

void rv_case_free(rv_case *c)
{
    for (int q = 0; q < c->nprocs; q++) {
        rv_free(c->rank[q].ft);
        rv_free(c->rank[q].mt);
    }
    free(c->rank);
    free(c->image);
}

void rv_case_describe(const rv_case *c, int rank, char *buf, size_t len)
{
    static const char *views[] = {"tiled-same", "tiled-own", "partition"};
    static const char *etypes[] = {"?", "byte", "?", "?", "int", "?", "?", "?", "double"};
    const rv_rank_plan *rp = &c->rank[rank];
    char ft[2048], mt[1024];
    rv_describe(rp->ft, ft, sizeof(ft));
    rv_describe(rp->mt, mt, sizeof(mt));
    size_t at = 0;
    at += (size_t)snprintf(buf + at, len - at,
                           "seed=%llu np=%d rank=%d etype=%s view=%s disp=%lld ft=%s mt=%s ops=",
                           c->seed, c->nprocs, rank, etypes[c->granule], views[c->view], rp->disp,
                           ft, mt);
    for (int j = 0; j < c->nops && at < len; j++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s/%s:%d@%lld", j ? "," : "",
                               rv_family_name(c->wfam[j], 1), rv_family_name(c->rfam[j], 0),
                               rp->count[j], rp->offset[j]);
    if (at < len)
        at += (size_t)snprintf(buf + at, len - at, " full=%s%s%s%s hints=",
                               rv_family_name(c->full_fam, 0), c->truncate ? " truncate" : "",
                               c->wait_early ? " wait-early" : "",
                               c->reopen_rdonly ? " rdonly" : "");
    for (int h = 0; h < c->nhints && at < len; h++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s=%s", h ? "," : "", c->hint_key[h],
                               c->hint_val[h]);
}
