/* Nonblocking starts are local: programs that are valid only if MPI_File_i*_all and the split
 * collectives' *_begin return without waiting for the other ranks. Each scenario passes a
 * token along the ranks between the starts (a rank starts its access only after the previous
 * rank has started and sent), in both directions, with several accesses outstanding, completed
 * in another order than started, and mixed with ordinary requests in one MPI_Waitall. Data are
 * interleaved in 1 KiB chunks through a file view, so that the collective path aggregates and
 * exchanges messages while the accesses are outstanding. Every file is compared byte for byte
 * with a model, and with the native MPI-IO by diff.sh; reads are checked against the model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amptest.h"

#define CHUNK  1024
#define NCH    24 /* chunks per rank per access */
#define NOPS   3  /* accesses outstanding per scenario */
#define PER_OP ((long long)CHUNK * NCH)

static MPI_Datatype filetype;

/* Byte i of this rank's data for access `op`. */
static unsigned char datum(int rank, int op, long long i)
{
    return amptest_byte(rank, op * PER_OP + i);
}

static void fill(unsigned char *buf, int op)
{
    for (long long i = 0; i < PER_OP; i++)
        buf[i] = datum(amptest_rank, op, i);
}

/* The file of NOPS accesses: chunk g of access op belongs to rank g % np. */
static unsigned char *model(size_t *len)
{
    int np = amptest_size;
    *len = (size_t)(NOPS * PER_OP * np);
    unsigned char *m = malloc(*len);
    for (int op = 0; op < NOPS; op++)
        for (long long g = 0; g < (long long)NCH * np; g++)
            for (int i = 0; i < CHUNK; i++)
                m[(op * NCH * np + g) * CHUNK + i] = datum((int)(g % np), op, (g / np) * CHUNK + i);
    return m;
}

static MPI_File open_file(const char *name, int amode)
{
    MPI_File fh;
    amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name), amode, MPI_INFO_NULL, &fh), name);
    amptest_ok(MPI_File_set_view(fh, (MPI_Offset)amptest_rank * CHUNK, MPI_BYTE, filetype, "native",
                                 MPI_INFO_NULL),
               "set_view");
    return fh;
}

