/* The MPI-IO operations on ampio file objects. Each returns an MPI error code; raising it
 * through the file's error handler is the API layer's business. Collective operations agree on
 * errors, so every rank returns an error when one rank failed. */
#ifndef AMP_FILEOPS_H
#define AMP_FILEOPS_H

#include "core/file.h"

/* ---- open, close, delete (file_open.c) ---- */
int amp_file_open(MPI_Comm comm, const char *path, int amode, MPI_Info info, amp_file_t **out);
int amp_file_close(amp_file_t *f);
int amp_file_delete(const char *path, MPI_Info info);

/* Releases the local resources of a file left open at MPI_Finalize. */
void amp_file_reap(amp_file_t *f);

/* The path without a ROMIO-style file system prefix ("ufs:", "lustre:", ...). */
const char *amp_file_strip_prefix(const char *path);

/* ---- control (file_ctl.c) ---- */
int amp_file_set_size(amp_file_t *f, MPI_Offset size);
int amp_file_preallocate(amp_file_t *f, MPI_Offset size);
int amp_file_get_size(amp_file_t *f, MPI_Offset *size);
int amp_file_sync(amp_file_t *f);
int amp_file_set_info(amp_file_t *f, MPI_Info info);
int amp_file_get_info(amp_file_t *f, MPI_Info *info);
int amp_file_set_atomicity(amp_file_t *f, int flag);
int amp_file_set_view(amp_file_t *f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, MPI_Info info);
int amp_file_get_view(amp_file_t *f, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                      char *datarep);
int amp_file_seek(amp_file_t *f, MPI_Offset offset, int whence);
int amp_file_seek_shared(amp_file_t *f, MPI_Offset offset, int whence);
int amp_file_get_position_shared(amp_file_t *f, MPI_Offset *offset);
int amp_file_get_byte_offset(amp_file_t *f, MPI_Offset offset, MPI_Offset *disp);

/* The end of file as an offset in etypes of the current view. */
int amp_file_eof_etypes(amp_file_t *f, MPI_Offset *eof);

/* ---- data access (io/access.c) ---- */

typedef enum {
    AMP_AT,      /* explicit offset */
    AMP_INDIV,   /* individual file pointer */
    AMP_SHARED,  /* shared file pointer, independent */
    AMP_ORDERED, /* shared file pointer, collective in rank order */
} amp_where_t;

typedef struct amp_access {
    const char *routine; /* for messages */
    int write;
    amp_where_t where;
    int collective;
    MPI_Offset offset; /* AMP_AT: in etypes */
    void *buf;
    MPI_Count count;
    MPI_Datatype type;
} amp_access_t;

/* Performs the access; fills `status` (may be MPI_STATUS_IGNORE). */
int amp_access(amp_file_t *f, const amp_access_t *a, MPI_Status *status);

/* Nonblocking: performs the access and returns a completed generalized request. */
int amp_access_start(amp_file_t *f, const amp_access_t *a, MPI_Request *request);

/* Split collectives: `begin` performs the access and keeps its status for `end`. */
int amp_split_begin(amp_file_t *f, const amp_access_t *a, int kind);
int amp_split_end(amp_file_t *f, const void *buf, int kind, MPI_Status *status);

#endif
