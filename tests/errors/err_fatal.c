/* MPI_ERRORS_ARE_FATAL on files: the error ends the job (run by expect_abort.sh, which wants a
 * nonzero exit, the marker printed (or written into DIR) before the error and not the one after
 * it). Also checks,
 * before anything sets it, that the initial handler of MPI_FILE_NULL returns codes.
 *
 *   err_fatal DIR open|access|collective */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        fprintf(stderr, "usage: err_fatal DIR open|access|collective\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *mode = argv[2];
    char path[4096], missing[4096];
    snprintf(path, sizeof(path), "%s/fatal.dat", argv[1]);
    snprintf(missing, sizeof(missing), "%s/missing.dat", argv[1]);

    /* the default: codes are returned */
    MPI_Errhandler eh;
    MPI_File_get_errhandler(MPI_FILE_NULL, &eh);
    if (eh != MPI_ERRORS_RETURN) {
        printf("ERRTEST-WRONG-DEFAULT: MPI_FILE_NULL's handler is not MPI_ERRORS_RETURN\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) ==
        MPI_SUCCESS) {
        printf("ERRTEST-WRONG-DEFAULT: opened a missing file\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    /* the marker also goes into a file: a launcher that kills the job on the abort may drop
     * output it has not forwarded yet (seen with MPICH's hydra) */
    if (rank == 0) {
        printf("ERRTEST-BEFORE\n");
        char marker[4096];
        snprintf(marker, sizeof(marker), "%s/ERRTEST-BEFORE", argv[1]);
        FILE *m = fopen(marker, "w");
        if (m)
            fclose(m);
    }
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);

    char buf[16] = "fatal";
    if (strcmp(mode, "open") == 0) {
        MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL);
        MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    } else if (strcmp(mode, "access") == 0) {
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        MPI_File_set_errhandler(fh, MPI_ERRORS_ARE_FATAL);
        MPI_File_write_at(fh, 0, buf, 5, MPI_CHAR, MPI_STATUS_IGNORE);
    } else {
        /* the last rank alone is wrong; the job still ends */
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        MPI_File_set_errhandler(fh, MPI_ERRORS_ARE_FATAL);
        MPI_File_write_at_all(fh, rank * 5, buf, rank == size - 1 ? -1 : 5, MPI_CHAR,
                              MPI_STATUS_IGNORE);
    }
    printf("ERRTEST-SURVIVED on rank %d\n", rank);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
