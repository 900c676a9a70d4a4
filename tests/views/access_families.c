/* Every data access family (explicit offsets, individual pointer, nonblocking, collective,
 * split collective) on every view shape, with contiguous and noncontiguous memory, and the
 * shared-pointer families (shared, ordered, split ordered) on a common view with holes.
 * Each file is checked against a model of its bytes and read back with the same family. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amptest.h"

enum family {
    F_AT,
    F_AT_ALL,
    F_PTR,
    F_ALL,
    F_IAT,
    F_IPTR,
    F_IAT_ALL,
    F_IALL,
    F_SPLIT_AT,
    F_SPLIT,
    NFAMILIES
};
static const char *family_names[NFAMILIES] = {"at",   "at_all",  "ptr",  "all",      "iat",
                                              "iptr", "iat_all", "iall", "split_at", "split"};

enum shape { S_CONTIG, S_VECTOR, S_HOLES, S_TRIPLE, NSHAPES };
static const char *shape_names[NSHAPES] = {"contig", "vector", "holes", "triple"};

/* A rank's view: n ints, the byte offset of each, and the MPI description. */
typedef struct {
    int n;
    int ints_per_etype;
    MPI_Offset disp;
    MPI_Datatype etype, filetype;
} view_t;

static int value(int rank, int k)
{
    return rank * 100003 + k + 1; /* never 0, so holes stay visible */
}

static int contig_count(int r)
{
    return r == 1 ? 0 : 24 + 4 * r; /* rank 1 has nothing: zero-length ranks everywhere */
}

/* Byte offset in the file of int k of rank r under shape s. */
static MPI_Offset offset_of(int s, int r, int k)
{
    int P = amptest_size;
    static const int holes_pos[6] = {0, 1, 4, 7, 8, 9};
    switch (s) {
    case S_CONTIG: {
        MPI_Offset before = 0;
        for (int q = 0; q < r; q++)
            before += contig_count(q);
        return 4 * (before + k);
    }
    case S_VECTOR:
        return 12 * (MPI_Offset)r + 4 * ((MPI_Offset)(k / 3) * 3 * P + k % 3);
    case S_HOLES:
        return 64 + 48 * (MPI_Offset)r + (MPI_Offset)(k / 6) * 48 * P + 4 * holes_pos[k % 6];
    default: /* S_TRIPLE */
        return 12 * (MPI_Offset)r + (MPI_Offset)(k / 3) * 12 * P + 4 * (k % 3);
    }
}

static int count_of(int s, int r)
{
    switch (s) {
    case S_CONTIG:
        return contig_count(r);
    case S_VECTOR:
        return 24;
    case S_HOLES:
        return 18;
    default:
        return 12;
    }
}

static void make_view(int s, view_t *v)
{
    int P = amptest_size, r = amptest_rank;
    MPI_Datatype t;
    v->n = count_of(s, r);
    v->ints_per_etype = 1;
    v->etype = MPI_INT;
    switch (s) {
    case S_CONTIG:
        v->disp = offset_of(s, r, 0);
        MPI_Type_dup(MPI_INT, &v->filetype);
        break;
    case S_VECTOR:
        v->disp = 12 * (MPI_Offset)r;
        MPI_Type_vector(8, 3, 3 * P, MPI_INT, &t);
        MPI_Type_create_resized(t, 0, (MPI_Aint)8 * 3 * P * 4, &v->filetype);
        MPI_Type_free(&t);
        break;
    case S_HOLES: {
        int bl[3] = {2, 1, 3}, dl[3] = {0, 4, 7};
        v->disp = 64 + 48 * (MPI_Offset)r;
        MPI_Type_indexed(3, bl, dl, MPI_INT, &t);
        MPI_Type_create_resized(t, 0, (MPI_Aint)48 * P, &v->filetype);
        MPI_Type_free(&t);
        break;
    }
    default: /* an etype of three ints, placed every P-th triple */
        v->ints_per_etype = 3;
        v->disp = 12 * (MPI_Offset)r;
        MPI_Type_contiguous(3, MPI_INT, &v->etype);
        MPI_Type_commit(&v->etype);
        MPI_Type_vector(1, 1, P, v->etype, &t);
        MPI_Type_create_resized(t, 0, (MPI_Aint)12 * P, &v->filetype);
        MPI_Type_free(&t);
        break;
    }
    MPI_Type_commit(&v->filetype);
}

static void free_view(view_t *v)
{
    MPI_Type_free(&v->filetype);
    if (v->etype != MPI_INT)
        MPI_Type_free(&v->etype);
}

/* Memory for ints [a, b): contiguous, or every other int of a buffer twice as large. */
typedef struct {
    void *addr;
    int count;
    MPI_Datatype type;
    int expect; /* what MPI_Get_count must say */
} mem_t;