/* Token passing: `prev` then `next` in the chain (forward: rank order; backward: reversed). */
static void token_recv(int forward)
{
    int from = forward ? amptest_rank - 1 : amptest_rank + 1, token;
    if (from >= 0 && from < amptest_size)
        MPI_Recv(&token, 1, MPI_INT, from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void token_send(int forward)
{
    int to = forward ? amptest_rank + 1 : amptest_rank - 1, token = amptest_rank;
    if (to >= 0 && to < amptest_size)
        MPI_Send(&token, 1, MPI_INT, to, 7, MPI_COMM_WORLD);
}

enum { EXPLICIT, INDIVIDUAL, SPLIT };

/* Starts access `op` of `how`. */
static MPI_Request start(MPI_File fh, int how, int write, int op, unsigned char *buf)
{
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Offset at = op * PER_OP;
    int rc;
    switch (how) {
    case EXPLICIT:
        rc = write ? MPI_File_iwrite_at_all(fh, at, buf, (int)PER_OP, MPI_BYTE, &req)
                   : MPI_File_iread_at_all(fh, at, buf, (int)PER_OP, MPI_BYTE, &req);
        break;
    case INDIVIDUAL:
        rc = write ? MPI_File_iwrite_all(fh, buf, (int)PER_OP, MPI_BYTE, &req)
                   : MPI_File_iread_all(fh, buf, (int)PER_OP, MPI_BYTE, &req);
        break;
    default:
        rc = write ? MPI_File_write_at_all_begin(fh, at, buf, (int)PER_OP, MPI_BYTE)
                   : MPI_File_read_at_all_begin(fh, at, buf, (int)PER_OP, MPI_BYTE);
        break;
    }
    amptest_ok(rc, write ? "nonblocking collective write start" : "nonblocking read start");
    return req;
}

static void check_read(const unsigned char *buf, int op, const char *what)
{
    for (long long i = 0; i < PER_OP; i++)
        if (buf[i] != datum(amptest_rank, op, i)) {
            amptest_fail("%s: access %d byte %lld is %u, expected %u", what, op, i, buf[i],
                         datum(amptest_rank, op, i));
            return;
        }
}

static void check_status(MPI_Status *st, const char *what)
{
    int n = -1;
    MPI_Get_count(st, MPI_BYTE, &n);
    amptest_check(n == (int)PER_OP, "%s: status counts %d bytes, expected %lld", what, n, PER_OP);
}

/* One scenario: NOPS writes started along the token chain (`forward` or backward), then
 * completed last first; then NOPS reads the same way; the file against the model. `mixed`:
 * completion is one MPI_Waitall over the accesses and a pair of ordinary requests. */
static void scenario(const char *name, int how, int forward, int mixed)
{
    unsigned char *buf[NOPS], *got[NOPS];
    MPI_Request req[NOPS + 2];
    MPI_Status st[NOPS + 2];
    MPI_File fh = open_file(name, MPI_MODE_CREATE | MPI_MODE_RDWR);
    int nops = how == SPLIT ? 1 : NOPS; /* one split collective at a time per file */
    char what[128];

    for (int pass = 0; pass < 2; pass++) {
        int write = pass == 0;
        if (how == INDIVIDUAL)
            MPI_File_seek(fh, 0, MPI_SEEK_SET);
        for (int round = 0; round < NOPS; round += nops) {
            token_recv(forward);
            for (int k = 0; k < nops; k++) {
                int op = round + k;
                if (write) {
                    buf[op] = malloc(PER_OP);
                    fill(buf[op], op);
                } else {
                    got[op] = calloc(1, PER_OP);
                }
                req[k] = start(fh, how, write, op, write ? buf[op] : got[op]);
            }
            int nreq = nops;
            int token = amptest_rank, in = -1;
            if (mixed) { /* an ordinary exchange completed together with the accesses */
                int right = (amptest_rank + 1) % amptest_size;
                int left = (amptest_rank + amptest_size - 1) % amptest_size;
                MPI_Irecv(&in, 1, MPI_INT, left, 8, MPI_COMM_WORLD, &req[nreq++]);
                MPI_Isend(&token, 1, MPI_INT, right, 8, MPI_COMM_WORLD, &req[nreq++]);
            }
            token_send(forward);
            snprintf(what, sizeof(what), "%s %s", name, write ? "write" : "read");
            if (how == SPLIT) {
                int rc = write ? MPI_File_write_at_all_end(fh, buf[round], &st[0])
                               : MPI_File_read_at_all_end(fh, got[round], &st[0]);
                amptest_ok(rc, what);
                check_status(&st[0], what);
            } else if (mixed) {
                amptest_ok(MPI_Waitall(nreq, req, st), what);
                for (int k = 0; k < nops; k++)
                    check_status(&st[k], what);
                amptest_check(in == (amptest_rank + amptest_size - 1) % amptest_size,
                              "%s: the ordinary message carried %d", what, in);
            } else {
                for (int k = nops - 1; k >= 0; k--) { /* last started, first waited */
                    amptest_ok(MPI_Wait(&req[k], &st[k]), what);
                    check_status(&st[k], what);
                }
            }
            for (int k = 0; k < nops; k++)
                amptest_check(req[k] == MPI_REQUEST_NULL, "%s: request not freed", what);
        }
        if (write && how == INDIVIDUAL) {
            MPI_Offset pos = -1;
            MPI_File_get_position(fh, &pos);
            amptest_check(pos == NOPS * PER_OP, "%s: position %lld after the writes", name,
                          (long long)pos);
        }
    }
    amptest_ok(MPI_File_close(&fh), "close");
    for (int op = 0; op < NOPS; op++) {
        check_read(got[op], op, name);
        free(buf[op]);
        free(got[op]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (amptest_rank == 0) {
        size_t len;
        unsigned char *m = model(&len);
        amptest_compare_file(name, m, len);
        free(m);
    }
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    MPI_Datatype vec;
    MPI_Type_vector(NCH, CHUNK, CHUNK * amptest_size, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)NCH * CHUNK * amptest_size, &filetype);
    MPI_Type_commit(&filetype);
    MPI_Type_free(&vec);

    scenario("explicit_forward", EXPLICIT, 1, 0);
    scenario("explicit_backward", EXPLICIT, 0, 0);
    scenario("individual_forward", INDIVIDUAL, 1, 0);
    scenario("individual_backward_mixed", INDIVIDUAL, 0, 1);
    scenario("explicit_forward_mixed", EXPLICIT, 1, 1);
    scenario("split_forward", SPLIT, 1, 0);
    scenario("split_backward", SPLIT, 0, 0);

    MPI_Type_free(&filetype);
    return amptest_finish();
}
