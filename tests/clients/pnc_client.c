/* PnetCDF over MPI-IO as a real client: blocking collective puts of subarrays (vara) and of
 * strided columns (vars), record variables growing along the unlimited dimension, and
 * nonblocking iput/iget completed by ncmpi_wait_all; everything is read back and checked.
 *
 *   pnc_client DIR         writes DIR/{offset64,cdf5}.nc and verifies them
 *   pnc_client DIR read    only verifies the files in DIR (written by another MPI-IO) */
#include <pnetcdf.h>
#include <stdio.h>
#include <string.h>

#include "amptest.h"

enum { NY = 16, NX = 40, NREC = 7 };

static int nranks, me;

#define NC_OK(expr) nc_ok((expr), #expr, __LINE__)

static int nc_ok(int err, const char *what, int line)
{
    return amptest_check(err == NC_NOERR, "line %d: %s: %s", line, what, ncmpi_strerror(err));
}

static int grid_value(int v, int y, int x)
{
    return v * 100000 + y * 100 + x;
}

static double rec_value(int t, int x)
{
    return t * 1000.0 + x * 0.125;
}

/* Rows [y0, y0+ny) of rank me in a block distribution of NY rows. */
static void my_rows(int rank, MPI_Offset *y0, MPI_Offset *ny)
{
    int base = NY / nranks, extra = NY % nranks;
    *ny = base + (rank < extra);
    *y0 = (MPI_Offset)rank * base + (rank < extra ? rank : extra);
}

static void define(int ncid, int *dims, int *vars, int cdf5)
{
    NC_OK(ncmpi_def_dim(ncid, "time", NC_UNLIMITED, &dims[0]));
    NC_OK(ncmpi_def_dim(ncid, "y", NY, &dims[1]));
    NC_OK(ncmpi_def_dim(ncid, "x", NX, &dims[2]));
    NC_OK(ncmpi_def_var(ncid, "block", NC_INT, 2, &dims[1], &vars[0]));
    NC_OK(ncmpi_def_var(ncid, "strided", cdf5 ? NC_INT64 : NC_INT, 2, &dims[1], &vars[1]));
    int rdims[2] = {dims[0], dims[2]};
    NC_OK(ncmpi_def_var(ncid, "rec_a", NC_DOUBLE, 2, rdims, &vars[2]));
    NC_OK(ncmpi_def_var(ncid, "rec_b", NC_SHORT, 1, &dims[0], &vars[3]));
    const char *title = cdf5 ? "nonblocking puts" : "blocking collective puts";
    NC_OK(ncmpi_put_att_text(ncid, NC_GLOBAL, "title", strlen(title), title));
    NC_OK(ncmpi_put_att_text(ncid, vars[2], "units", 6, "kelvin"));
    double range[2] = {-1.5, 1e6};
    NC_OK(ncmpi_put_att_double(ncid, vars[2], "valid_range", NC_DOUBLE, 2, range));
    NC_OK(ncmpi_enddef(ncid));
}

/* Blocking: vara for the row blocks, vars for the columns me, me+P, ..., records me, me+P, ...
 * (every rank takes part in every collective call, some with nothing to write). */
static void write_blocking(int ncid, const int *vars)
{
    static int block[NY * NX], strided[NY * NX];
    MPI_Offset y0, ny;
    my_rows(me, &y0, &ny);
    for (MPI_Offset y = 0; y < ny; y++)
        for (int x = 0; x < NX; x++)
            block[y * NX + x] = grid_value(0, (int)(y0 + y), x);
    MPI_Offset start[2] = {y0, 0}, count[2] = {ny, NX};
    NC_OK(ncmpi_put_vara_int_all(ncid, vars[0], start, count, block));

    int ncols = (NX - me + nranks - 1) / nranks;
    for (int y = 0; y < NY; y++)
        for (int c = 0; c < ncols; c++)
            strided[y * ncols + c] = grid_value(1, y, me + c * nranks);
    MPI_Offset sstart[2] = {0, me}, scount[2] = {NY, ncols}, stride[2] = {1, nranks};
    NC_OK(ncmpi_put_vars_int_all(ncid, vars[1], sstart, scount, stride, strided));

    double rec[NX];
    for (int t0 = 0; t0 < NREC; t0 += nranks) {
        int t = t0 + me;
        MPI_Offset rstart[2] = {t < NREC ? t : 0, 0}, rcount[2] = {t < NREC, NX};
        for (int x = 0; x < NX; x++)
            rec[x] = rec_value(t, x);
        NC_OK(ncmpi_put_vara_double_all(ncid, vars[2], rstart, rcount, rec));
        short b = (short)(t * 3 - 7);
        NC_OK(ncmpi_put_vara_short_all(ncid, vars[3], rstart, rcount, &b));
    }
}

/* Nonblocking: one iput per row of me, me+P, ..., one iput_vars for the strided columns and
 * one per record, all completed by a single wait_all. */
