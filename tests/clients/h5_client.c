/* Parallel HDF5 over MPI-IO as a real client: datasets written through the MPI-IO driver with
 * collective and independent transfers, contiguous and chunked layouts, rows interleaved across
 * ranks (each rank every P-th row) and block-cyclic columns, attributes on the file, groups and
 * datasets; then everything is read back on every rank and checked against the formula.
 *
 *   h5_client DIR          writes DIR/{coll_contig,indep_chunked,mixed}.h5 and verifies them
 *   h5_client DIR read     only verifies the files already in DIR (written by another MPI-IO)
 *
 * Modification times are not recorded, so the files of two runs can be compared byte for byte. */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

#include "amptest.h"

enum { NROWS = 24, NCOLS = 48, COLBLOCK = 2, NELEMS = 1000, CUBE = 12 };

static int nranks, me, failures;

#define H5_OK(expr)                                                                                \
    do {                                                                                           \
        if ((expr) < 0) {                                                                          \
            amptest_fail("%s:%d: %s failed", __FILE__, __LINE__, #expr);                           \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static int row_value(int d, int i, int j)
{
    return d * 1000000 + i * 1000 + j;
}

static double col_value(int i, int j)
{
    return i * 0.5 + j * 1024.25;
}

static long long elem_value(long long k)
{
    return k * 7919LL - 3;
}

static float cube_value(int a, int b, int c)
{
    return (float)(a * 10000 + b * 100 + c) + 0.25f;
}

static hid_t file_access(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5_OK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
    return fapl;
}

static hid_t transfer(H5FD_mpio_xfer_t mode)
{
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5_OK(H5Pset_dxpl_mpio(dxpl, mode));
    return dxpl;
}

static hid_t creation(int chunked, int rank, const hsize_t *chunk)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5_OK(H5Pset_obj_track_times(dcpl, 0));
    if (chunked)
        H5_OK(H5Pset_chunk(dcpl, rank, chunk));
    return dcpl;
}

/* Rows me, me+P, me+2P, ... of an NROWS x NCOLS dataset. */
static hid_t select_my_rows(hid_t space, int owner, hsize_t *nrows)
{
    hsize_t start[2] = {(hsize_t)owner, 0}, stride[2] = {(hsize_t)nranks, 1};
    hsize_t count[2] = {(hsize_t)((NROWS - owner + nranks - 1) / nranks), 1};
    hsize_t block[2] = {1, NCOLS};
    H5_OK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, stride, count, block));
    *nrows = count[0];
    return H5Screate_simple(1, (hsize_t[]){count[0] * NCOLS}, NULL);
}

/* Column blocks of COLBLOCK columns dealt round-robin: me, me+P, ... (all rows). */
static hid_t select_my_cols(hid_t space, int owner, hsize_t *nblocks)
{
    int total = NCOLS / COLBLOCK;
    hsize_t start[2] = {0, (hsize_t)owner * COLBLOCK}, stride[2] = {1, (hsize_t)nranks * COLBLOCK};
    hsize_t count[2] = {1, (hsize_t)((total - owner + nranks - 1) / nranks)};
    hsize_t block[2] = {NROWS, COLBLOCK};
    *nblocks = count[1];
    if (count[1] == 0) {
        H5_OK(H5Sselect_none(space));
        return H5Screate(H5S_NULL);
    }
    H5_OK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, stride, count, block));
    hsize_t dims[3] = {NROWS, count[1], COLBLOCK};
    return H5Screate_simple(3, dims, NULL);
}

