/* File views as the client libraries build them, reduced to plain MPI-IO.
 *
 *   client_views DIR [FCOLL]   FCOLL is passed as the ampio_fcoll hint
 *
 * records.dat: PnetCDF's view of a record variable, a struct of the header bytes at 0 and, far
 *   behind, an hvector of records whose element is a subarray type. Open MPI gives the struct
 *   the subarray's explicit ("sticky") lower bound, so the header bytes lie below the filetype's
 *   lb and one instance of the filetype spans more than its extent. Accesses start at view
 *   offset HEADER, past the header bytes, as PnetCDF's do. Rank r writes records r, r+P, ...
 *   collectively and reads them back.
 * chunks.dat: HDF5's collective fill of chunks: hindexed lists of chunk addresses (so filetypes
 *   whose lb is not 0) where rank 0's last chunk lies behind all the others' chunks, and a
 *   memory type repeating one chunk of fill bytes (hvector of stride 0). Written with two
 *   aggregators and small collective buffers, so that file domains cut through every rank's
 *   data.
 * Rank 0 compares both files with their models. */
#include <stdlib.h>
#include <string.h>

#include "amptest.h"

enum { HEADER = 512, VARSTART = 5632, NREC = 7, NVAL = 40, RECLEN = NVAL * 8, RECSIZE = 324 };
enum { CHUNK = 320, NCHUNK = 7, CHUNKSTART = 3768 };

static void records(MPI_Info info)
{
    int me = amptest_rank, P = amptest_size;
    MPI_File fh;
    amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path("records.dat"),
                             MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
               "open records.dat");
    unsigned char header[HEADER];
    for (int i = 0; i < HEADER; i++)
        header[i] = amptest_byte(-1, i);
    if (me == 0)
        amptest_ok(MPI_File_write_at(fh, 0, header, HEADER, MPI_BYTE, MPI_STATUS_IGNORE),
                   "write_at header");
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);

    int mine = (NREC - me + P - 1) / P;
    MPI_Datatype rec, recs, ft;
    int sizes[1] = {NVAL}, subsizes[1] = {NVAL}, starts[1] = {0};
    MPI_Type_create_subarray(1, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &rec);
    MPI_Type_create_hvector(mine, 1, (MPI_Aint)RECSIZE * P, rec, &recs);
    int blocklens[2] = {HEADER, 1};
    MPI_Aint disps[2] = {0, VARSTART + (MPI_Aint)me * RECSIZE};
    MPI_Datatype types[2] = {MPI_BYTE, recs};
    MPI_Type_create_struct(2, blocklens, disps, types, &ft);
    MPI_Type_commit(&ft);
    amptest_ok(MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", info), "set_view records");

    double buf[NVAL * NREC], back[NVAL * NREC];
    for (int k = 0; k < mine; k++)
        for (int v = 0; v < NVAL; v++)
            buf[k * NVAL + v] = (me + k * P) * 1000.0 + v * 0.5;
    MPI_Status st;
    int got = -1;
    amptest_ok(MPI_File_write_at_all(fh, HEADER, buf, mine * NVAL, MPI_DOUBLE, &st),
               "write_at_all records");
    MPI_Get_count(&st, MPI_DOUBLE, &got);
    amptest_check(got == mine * NVAL, "write_at_all wrote %d doubles of %d", got, mine * NVAL);
    memset(back, 0, sizeof(back));
    amptest_ok(MPI_File_read_at_all(fh, HEADER, back, mine * NVAL, MPI_DOUBLE, &st),
               "read_at_all records");
    if (memcmp(buf, back, sizeof(double) * NVAL * (size_t)mine) != 0)
        amptest_model_mismatch("records.dat", "read_at_all through the view returned other bytes");
    unsigned char hback[HEADER] = {0};
    amptest_ok(MPI_File_read_at_all(fh, 0, hback, HEADER, MPI_BYTE, &st), "read_at_all header");
    if (memcmp(hback, header, HEADER) != 0)
        amptest_model_mismatch("records.dat", "the header read through the view differs");
    MPI_Type_free(&ft);
    MPI_Type_free(&recs);
    MPI_Type_free(&rec);
    amptest_ok(MPI_File_close(&fh), "close records.dat");

    if (me == 0) {
        size_t len = VARSTART + (size_t)(NREC - 1) * RECSIZE + RECLEN;
        unsigned char *model = calloc(len, 1);
        memcpy(model, header, HEADER);
        for (int t = 0; t < NREC; t++)
            for (int v = 0; v < NVAL; v++) {
                double x = t * 1000.0 + v * 0.5;
                memcpy(model + VARSTART + (size_t)t * RECSIZE + (size_t)v * 8, &x, 8);
            }
        amptest_compare_file("records.dat", model, len);
        free(model);
    }
}

