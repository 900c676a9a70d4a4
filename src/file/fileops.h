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

/* ---- the layout (file_layout.c) ---- */

/* The striping the file's hints ask for. */
amp_fs_want_t amp_file_want(const amp_cfg_t *cfg);

/* The provider that will set the hints' layout on a file this rank creates, or -1 when the
 * hints ask for none or the file system cannot set one. */
int amp_file_layout_setter(amp_file_t *f);

/* Sets the hints' layout on the file just opened (`created`: by this open, exclusively), and
 * records what became of them. */
void amp_file_layout_apply(amp_file_t *f, int provider, int created);

/* Collective, the open's agreement on `rc` (how this rank's open went): rank 0 reads the layout
 * the file has, and the one reduction that agrees brings it to every rank, with the or of every
 * rank's `nextra` words `extra` (left as they were when the agreement fails), which come first
 * in the reduction (the open's checks place words where another path's reduction has them). */
int amp_file_layout_share(amp_file_t *f, int rc, uint64_t *extra, int nextra);

/* What became of the striping hints, or NULL when there were none. */
const char *amp_file_layout_hints_text(const amp_fs_layout_t *l, char *text, size_t len);

/* Adds the layout in use (striping_unit, striping_factor, ...) and the cycle buffer to `info`. */
int amp_file_layout_info(const amp_file_t *f, MPI_Info info);

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