static void write_rows(hid_t loc, const char *name, int d, int chunked, hid_t dxpl)
{
    hsize_t dims[2] = {NROWS, NCOLS}, chunk[2] = {5, 16}, n;
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t dcpl = creation(chunked, 2, chunk);
    hid_t dset = H5Dcreate2(loc, name, H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5_OK(dset);
    hid_t mem = select_my_rows(space, me, &n);
    int buf[NROWS * NCOLS];
    for (hsize_t r = 0; r < n; r++)
        for (int j = 0; j < NCOLS; j++)
            buf[r * NCOLS + j] = row_value(d, me + (int)r * nranks, j);
    H5_OK(H5Dwrite(dset, H5T_NATIVE_INT, mem, space, dxpl, buf));
    H5Sclose(mem);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Dclose(dset);
}

static void write_cols(hid_t loc, const char *name, int chunked, hid_t dxpl)
{
    hsize_t dims[2] = {NROWS, NCOLS}, chunk[2] = {8, 6}, n;
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t dcpl = creation(chunked, 2, chunk);
    hid_t dset = H5Dcreate2(loc, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5_OK(dset);
    hid_t mem = select_my_cols(space, me, &n);
    static double buf[NROWS * NCOLS];
    for (int i = 0; i < NROWS; i++)
        for (hsize_t b = 0; b < n; b++)
            for (int c = 0; c < COLBLOCK; c++) {
                int j = (me + (int)b * nranks) * COLBLOCK + c;
                buf[((hsize_t)i * n + b) * COLBLOCK + c] = col_value(i, j);
            }
    H5_OK(H5Dwrite(dset, H5T_NATIVE_DOUBLE, mem, space, dxpl, buf));
    H5Sclose(mem);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Dclose(dset);
}

/* Element k of a 1-D int64 dataset belongs to rank k mod P: a point-by-point interleave. */
static void write_elems(hid_t loc, hid_t dxpl)
{
    hsize_t dims[1] = {NELEMS}, chunk[1] = {64};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t dcpl = creation(1, 1, chunk);
    hid_t dset = H5Dcreate2(loc, "elems", H5T_STD_I64BE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    hsize_t start[1] = {(hsize_t)me}, stride[1] = {(hsize_t)nranks};
    hsize_t count[1] = {(hsize_t)((NELEMS - me + nranks - 1) / nranks)};
    H5_OK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, stride, count, NULL));
    hid_t mem = H5Screate_simple(1, count, NULL);
    static long long buf[NELEMS];
    for (hsize_t k = 0; k < count[0]; k++)
        buf[k] = elem_value(me + (long long)k * nranks);
    H5_OK(H5Dwrite(dset, H5T_NATIVE_LLONG, mem, space, dxpl, buf));
    H5Sclose(mem);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Dclose(dset);
}

/* A CUBE^3 float dataset, slab a of the first axis written by rank a mod P. */
static void write_cube(hid_t loc, hid_t dxpl)
{
    hsize_t dims[3] = {CUBE, CUBE, CUBE}, chunk[3] = {4, 4, 4};
    hid_t space = H5Screate_simple(3, dims, NULL);
    hid_t dcpl = creation(1, 3, chunk);
    hid_t dset = H5Dcreate2(loc, "cube", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    hsize_t start[3] = {(hsize_t)me, 0, 0}, stride[3] = {(hsize_t)nranks, 1, 1};
    hsize_t count[3] = {(hsize_t)((CUBE - me + nranks - 1) / nranks), 1, 1};
    hsize_t block[3] = {1, CUBE, CUBE};
    hid_t mem;
    if (count[0] == 0) {
        H5_OK(H5Sselect_none(space));
        mem = H5Screate(H5S_NULL);
    } else {
        H5_OK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, stride, count, block));
        mem = H5Screate_simple(1, (hsize_t[]){count[0] * CUBE * CUBE}, NULL);
    }
    static float buf[CUBE * CUBE * CUBE];
    for (hsize_t s = 0; s < count[0]; s++)
        for (int b = 0; b < CUBE; b++)
            for (int c = 0; c < CUBE; c++)
                buf[(s * CUBE + b) * CUBE + c] = cube_value(me + (int)s * nranks, b, c);
    H5_OK(H5Dwrite(dset, H5T_NATIVE_FLOAT, mem, space, dxpl, buf));
    H5Sclose(mem);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Dclose(dset);
}

static void put_attr_int(hid_t loc, const char *name, int value)
{
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(loc, name, H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT);
    H5_OK(H5Awrite(attr, H5T_NATIVE_INT, &value));
    H5Aclose(attr);
    H5Sclose(space);
}

static void put_attr_text(hid_t loc, const char *name, const char *text)
{
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, strlen(text) + 1);
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    H5_OK(H5Awrite(attr, type, text));
    H5Aclose(attr);
    H5Sclose(space);
    H5Tclose(type);
}

static void put_attr_scale(hid_t loc)
{
    double scale[4] = {1.5, -2.25, 1e10, 3.0};
    hid_t space = H5Screate_simple(1, (hsize_t[]){4}, NULL);
    hid_t attr = H5Acreate2(loc, "scale", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT);
    H5_OK(H5Awrite(attr, H5T_NATIVE_DOUBLE, scale));
    H5Aclose(attr);
    H5Sclose(space);
}