static void write_nonblocking(int ncid, const int *vars)
{
    static int rows[NY][NX];
    static long long strided[NY * NX];
    static double recs[NREC][NX];
    static short recb[NREC];
    int reqs[NY + 1 + 2 * NREC], nreq = 0;
    for (int y = me; y < NY; y += nranks) {
        for (int x = 0; x < NX; x++)
            rows[y][x] = grid_value(2, y, x);
        MPI_Offset start[2] = {y, 0}, count[2] = {1, NX};
        NC_OK(ncmpi_iput_vara_int(ncid, vars[0], start, count, rows[y], &reqs[nreq++]));
    }
    int ncols = (NX - me + nranks - 1) / nranks;
    for (int y = 0; y < NY; y++)
        for (int c = 0; c < ncols; c++)
            strided[y * ncols + c] = grid_value(3, y, me + c * nranks) * 1000003LL;
    MPI_Offset sstart[2] = {0, me}, scount[2] = {NY, ncols}, stride[2] = {1, nranks};
    NC_OK(ncmpi_iput_vars_longlong(ncid, vars[1], sstart, scount, stride, strided, &reqs[nreq++]));
    for (int t = NREC - 1 - me; t >= 0; t -= nranks) {
        for (int x = 0; x < NX; x++)
            recs[t][x] = rec_value(t, x);
        recb[t] = (short)(t * 3 - 7);
        MPI_Offset start[2] = {t, 0}, count[2] = {1, NX};
        NC_OK(ncmpi_iput_vara_double(ncid, vars[2], start, count, recs[t], &reqs[nreq++]));
        NC_OK(ncmpi_iput_vara_short(ncid, vars[3], start, count, &recb[t], &reqs[nreq++]));
    }
    int sts[NY + 1 + 2 * NREC];
    NC_OK(ncmpi_wait_all(ncid, nreq, reqs, sts));
    for (int i = 0; i < nreq; i++)
        NC_OK(sts[i]);
}

static void check_file(const char *name, int cdf5)
{
    int ncid, vars[4];
    if (!NC_OK(ncmpi_open(MPI_COMM_WORLD, amptest_path(name), NC_NOWRITE, MPI_INFO_NULL, &ncid)))
        return;
    const char *names[4] = {"block", "strided", "rec_a", "rec_b"};
    for (int v = 0; v < 4; v++)
        NC_OK(ncmpi_inq_varid(ncid, names[v], &vars[v]));
    int format = 0;
    NC_OK(ncmpi_inq_format(ncid, &format));
    amptest_check(format == (cdf5 ? NC_FORMAT_CDF5 : NC_FORMAT_CDF2), "%s: format %d", name,
                  format);
    MPI_Offset nrec = 0;
    int tdim;
    NC_OK(ncmpi_inq_unlimdim(ncid, &tdim));
    NC_OK(ncmpi_inq_dimlen(ncid, tdim, &nrec));
    amptest_check(nrec == NREC, "%s: %lld records, expected %d", name, (long long)nrec, NREC);
    char units[16] = "";
    NC_OK(ncmpi_get_att_text(ncid, vars[2], "units", units));
    amptest_check(strcmp(units, "kelvin") == 0, "%s: units \"%s\"", name, units);

    static int grid[NY * NX];
    static long long wide[NY * NX];
    int bad = 0;
    NC_OK(ncmpi_get_var_int_all(ncid, vars[0], grid));
    for (int y = 0; y < NY; y++)
        for (int x = 0; x < NX; x++)
            bad += grid[y * NX + x] != grid_value(cdf5 ? 2 : 0, y, x);
    amptest_check(!bad, "%s: block has %d wrong values", name, bad);

    /* the strided columns of another rank through a nonblocking get */
    int other = (me + 1) % nranks, ncols = (NX - other + nranks - 1) / nranks, req, st;
    MPI_Offset sstart[2] = {0, other}, scount[2] = {NY, ncols}, stride[2] = {1, nranks};
    NC_OK(ncmpi_iget_vars_longlong(ncid, vars[1], sstart, scount, stride, wide, &req));
    NC_OK(ncmpi_wait_all(ncid, 1, &req, &st));
    NC_OK(st);
    bad = 0;
    for (int y = 0; y < NY; y++)
        for (int c = 0; c < ncols; c++) {
            long long want = grid_value(cdf5 ? 3 : 1, y, other + c * nranks);
            bad += wide[y * ncols + c] != (cdf5 ? want * 1000003LL : want);
        }
    amptest_check(!bad, "%s: strided columns of rank %d: %d wrong values", name, other, bad);

    static double recs[NREC * NX];
    short recb[NREC];
    MPI_Offset start[2] = {0, 0}, count[2] = {NREC, NX};
    NC_OK(ncmpi_get_vara_double_all(ncid, vars[2], start, count, recs));
    NC_OK(ncmpi_get_vara_short_all(ncid, vars[3], start, count, recb));
    bad = 0;
    for (int t = 0; t < NREC; t++) {
        bad += recb[t] != t * 3 - 7;
        for (int x = 0; x < NX; x++)
            bad += recs[t * NX + x] != rec_value(t, x);
    }
    amptest_check(!bad, "%s: records have %d wrong values", name, bad);
    NC_OK(ncmpi_close(ncid));
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    nranks = amptest_size;
    me = amptest_rank;
    if (argc <= 2 || strcmp(argv[2], "read") != 0) {
        int ncid, dims[3], vars[4];
        NC_OK(ncmpi_create(MPI_COMM_WORLD, amptest_path("offset64.nc"),
                           NC_CLOBBER | NC_64BIT_OFFSET, MPI_INFO_NULL, &ncid));
        define(ncid, dims, vars, 0);
        write_blocking(ncid, vars);
        NC_OK(ncmpi_close(ncid));

        NC_OK(ncmpi_create(MPI_COMM_WORLD, amptest_path("cdf5.nc"), NC_CLOBBER | NC_64BIT_DATA,
                           MPI_INFO_NULL, &ncid));
        define(ncid, dims, vars, 1);
        write_nonblocking(ncid, vars);
        NC_OK(ncmpi_close(ncid));
    }
    check_file("offset64.nc", 0);
    check_file("cdf5.nc", 1);
    return amptest_finish();
}
