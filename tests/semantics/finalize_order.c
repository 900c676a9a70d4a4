/* A library that closes its files from its own attribute on MPI_COMM_SELF, as HDF5 does: the
 * attribute is set after MPI_Init and before any MPI_File call, the file is left open, and the
 * attribute's delete callback (run by MPI_Finalize) writes collectively and closes it. MPI
 * deletes the attributes of MPI_COMM_SELF last set first, so ampio's own clean-up must not
 * have closed the file before then. After MPI_Finalize, rank 0 checks the file's bytes. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amptest.h"

#define BLOCK 4096

static MPI_File library_file = MPI_FILE_NULL;
static int rank, size, callback_failures;

static void fill(unsigned char *buf, int part)
{
    for (int i = 0; i < BLOCK; i++)
        buf[i] = amptest_byte(rank, (long long)part * BLOCK + i);
}

static void report(int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "rank %d: %s in the MPI_COMM_SELF delete callback failed: %s\n", rank, what,
            msg);
    callback_failures++;
}

/* the library's clean-up: the second half of every rank's data, then the close */
static int library_at_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
    unsigned char buf[BLOCK];
    fill(buf, 1);
    MPI_Offset at = ((MPI_Offset)size + rank) * BLOCK;
    report(MPI_File_write_at_all(library_file, at, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE),
           "write_at_all");
    report(MPI_File_close(&library_file), "close");
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int keyval;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, library_at_finalize, &keyval, NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL);

    char path[4096];
    snprintf(path, sizeof(path), "%s/finalize_order.dat", argc > 1 ? argv[1] : ".");
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                           &library_file);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: cannot open %s\n", rank, path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_set_errhandler(library_file, MPI_ERRORS_RETURN);
    unsigned char buf[BLOCK];
    fill(buf, 0);
    rc = MPI_File_write_at_all(library_file, (MPI_Offset)rank * BLOCK, buf, BLOCK, MPI_BYTE,
                               MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Finalize(); /* the library's callback closes the file */

    int status = callback_failures ? 1 : 0;
    if (rank == 0) {
        FILE *f = fopen(path, "rb");
        unsigned char got[BLOCK];
        for (int part = 0; part < 2 && f; part++) {
            for (int r = 0; r < size; r++) {
                rank = r;
                fill(buf, part);
                if (fread(got, 1, BLOCK, f) != BLOCK || memcmp(got, buf, BLOCK) != 0) {
                    fprintf(stderr, "rank %d's bytes of part %d are not in the file\n", r, part);
                    status = 1;
                }
            }
        }
        if (!f || fgetc(f) != EOF) {
            fprintf(stderr, "%s is missing or longer than the data written\n", path);
            status = 1;
        }
        if (f)
            fclose(f);
    }
    return status;
}
