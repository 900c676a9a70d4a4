/* The collective differential matrix: algorithm x aggregator count x collective buffer x view
 * shape, written with MPI_File_write_all, read back with MPI_File_read_all and read_at_all,
 * checked against a model of the file computed here, and compared with the native MPI-IO.
 *
 *   coll_matrix OUTDIR [SHAPES [rounds]]
 * SHAPES: names below separated by commas, or all (the default); "rounds": only the small
 * collective buffer (many rounds), not the one round of 16 MiB. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amptest.h"

enum { CONTIG, VECTOR, SUB2D, SUB3D, DARRAY, HOLES, RESIZED, EMPTY, NSHAPES };
static const char *shape_names[NSHAPES] = {"contig", "vector", "sub2d",   "sub3d",
                                           "darray", "holes",  "resized", "empty"};

/* A rank's part: its filetype, displacement, and the file offset of each of its ints. */
typedef struct {
    MPI_Datatype ft;
    MPI_Offset disp;
    int n;            /* ints this rank writes */
    MPI_Offset *off;  /* model: byte offset of int k */
    MPI_Offset fsize; /* model: size of the whole file */
} part_t;

static void dims(int nd, int *d)
{
    for (int i = 0; i < nd; i++)
        d[i] = 0;
    MPI_Dims_create(amptest_size, nd, d);
}

/* Offsets of a C-order subarray of `sizes` starting at `starts` with `sub` elements. */
static int sub_offsets(int nd, const int *sizes, const int *sub, const int *starts, MPI_Offset *off)
{
    int idx[3] = {0, 0, 0}, n = 0;
    for (;;) {
        MPI_Offset e = 0;
        for (int d = 0; d < nd; d++)
            e = e * sizes[d] + starts[d] + idx[d];
        off[n++] = e * 4;
        int d = nd - 1;
        while (d >= 0 && ++idx[d] == sub[d])
            idx[d--] = 0;
        if (d < 0)
            return n;
    }
}

