/* The MPI-IO operations on ampio file objects. Each returns an MPI error code; raising it
 * through the file's error handler is the API layer's business. Collective operations agree on
 * errors, so every rank returns an error when one rank failed. */
#ifndef AMP_FILEOPS_H
#define AMP_FILEOPS_H

#include "io/file.h"

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

#endif
