/* The mapping between a view's data bytes and file offsets. */
#include <mpi.h>

#include "io/view.h"
#include "unit.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Datatype ft;
    MPI_Type_vector(3, 2, 5, MPI_INT, &ft); /* data at 0-7, 20-27, 40-47; extent 48 */
    MPI_Type_commit(&ft);
    amp_view_t v;
    UNIT_EQ(amp_view_build(&v, 100, MPI_INT, ft, "native", 1), MPI_SUCCESS);
    UNIT_EQ(v.esize, 4);
    UNIT_EQ(amp_view_offset(&v, 0), 100);
    UNIT_EQ(amp_view_offset(&v, 8), 120);
    UNIT_EQ(amp_view_offset(&v, 30), 154); /* second instance, 6 bytes in */
    UNIT_EQ(amp_view_bytes_before(&v, 154), 30);
    UNIT_EQ(amp_view_bytes_before(&v, 50), 0);
    UNIT_EQ(amp_view_bytes_before(&v, 110), 8);             /* in the first hole */
    UNIT_EQ(amp_view_bytes_before(&v, 124), 12);            /* inside the second block */
    UNIT_EQ(amp_view_bytes_before(&v, 1000), 24 * 18 + 16); /* 900 = 18 extents + 36 */
    amp_view_free(&v);

    /* filetypes the standard forbids: the class of the family's own MPI-IO (ROMIO's in MPICH) */
#ifdef MPICH_VERSION
    const int bad_type = MPI_ERR_IO;
#else
    const int bad_type = MPI_ERR_TYPE;
#endif
    MPI_Datatype bad;
    MPI_Type_indexed(2, (int[]){1, 1}, (int[]){3, 0}, MPI_INT, &bad);
    MPI_Type_commit(&bad);
    int cls = 0;
    MPI_Error_class(amp_view_build(&v, 0, MPI_INT, bad, "native", 1), &cls);
    UNIT_EQ(cls, bad_type); /* decreasing displacements */
    MPI_Type_free(&bad);
    MPI_Type_create_indexed_block(2, 2, (int[]){0, 1}, MPI_INT, &bad);
    MPI_Type_commit(&bad);
    MPI_Error_class(amp_view_build(&v, 0, MPI_INT, bad, "native", 1), &cls);
    UNIT_EQ(cls, bad_type); /* overlapping, file writable */
    UNIT_EQ(amp_view_build(&v, 0, MPI_INT, bad, "native", 0), MPI_SUCCESS); /* read-only: fine */
    amp_view_free(&v);
    MPI_Type_free(&bad);
    MPI_Error_class(amp_view_build(&v, 0, MPI_DOUBLE, MPI_INT, "native", 1), &cls);
    UNIT_EQ(cls, MPI_ERR_TYPE); /* not made of etypes */
    MPI_Error_class(amp_view_build(&v, 0, MPI_INT, MPI_INT, "big-endian-please", 1), &cls);
    UNIT_EQ(cls, MPI_ERR_UNSUPPORTED_DATAREP);
    MPI_Error_class(amp_view_build(&v, -8, MPI_INT, MPI_INT, "native", 1), &cls);
    UNIT_EQ(cls, MPI_ERR_ARG);

    MPI_Type_free(&ft);
    int rc = unit_report("test_view");
    MPI_Finalize();
    return rc;
}