static hid_t create_file(const char *name)
{
    hid_t fapl = file_access();
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    hid_t file = H5Fcreate(amptest_path(name), H5F_ACC_TRUNC, fcpl, fapl);
    H5_OK(file);
    H5Pclose(fcpl);
    H5Pclose(fapl);
    put_attr_int(file, "nranks", nranks);
    return file;
}

static void write_files(void)
{
    hid_t coll = transfer(H5FD_MPIO_COLLECTIVE), indep = transfer(H5FD_MPIO_INDEPENDENT);

    hid_t f = create_file("coll_contig.h5");
    write_rows(f, "rows", 1, 0, coll);
    write_cols(f, "cols", 0, coll);
    hid_t d = H5Dopen2(f, "rows", H5P_DEFAULT);
    put_attr_text(d, "units", "counts per row");
    put_attr_scale(d);
    H5Dclose(d);
    H5_OK(H5Fclose(f));

    f = create_file("indep_chunked.h5");
    write_rows(f, "rows", 2, 1, indep);
    write_cols(f, "cols", 1, indep);
    H5_OK(H5Fflush(f, H5F_SCOPE_GLOBAL));
    write_rows(f, "rows_contig", 3, 0, indep);
    H5_OK(H5Fclose(f));

    f = create_file("mixed.h5");
    hid_t g = H5Gcreate2(f, "run", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    put_attr_text(g, "title", "interleaved writes from every rank");
    write_elems(g, coll);
    write_cube(g, coll);
    write_rows(g, "rows_indep", 4, 1, indep);
    write_cols(f, "cols_coll_chunked", 1, coll);
    H5Gclose(g);
    H5_OK(H5Fclose(f));

    H5Pclose(coll);
    H5Pclose(indep);
}

static void check_rows(hid_t loc, const char *name, int d, hid_t dxpl)
{
    static int all[NROWS * NCOLS];
    hid_t dset = H5Dopen2(loc, name, H5P_DEFAULT);
    H5_OK(dset);
    memset(all, 0xff, sizeof(all));
    H5_OK(H5Dread(dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, dxpl, all));
    int bad = 0;
    for (int i = 0; i < NROWS; i++)
        for (int j = 0; j < NCOLS; j++)
            bad += all[i * NCOLS + j] != row_value(d, i, j);
    amptest_check(!bad, "%s: %d wrong values in the whole read", name, bad);

    /* the rows of the next rank, through the interleaved selection */
    int other = (me + 1) % nranks;
    hsize_t n;
    hid_t space = H5Dget_space(dset);
    hid_t mem = select_my_rows(space, other, &n);
    memset(all, 0xff, sizeof(all));
    H5_OK(H5Dread(dset, H5T_NATIVE_INT, mem, space, dxpl, all));
    bad = 0;
    for (hsize_t r = 0; r < n; r++)
        for (int j = 0; j < NCOLS; j++)
            bad += all[r * NCOLS + j] != row_value(d, other + (int)r * nranks, j);
    amptest_check(!bad, "%s: %d wrong values in the rows of rank %d", name, bad, other);
    H5Sclose(mem);
    H5Sclose(space);
    H5Dclose(dset);
}

static void check_cols(hid_t loc, const char *name, hid_t dxpl)
{
    static double all[NROWS * NCOLS];
    hid_t dset = H5Dopen2(loc, name, H5P_DEFAULT);
    H5_OK(dset);
    H5_OK(H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, dxpl, all));
    int bad = 0;
    for (int i = 0; i < NROWS; i++)
        for (int j = 0; j < NCOLS; j++)
            bad += all[i * NCOLS + j] != col_value(i, j);
    amptest_check(!bad, "%s: %d wrong values in the whole read", name, bad);

    int other = nranks - 1 - me;
    hsize_t n;
    hid_t space = H5Dget_space(dset);
    hid_t mem = select_my_cols(space, other, &n);
    memset(all, 0, sizeof(all));
    H5_OK(H5Dread(dset, H5T_NATIVE_DOUBLE, mem, space, dxpl, all));
    bad = 0;
    for (int i = 0; i < NROWS; i++)
        for (hsize_t b = 0; b < n; b++)
            for (int c = 0; c < COLBLOCK; c++) {
                int j = (other + (int)b * nranks) * COLBLOCK + c;
                bad += all[((hsize_t)i * n + b) * COLBLOCK + c] != col_value(i, j);
            }
    amptest_check(!bad, "%s: %d wrong values in the columns of rank %d", name, bad, other);
    H5Sclose(mem);
    H5Sclose(space);
    H5Dclose(dset);
}