static mem_t mem_piece(int *buf, int a, int b, int noncontig)
{
    mem_t m = {buf + (noncontig ? 2 * a : a), b - a, MPI_INT, b - a};
    if (noncontig && b > a) {
        MPI_Type_vector(b - a, 1, 2, MPI_INT, &m.type);
        MPI_Type_commit(&m.type);
        m.count = 1;
        m.expect = 1;
    }
    return m;
}

static void mem_done(mem_t *m)
{
    if (m->type != MPI_INT)
        MPI_Type_free(&m->type);
}

/* One access of ints [a, b) of this rank (offset a in etypes) through family f. */
static int access_piece(MPI_File fh, int f, int write, int *buf, int a, int b, int noncontig,
                        int ipe, const char *name)
{
    mem_t m = mem_piece(buf, a, b, noncontig);
    MPI_Offset off = a / ipe;
    MPI_Status st;
    MPI_Request req;
    int rc;
    memset(&st, 0, sizeof(st));
    if (f == F_PTR || f == F_ALL || f == F_IPTR || f == F_IALL || f == F_SPLIT) {
        if (a == 0)
            amptest_ok(MPI_File_seek(fh, 0, MPI_SEEK_SET), "seek");
    }
    switch (f) {
    case F_AT:
        rc = write ? MPI_File_write_at(fh, off, m.addr, m.count, m.type, &st)
                   : MPI_File_read_at(fh, off, m.addr, m.count, m.type, &st);
        break;
    case F_AT_ALL:
        rc = write ? MPI_File_write_at_all(fh, off, m.addr, m.count, m.type, &st)
                   : MPI_File_read_at_all(fh, off, m.addr, m.count, m.type, &st);
        break;
    case F_PTR:
        rc = write ? MPI_File_write(fh, m.addr, m.count, m.type, &st)
                   : MPI_File_read(fh, m.addr, m.count, m.type, &st);
        break;
    case F_ALL:
        rc = write ? MPI_File_write_all(fh, m.addr, m.count, m.type, &st)
                   : MPI_File_read_all(fh, m.addr, m.count, m.type, &st);
        break;
    case F_IAT:
    case F_IPTR:
    case F_IAT_ALL:
    case F_IALL:
        if (f == F_IAT)
            rc = write ? MPI_File_iwrite_at(fh, off, m.addr, m.count, m.type, &req)
                       : MPI_File_iread_at(fh, off, m.addr, m.count, m.type, &req);
        else if (f == F_IPTR)
            rc = write ? MPI_File_iwrite(fh, m.addr, m.count, m.type, &req)
                       : MPI_File_iread(fh, m.addr, m.count, m.type, &req);
        else if (f == F_IAT_ALL)
            rc = write ? MPI_File_iwrite_at_all(fh, off, m.addr, m.count, m.type, &req)
                       : MPI_File_iread_at_all(fh, off, m.addr, m.count, m.type, &req);
        else
            rc = write ? MPI_File_iwrite_all(fh, m.addr, m.count, m.type, &req)
                       : MPI_File_iread_all(fh, m.addr, m.count, m.type, &req);
        if (rc == MPI_SUCCESS) {
            if (write) {
                rc = MPI_Wait(&req, &st);
            } else { /* reads complete through MPI_Test */
                int done = 0;
                while (rc == MPI_SUCCESS && !done)
                    rc = MPI_Test(&req, &done, &st);
            }
        }
        break;
    case F_SPLIT_AT:
        rc = write ? MPI_File_write_at_all_begin(fh, off, m.addr, m.count, m.type)
                   : MPI_File_read_at_all_begin(fh, off, m.addr, m.count, m.type);
        if (rc == MPI_SUCCESS)
            rc = write ? MPI_File_write_at_all_end(fh, m.addr, &st)
                       : MPI_File_read_at_all_end(fh, m.addr, &st);
        break;
    default: /* F_SPLIT */
        rc = write ? MPI_File_write_all_begin(fh, m.addr, m.count, m.type)
                   : MPI_File_read_all_begin(fh, m.addr, m.count, m.type);
        if (rc == MPI_SUCCESS)
            rc = write ? MPI_File_write_all_end(fh, m.addr, &st)
                       : MPI_File_read_all_end(fh, m.addr, &st);
        break;
    }
    int ok = amptest_ok(rc, name);
    if (ok) {
        int got = -1;
        MPI_Get_count(&st, m.type, &got);
        ok = amptest_check(got == m.expect, "%s %s: count %d, expected %d", name,
                           write ? "write" : "read", got, m.expect);
    }
    mem_done(&m);
    return ok;
}

static int is_pointer_family(int f)
{
    return f == F_PTR || f == F_ALL || f == F_IPTR || f == F_IALL || f == F_SPLIT;
}

