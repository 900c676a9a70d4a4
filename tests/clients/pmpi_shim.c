/* A minimal PMPI profiling tool, as tools like mpiP or Darshan are built: it defines a few
 * MPI_File_* routines, counts the calls and forwards them to PMPI_File_*. Preloaded in front of
 * ampio it must see every call while ampio still does the I/O. It prints its counts at
 * MPI_Finalize (which ampio leaves alone) and lets a program read them (pmpi_shim_count). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum { OPEN, SET_VIEW, WRITE_ALL, READ_ALL, WRITE_AT, READ_AT, WRITE_SHARED, GET_INFO, CLOSE, N };
static const char *const names[N] = {
    "MPI_File_open",         "MPI_File_set_view", "MPI_File_write_all",
    "MPI_File_read_all",     "MPI_File_write_at", "MPI_File_read_at",
    "MPI_File_write_shared", "MPI_File_get_info", "MPI_File_close"};
static int counts[N];

int pmpi_shim_count(const char *name);
int pmpi_shim_count(const char *name)
{
    for (int i = 0; i < N; i++)
        if (strcmp(names[i], name) == 0)
            return counts[i];
    return -1;
}

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    counts[OPEN]++;
    return PMPI_File_open(comm, filename, amode, info, fh);
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, MPI_Info info)
{
    counts[SET_VIEW]++;
    return PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
}

int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                       MPI_Status *status)
{
    counts[WRITE_ALL]++;
    return PMPI_File_write_all(fh, buf, count, type, status);
}

int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Status *status)
{
    counts[READ_ALL]++;
    return PMPI_File_read_all(fh, buf, count, type, status);
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype type,
                      MPI_Status *status)
{
    counts[WRITE_AT]++;
    return PMPI_File_write_at(fh, offset, buf, count, type, status);
}

int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type,
                     MPI_Status *status)
{
    counts[READ_AT]++;
    return PMPI_File_read_at(fh, offset, buf, count, type, status);
}

int MPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype type,
                          MPI_Status *status)
{
    counts[WRITE_SHARED]++;
    return PMPI_File_write_shared(fh, buf, count, type, status);
}

int MPI_File_get_info(MPI_File fh, MPI_Info *info)
{
    counts[GET_INFO]++;
    return PMPI_File_get_info(fh, info);
}

int MPI_File_close(MPI_File *fh)
{
    counts[CLOSE]++;
    return PMPI_File_close(fh);
}

int MPI_Finalize(void)
{
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char line[1024];
    int len = snprintf(line, sizeof(line), "pmpi_shim: rank %d:", rank);
    for (int i = 0; i < N && len < (int)sizeof(line); i++)
        len += snprintf(line + len, sizeof(line) - (size_t)len, " %s=%d", names[i], counts[i]);
    fprintf(stderr, "%s\n", line); /* one write: the ranks share the stream */
    return PMPI_Finalize();
}