static void check_elems_and_cube(hid_t g, hid_t dxpl)
{
    static long long elems[NELEMS];
    hid_t dset = H5Dopen2(g, "elems", H5P_DEFAULT);
    H5_OK(H5Dread(dset, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, dxpl, elems));
    int bad = 0;
    for (int k = 0; k < NELEMS; k++)
        bad += elems[k] != elem_value(k);
    amptest_check(!bad, "elems: %d wrong values", bad);
    H5Dclose(dset);

    static float cube[CUBE * CUBE * CUBE];
    dset = H5Dopen2(g, "cube", H5P_DEFAULT);
    H5_OK(H5Dread(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, dxpl, cube));
    bad = 0;
    for (int a = 0; a < CUBE; a++)
        for (int b = 0; b < CUBE; b++)
            for (int c = 0; c < CUBE; c++)
                bad += cube[(a * CUBE + b) * CUBE + c] != cube_value(a, b, c);
    amptest_check(!bad, "cube: %d wrong values", bad);
    H5Dclose(dset);
}

static void check_attrs(hid_t file, const char *rows)
{
    int value = -1;
    hid_t attr = H5Aopen(file, "nranks", H5P_DEFAULT);
    H5_OK(H5Aread(attr, H5T_NATIVE_INT, &value));
    H5Aclose(attr);
    amptest_check(value == nranks, "attribute nranks is %d, expected %d", value, nranks);
    if (!rows)
        return;
    hid_t d = H5Dopen2(file, rows, H5P_DEFAULT);
    char text[64] = "";
    attr = H5Aopen(d, "units", H5P_DEFAULT);
    hid_t type = H5Aget_type(attr);
    amptest_check(H5Tget_size(type) < sizeof(text), "attribute units too long");
    H5_OK(H5Aread(attr, type, text));
    amptest_check(strcmp(text, "counts per row") == 0, "attribute units is \"%s\"", text);
    H5Tclose(type);
    H5Aclose(attr);
    double scale[4] = {0};
    attr = H5Aopen(d, "scale", H5P_DEFAULT);
    H5_OK(H5Aread(attr, H5T_NATIVE_DOUBLE, scale));
    amptest_check(scale[0] == 1.5 && scale[1] == -2.25 && scale[2] == 1e10 && scale[3] == 3.0,
                  "attribute scale is wrong");
    H5Aclose(attr);
    H5Dclose(d);
}

static void check_files(void)
{
    hid_t coll = transfer(H5FD_MPIO_COLLECTIVE), indep = transfer(H5FD_MPIO_INDEPENDENT);
    hid_t fapl = file_access();

    hid_t f = H5Fopen(amptest_path("coll_contig.h5"), H5F_ACC_RDONLY, fapl);
    H5_OK(f);
    check_attrs(f, "rows");
    check_rows(f, "rows", 1, coll);
    check_cols(f, "cols", indep);
    H5_OK(H5Fclose(f));

    f = H5Fopen(amptest_path("indep_chunked.h5"), H5F_ACC_RDONLY, fapl);
    H5_OK(f);
    check_attrs(f, NULL);
    check_rows(f, "rows", 2, indep);
    check_cols(f, "cols", coll);
    check_rows(f, "rows_contig", 3, coll);
    H5_OK(H5Fclose(f));

    f = H5Fopen(amptest_path("mixed.h5"), H5F_ACC_RDONLY, fapl);
    H5_OK(f);
    check_attrs(f, NULL);
    hid_t g = H5Gopen2(f, "run", H5P_DEFAULT);
    check_elems_and_cube(g, coll);
    check_rows(g, "rows_indep", 4, indep);
    check_cols(f, "cols_coll_chunked", coll);
    H5Gclose(g);
    H5_OK(H5Fclose(f));

    H5Pclose(fapl);
    H5Pclose(coll);
    H5Pclose(indep);
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    nranks = amptest_size;
    me = amptest_rank;
    int read_only = argc > 2 && strcmp(argv[2], "read") == 0;
    if (!read_only)
        write_files();
    check_files();
    amptest_check(failures == 0, "%d HDF5 calls failed", failures);
    return amptest_finish();
}
