/* Linked with -lampio before the MPI library: ampio must do the I/O without any preloading.
 *   app FILE    writes FILE collectively (rank r: bytes r, r+P, ...), reads it back, checks it,
 *               and checks that the library behind MPI_File_* is ampio. */
#include <ampio.h>
#include <stdio.h>
#include <string.h>

enum { N = 4096 };

static unsigned char byte(long i)
{
    return (unsigned char)(i * 131 + i / 256 + 7);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, P, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (argc < 2) {
        fprintf(stderr, "usage: app FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    static unsigned char buf[N], back[N];
    for (int i = 0; i < N; i++)
        buf[i] = byte((long)i * P + me);
    MPI_File fh;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL);
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);

    MPI_Info info;
    char value[64] = "";
    int flag = 0;
    MPI_File_get_info(fh, &info);
    MPI_Info_get(info, "ampio_fcoll", sizeof(value) - 1, value, &flag);
    MPI_Info_free(&info);
    if (!flag) {
        fprintf(stderr, "rank %d: the file has no ampio_fcoll hint: ampio is not doing the I/O\n",
                me);
        bad++;
    }

    MPI_Datatype ft;
    MPI_Type_vector(N, 1, P, MPI_BYTE, &ft);
    MPI_Type_commit(&ft);
    MPI_File_set_view(fh, me, MPI_BYTE, ft, "native", MPI_INFO_NULL);
    MPI_File_write_all(fh, buf, N, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    /* read the whole file back on every rank through the default view */
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    MPI_Offset size = 0;
    MPI_File_get_size(fh, &size);
    if (size != (MPI_Offset)N * P) {
        fprintf(stderr, "rank %d: file size %lld, expected %lld\n", me, (long long)size,
                (long long)N * P);
        bad++;
    }
    for (long off = 0; off < (long)N * P; off += N) {
        MPI_File_read_at(fh, off, back, N, MPI_BYTE, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++)
            if (back[i] != byte(off + i)) {
                fprintf(stderr, "rank %d: byte %ld is %d, expected %d\n", me, off + i, back[i],
                        byte(off + i));
                bad++;
                break;
            }
    }
    MPI_Type_free(&ft);
    MPI_File_close(&fh);
    if (me == 0)
        printf("ampio %s (%s) did the I/O\n", ampio_version(), ampio_mpi_family());
    int total = 0;
    MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return total ? 1 : 0;
}