/* Chunk c of the P*NCHUNK chunks belongs to rank c / NCHUNK, except that rank 0's last chunk is
 * moved behind everything: chunk addresses CHUNKSTART + c*CHUNK, and rank 0's chunk NCHUNK-1 at
 * the end. */
static MPI_Offset chunk_address(int rank, int k)
{
    int P = amptest_size;
    if (rank == 0 && k == NCHUNK - 1)
        return CHUNKSTART + (MPI_Offset)P * NCHUNK * CHUNK;
    return CHUNKSTART + (MPI_Offset)(rank * NCHUNK + k) * CHUNK;
}

static void chunks(MPI_Info info)
{
    int me = amptest_rank, P = amptest_size;
    MPI_Info_set(info, "ampio_num_aggregators", "2");
    MPI_Info_set(info, "cb_buffer_size", "4096");
    MPI_File fh;
    amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path("chunks.dat"),
                             MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
               "open chunks.dat");
    int bl[NCHUNK];
    MPI_Aint disp[NCHUNK];
    for (int k = 0; k < NCHUNK; k++) {
        bl[k] = CHUNK;
        disp[k] = (MPI_Aint)chunk_address(me, k);
    }
    if (me == 0) { /* hindexed blocks must be in file order */
        for (int k = NCHUNK - 1; k > 0 && disp[k] < disp[k - 1]; k--) {
            MPI_Aint t = disp[k];
            disp[k] = disp[k - 1];
            disp[k - 1] = t;
        }
    }
    MPI_Datatype ft, fill_type;
    MPI_Type_create_hindexed(NCHUNK, bl, disp, MPI_BYTE, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_create_hvector(NCHUNK, CHUNK, 0, MPI_BYTE, &fill_type);
    MPI_Type_commit(&fill_type);
    unsigned char fill[CHUNK];
    for (int i = 0; i < CHUNK; i++)
        fill[i] = amptest_byte(me, i);
    amptest_ok(MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", info), "set_view chunks");
    amptest_ok(MPI_File_write_at_all(fh, 0, fill, 1, fill_type, MPI_STATUS_IGNORE),
               "write_at_all chunks");
    MPI_Type_free(&fill_type);
    MPI_Type_free(&ft);
    amptest_ok(MPI_File_close(&fh), "close chunks.dat");

    if (me == 0) {
        size_t len = CHUNKSTART + (size_t)(P * NCHUNK + 1) * CHUNK;
        unsigned char *model = calloc(len, 1);
        for (int r = 0; r < P; r++)
            for (int k = 0; k < NCHUNK; k++)
                for (int i = 0; i < CHUNK; i++)
                    model[chunk_address(r, k) + i] = amptest_byte(r, i);
        amptest_compare_file("chunks.dat", model, len);
        free(model);
    }
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    MPI_Info info;
    MPI_Info_create(&info);
    if (argc > 2)
        MPI_Info_set(info, "ampio_fcoll", argv[2]);
    records(info);
    chunks(info);
    MPI_Info_free(&info);
    return amptest_finish();
}