static void model_check(const char *name, MPI_Offset (*where)(int, int, int), int s,
                        int (*count)(int, int))
{
    if (amptest_rank != 0)
        return;
    MPI_Offset size = 0;
    for (int q = 0; q < amptest_size; q++)
        for (int k = 0; k < count(s, q); k++)
            if (where(s, q, k) + 4 > size)
                size = where(s, q, k) + 4;
    unsigned char *model = calloc((size_t)size + 1, 1);
    for (int q = 0; q < amptest_size; q++)
        for (int k = 0; k < count(s, q); k++) {
            int v = value(q, k);
            memcpy(model + where(s, q, k), &v, 4);
        }
    amptest_compare_file(name, model, (size_t)size);
    free(model);
}

static void run_family(int s, int f, int noncontig)
{
    char name[96];
    snprintf(name, sizeof(name), "%s.%s%s.dat", shape_names[s], family_names[f],
             noncontig ? ".nc" : "");
    view_t v;
    make_view(s, &v);
    int n = v.n, ipe = v.ints_per_etype;
    int half = (n / ipe / 2) * ipe;
    int *buf = malloc((size_t)(2 * n + 2) * sizeof(int));
    for (int k = 0; k < 2 * n + 2; k++)
        buf[k] = noncontig ? (k % 2 ? -1 : value(amptest_rank, k / 2)) : value(amptest_rank, k);

    MPI_File fh;
    if (!amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name),
                                  MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                    name)) {
        free(buf);
        free_view(&v);
        return;
    }
    amptest_ok(MPI_File_set_view(fh, v.disp, v.etype, v.filetype, "native", MPI_INFO_NULL),
               "set_view");
    access_piece(fh, f, 1, buf, 0, half, noncontig, ipe, name);
    access_piece(fh, f, 1, buf, half, n, noncontig, ipe, name);
    if (is_pointer_family(f)) {
        MPI_Offset pos = -1, byte = -1;
        amptest_ok(MPI_File_get_position(fh, &pos), "get_position");
        amptest_check(pos == n / ipe, "%s: position %lld after writing, expected %d", name,
                      (long long)pos, n / ipe);
        if (n > 0) { /* the byte offset of the last etype written */
            amptest_ok(MPI_File_get_byte_offset(fh, pos - 1, &byte), "get_byte_offset");
            MPI_Offset want = offset_of(s, amptest_rank, n - ipe);
            amptest_check(byte == want, "%s: byte offset %lld, expected %lld", name,
                          (long long)byte, (long long)want);
        }
    }
    amptest_ok(MPI_File_close(&fh), "close");
    MPI_Barrier(MPI_COMM_WORLD);
    model_check(name, offset_of, s, count_of);

    /* read back with the same family */
    int *back = malloc((size_t)(2 * n + 2) * sizeof(int));
    for (int k = 0; k < 2 * n + 2; k++)
        back[k] = -7;
    if (amptest_ok(
            MPI_File_open(MPI_COMM_WORLD, amptest_path(name), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
            name)) {
        amptest_ok(MPI_File_set_view(fh, v.disp, v.etype, v.filetype, "native", MPI_INFO_NULL),
                   "set_view");
        access_piece(fh, f, 0, back, 0, half, noncontig, ipe, name);
        access_piece(fh, f, 0, back, half, n, noncontig, ipe, name);
        amptest_ok(MPI_File_close(&fh), "close");
        for (int k = 0; k < n; k++) {
            int at = noncontig ? 2 * k : k;
            if (!amptest_check(back[at] == value(amptest_rank, k),
                               "%s: read back int %d = %d, expected %d", name, k, back[at],
                               value(amptest_rank, k)))
                break;
            if (noncontig &&
                !amptest_check(back[at + 1] == -7, "%s: read wrote into a memory gap", name))
                break;
        }
    }
    free(back);
    free(buf);
    free_view(&v);
}

/* The common view of the shared-pointer families: ints in pairs, two ints of hole after each
 * pair but the second, 16 bytes of header. */
static MPI_Offset shared_offset(int s, int r, int k)
{
    static const int pos[4] = {0, 1, 3, 4};
    MPI_Offset stream = 0;
    for (int q = 0; q < r; q++)
        stream += (MPI_Offset)(s * q % 7 == 3 ? 0 : 5 + 3 * q);
    stream += k;
    return 16 + (stream / 4) * 24 + 4 * pos[stream % 4];
}

static int shared_count(int s, int r)
{
    return s * r % 7 == 3 ? 0 : 5 + 3 * r; /* s is a salt: some ranks write nothing */
}

enum shared_family { SF_ORDERED, SF_SPLIT_ORDERED, SF_SHARED_TURNS, NSHARED };
static const char *shared_names[NSHARED] = {"ordered", "split_ordered", "shared_turns"};