static void make_part(int shape, part_t *p)
{
    int P = amptest_size, r = amptest_rank;
    memset(p, 0, sizeof(*p));
    p->off = malloc(64 * 1024 * sizeof(MPI_Offset));
    switch (shape) {
    case CONTIG: { /* uneven contiguous blocks */
        int n = 1500 + 37 * r;
        MPI_Offset before = 0;
        for (int q = 0; q < r; q++)
            before += 1500 + 37 * q;
        MPI_Type_contiguous(n, MPI_INT, &p->ft);
        p->disp = before * 4;
        p->n = n;
        for (int k = 0; k < n; k++)
            p->off[k] = p->disp + 4 * k;
        MPI_Offset all = 0;
        for (int q = 0; q < P; q++)
            all += 1500 + 37 * q;
        p->fsize = all * 4;
        break;
    }
    case VECTOR: { /* blocks of 5 ints interleaved between ranks */
        int blocks = 300;
        MPI_Type_vector(blocks, 5, 5 * P, MPI_INT, &p->ft);
        p->disp = (MPI_Offset)r * 5 * 4;
        p->n = blocks * 5;
        for (int b = 0, k = 0; b < blocks; b++)
            for (int i = 0; i < 5; i++)
                p->off[k++] = p->disp + ((MPI_Offset)b * 5 * P + i) * 4;
        p->fsize = (MPI_Offset)blocks * 5 * P * 4;
        break;
    }
    case SUB2D: { /* tiles of a 2-D array on the process grid */
        int d[2];
        dims(2, d);
        int tile[2] = {24, 40}, sizes[2] = {d[0] * tile[0], d[1] * tile[1]};
        int starts[2] = {(r / d[1]) * tile[0], (r % d[1]) * tile[1]};
        MPI_Type_create_subarray(2, sizes, tile, starts, MPI_ORDER_C, MPI_INT, &p->ft);
        p->n = sub_offsets(2, sizes, tile, starts, p->off);
        p->fsize = (MPI_Offset)sizes[0] * sizes[1] * 4;
        break;
    }
    case SUB3D: {
        int d[3];
        dims(3, d);
        int tile[3] = {6, 10, 12}, sizes[3], starts[3],
            c[3] = {r / (d[1] * d[2]), (r / d[2]) % d[1], r % d[2]};
        for (int i = 0; i < 3; i++) {
            sizes[i] = d[i] * tile[i];
            starts[i] = c[i] * tile[i];
        }
        MPI_Type_create_subarray(3, sizes, tile, starts, MPI_ORDER_C, MPI_INT, &p->ft);
        p->n = sub_offsets(3, sizes, tile, starts, p->off);
        p->fsize = (MPI_Offset)sizes[0] * sizes[1] * sizes[2] * 4;
        break;
    }
    case DARRAY: { /* rows cyclic(2), columns block, over the process grid */
        int d[2];
        dims(2, d);
        int gs[2] = {13 * d[0] + 3, 17 * d[1] + 2};
        int distr[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
        int dargs[2] = {2, MPI_DISTRIBUTE_DFLT_DARG};
        MPI_Type_create_darray(P, r, 2, gs, distr, dargs, d, MPI_ORDER_C, MPI_INT, &p->ft);
        int cr = r / d[1], cc = r % d[1], bc = (gs[1] + d[1] - 1) / d[1];
        for (int row = 0; row < gs[0]; row++) {
            if ((row / 2) % d[0] != cr)
                continue;
            for (int col = cc * bc; col < (cc + 1) * bc && col < gs[1]; col++)
                p->off[p->n++] = ((MPI_Offset)row * gs[1] + col) * 4;
        }
        p->fsize = (MPI_Offset)gs[0] * gs[1] * 4;
        break;
    }
    case HOLES: { /* 6 ints in each rank's tile of 10, tiles of all ranks interleaved */
        int bl[3] = {2, 3, 1}, dp[3] = {0, 4, 8};
        MPI_Datatype idx;
        MPI_Type_indexed(3, bl, dp, MPI_INT, &idx);
        MPI_Type_create_resized(idx, 0, (MPI_Aint)P * 40, &p->ft);
        MPI_Type_free(&idx);
        p->disp = (MPI_Offset)r * 40;
        int tiles = 250;
        for (int t = 0; t < tiles; t++)
            for (int b = 0; b < 3; b++)
                for (int i = 0; i < bl[b]; i++)
                    p->off[p->n++] = p->disp + (MPI_Offset)t * P * 40 + (dp[b] + i) * 4;
        /* the file ends with the last int written */
        p->fsize = (MPI_Offset)(tiles - 1) * P * 40 + (MPI_Offset)(P - 1) * 40 + 9 * 4;
        break;
    }
    case RESIZED: { /* two ints 8 bytes apart, one record of 16 bytes per rank and tile */
        MPI_Aint displs[2] = {0, 8};
        int lens[2] = {1, 1};
        MPI_Datatype pair;
        MPI_Type_create_hindexed(2, lens, displs, MPI_INT, &pair);
        MPI_Type_create_resized(pair, 0, (MPI_Aint)P * 16, &p->ft);
        MPI_Type_free(&pair);
        p->disp = (MPI_Offset)r * 16;
        int tiles = 700;
        for (int t = 0; t < tiles; t++)
            for (int i = 0; i < 2; i++)
                p->off[p->n++] = p->disp + (MPI_Offset)t * P * 16 + 8 * i;
        p->fsize = (MPI_Offset)(tiles - 1) * P * 16 + (MPI_Offset)(P - 1) * 16 + 12;
        break;
    }
    case EMPTY: /* odd ranks have nothing to write; even ranks contiguous blocks */
        MPI_Type_contiguous(1000, MPI_INT, &p->ft);
        p->disp = (MPI_Offset)(r / 2) * 4000;
        p->n = r % 2 ? 0 : 1000;
        for (int k = 0; k < p->n; k++)
            p->off[k] = p->disp + 4 * k;
        p->fsize = (MPI_Offset)((P + 1) / 2) * 4000;
        break;
    }
    MPI_Type_commit(&p->ft);
}

static int value(int rank, int k)
{
    return rank * 1000003 + k;
}

/* One configuration: write, check the file, read back two ways. */
static void run(int shape, const char *fcoll, int naggr, const char *cb, int noncontig_mem)
{
    char name[128];
    snprintf(name, sizeof(name), "%s.%s.a%d.cb%s%s.dat", shape_names[shape], fcoll, naggr, cb,
             noncontig_mem ? ".nc" : "");
    part_t p;
    make_part(shape, &p);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "ampio_fcoll", fcoll);
    char text[32];
    snprintf(text, sizeof(text), "%d", naggr);
    MPI_Info_set(info, "cb_nodes", text);
    MPI_Info_set(info, "cb_buffer_size", cb);
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_cb_read", "enable");
    if (strcmp(fcoll, "stripe") == 0) { /* a layout by hints: 3 targets of 2 KiB stripes, and up
                                         * to 2 aggregators per target (4 with 3 targets) */
        MPI_Info_set(info, "striping_unit", "2048");
        MPI_Info_set(info, "striping_factor", "3");
        MPI_Info_set(info, "romio_lustre_co_ratio", "2");
    }
    /* the round engine with and without overlap of file access and messages, alternately */
    static int configs;
    MPI_Info_set(info, "ampio_pipeline", configs++ % 2 ? "false" : "true");

    /* memory: contiguous, or every other int of a buffer twice as large */
    int *buf = malloc((size_t)(2 * p.n + 2) * sizeof(int));
    MPI_Datatype mt = MPI_INT;
    int count = p.n;
    if (noncontig_mem) {
        MPI_Type_vector(p.n, 1, 2, MPI_INT, &mt);
        MPI_Type_commit(&mt);
        count = p.n > 0 ? 1 : 0;
        for (int k = 0; k < 2 * p.n; k++)
            buf[k] = k % 2 ? -1 : value(amptest_rank, k / 2);
    } else {
        for (int k = 0; k < p.n; k++)
            buf[k] = value(amptest_rank, k);
    }

    MPI_File fh;
    int ok = amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name),
                                      MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
                        name);
    if (ok) {
        amptest_ok(MPI_File_set_view(fh, p.disp, MPI_INT, p.ft, "native", info), "set_view");
        MPI_Status st;
        amptest_ok(MPI_File_write_all(fh, buf, count, mt, &st), "write_all");
        int got = -1;
        MPI_Get_count(&st, mt, &got);
        amptest_check(got == count, "%s: write_all count %d, expected %d", name, got, count);
        /* a collective call in which nobody has data */
        amptest_ok(MPI_File_write_at_all(fh, 0, buf, 0, MPI_INT, &st), "empty write_at_all");
        amptest_ok(MPI_File_close(&fh), "close");
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (amptest_rank == 0) { /* the model of the whole file */
        unsigned char *model = calloc((size_t)p.fsize + 1, 1);
        for (int q = 0; q < amptest_size; q++) {
            int save = amptest_rank;
            amptest_rank = q; /* the parts of other ranks, computed the same way */
            part_t o;
            make_part(shape, &o);
            amptest_rank = save;
            for (int k = 0; k < o.n; k++) {
                int v = value(q, k);
                memcpy(model + o.off[k], &v, 4);
            }
            MPI_Type_free(&o.ft);
            free(o.off);
        }
        amptest_compare_file(name, model, (size_t)p.fsize);
        free(model);
    }

    if (ok &&
        amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name), MPI_MODE_RDONLY, info, &fh),
                   "reopen")) {
        amptest_ok(MPI_File_set_view(fh, p.disp, MPI_INT, p.ft, "native", info), "set_view");
        int *back = malloc((size_t)(2 * p.n + 2) * sizeof(int));
        for (int pass = 0; pass < 2; pass++) {
            for (int k = 0; k < 2 * p.n + 2; k++)
                back[k] = -7;
            MPI_Status st;
            if (pass == 0)
                amptest_ok(MPI_File_read_all(fh, back, count, mt, &st), "read_all");
            else
                amptest_ok(MPI_File_read_at_all(fh, 0, back, count, mt, &st), "read_at_all");
            int bad = 0;
            for (int k = 0; k < p.n && !bad; k++) {
                int at = noncontig_mem ? 2 * k : k;
                if (back[at] != value(amptest_rank, k))
                    bad = amptest_check(0, "%s pass %d: int %d is %d, expected %d", name, pass, k,
                                        back[at], value(amptest_rank, k)) == 0;
                if (noncontig_mem && back[at + 1] != -7)
                    bad =
                        amptest_check(0, "%s: read wrote into a gap of the memory type", name) == 0;
            }
        }
        free(back);
        amptest_ok(MPI_File_close(&fh), "close");
    }
    if (noncontig_mem)
        MPI_Type_free(&mt);
    MPI_Type_free(&p.ft);
    MPI_Info_free(&info);
    free(p.off);
    free(buf);
}

/* Whether `name` is one of the comma-separated names of `list`. */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    const char *only = argc > 2 && strcmp(argv[2], "all") != 0 ? argv[2] : NULL;
    int rounds_only = argc > 3 && !strcmp(argv[3], "rounds");
    const char *fcolls[] = {"two_phase", "dynamic_seg", "static_seg", "stripe", "individual"};
    int P = amptest_size;
    int naggrs[3] = {1, P > 2 ? 2 : P, P};
    for (int s = 0; s < NSHAPES; s++) {
        if (only && !listed(only, shape_names[s]))
            continue;
        for (int f = 0; f < 5; f++)
            for (int a = 0; a < 3; a++) {
                if (a > 0 && naggrs[a] == naggrs[a - 1])
                    continue;
                if (f == 4 && a > 0)
                    continue; /* individual has no aggregators */
                run(s, fcolls[f], naggrs[a], "4096", a == 1);
                if (!rounds_only)
                    run(s, fcolls[f], naggrs[a], "16M", 0);
            }
    }
    return amptest_finish();
}