/* Shared-pointer accesses in rank order: ordered calls, or each rank in its turn. */
static void shared_access(MPI_File fh, int sf, int write, int *buf, int n, const char *name)
{
    MPI_Status st;
    int rc = MPI_SUCCESS, got = -1;
    memset(&st, 0, sizeof(st));
    switch (sf) {
    case SF_ORDERED:
        rc = write ? MPI_File_write_ordered(fh, buf, n, MPI_INT, &st)
                   : MPI_File_read_ordered(fh, buf, n, MPI_INT, &st);
        break;
    case SF_SPLIT_ORDERED:
        rc = write ? MPI_File_write_ordered_begin(fh, buf, n, MPI_INT)
                   : MPI_File_read_ordered_begin(fh, buf, n, MPI_INT);
        if (rc == MPI_SUCCESS)
            rc = write ? MPI_File_write_ordered_end(fh, buf, &st)
                       : MPI_File_read_ordered_end(fh, buf, &st);
        break;
    default: /* first half blocking, second half nonblocking, one rank at a time */
        for (int turn = 0; turn < amptest_size; turn++) {
            if (turn == amptest_rank) {
                int h = n / 2;
                MPI_Request req;
                rc = write ? MPI_File_write_shared(fh, buf, h, MPI_INT, &st)
                           : MPI_File_read_shared(fh, buf, h, MPI_INT, &st);
                if (rc == MPI_SUCCESS)
                    rc = write ? MPI_File_iwrite_shared(fh, buf + h, n - h, MPI_INT, &req)
                               : MPI_File_iread_shared(fh, buf + h, n - h, MPI_INT, &req);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Wait(&req, &st);
                MPI_Get_count(&st, MPI_INT, &got);
                amptest_check(got == n - h, "%s: second half count %d, expected %d", name, got,
                              n - h);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        amptest_ok(rc, name);
        return;
    }
    if (amptest_ok(rc, name)) {
        MPI_Get_count(&st, MPI_INT, &got);
        amptest_check(got == n, "%s: count %d, expected %d", name, got, n);
    }
}

static void run_shared(int sf, int salt)
{
    char name[64];
    snprintf(name, sizeof(name), "shared%d.%s.dat", salt, shared_names[sf]);
    int n = shared_count(salt, amptest_rank), total = 0;
    for (int q = 0; q < amptest_size; q++)
        total += shared_count(salt, q);
    int *buf = malloc((size_t)(n + 1) * sizeof(int));
    for (int k = 0; k < n; k++)
        buf[k] = value(amptest_rank, k);
    MPI_Datatype t, ft;
    int bl[2] = {2, 2}, dl[2] = {0, 3};
    MPI_Type_indexed(2, bl, dl, MPI_INT, &t);
    MPI_Type_create_resized(t, 0, 24, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&t);

    MPI_File fh;
    if (amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name),
                                 MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                   name)) {
        amptest_ok(MPI_File_set_view(fh, 16, MPI_INT, ft, "native", MPI_INFO_NULL), "set_view");
        shared_access(fh, sf, 1, buf, n, name);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Offset pos = -1;
        amptest_ok(MPI_File_get_position_shared(fh, &pos), "get_position_shared");
        amptest_check(pos == total, "%s: shared position %lld, expected %d", name, (long long)pos,
                      total);
        amptest_ok(MPI_File_close(&fh), "close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    model_check(name, shared_offset, salt, shared_count);

    if (amptest_ok(
            MPI_File_open(MPI_COMM_WORLD, amptest_path(name), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
            name)) {
        amptest_ok(MPI_File_set_view(fh, 16, MPI_INT, ft, "native", MPI_INFO_NULL), "set_view");
        /* the view reset the shared pointer; move it away and back to exercise seek_shared */
        amptest_ok(MPI_File_seek_shared(fh, 3, MPI_SEEK_SET), "seek_shared");
        amptest_ok(MPI_File_seek_shared(fh, -3, MPI_SEEK_CUR), "seek_shared cur");
        for (int k = 0; k < n; k++)
            buf[k] = -7;
        shared_access(fh, sf, 0, buf, n, name);
        for (int k = 0; k < n; k++)
            if (!amptest_check(buf[k] == value(amptest_rank, k),
                               "%s: read back int %d = %d, expected %d", name, k, buf[k],
                               value(amptest_rank, k)))
                break;
        amptest_ok(MPI_File_close(&fh), "close");
    }
    MPI_Type_free(&ft);
    free(buf);
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    for (int s = 0; s < NSHAPES; s++)
        for (int f = 0; f < NFAMILIES; f++)
            for (int nc = 0; nc < 2; nc++)
                run_family(s, f, nc);
    for (int sf = 0; sf < NSHARED; sf++)
        for (int salt = 1; salt <= 2; salt++)
            run_shared(sf, salt);
    return amptest_finish();
}
