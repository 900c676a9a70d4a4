/* File views: the mapping between the stream of data bytes a process sees through its view and
 * absolute file offsets. */
#ifndef AMP_VIEW_H
#define AMP_VIEW_H

#include "io/file.h"

/* The view every file starts with: displacement 0, MPI_BYTE etype and filetype, "native". */
int amp_view_default(amp_view_t *v);

/* Validates and builds a view. `writable` forbids overlapping filetypes. */
int amp_view_build(amp_view_t *v, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                   const char *datarep, int writable);
void amp_view_free(amp_view_t *v);

/* Whether consecutive copies of the filetype leave gaps in the file between their data. */
int amp_view_has_holes(const amp_view_t *v);

/* Absolute file offset of data byte `pos` of the view. */
MPI_Offset amp_view_offset(const amp_view_t *v, MPI_Count pos);

/* Checks that view positions [pos, pos + bytes) starting at etype `etypes` of the view (pos =
 * etypes * esize, computed here) map to file offsets that fit in MPI_Offset: a sum or product
 * that wrapped round would place data at the wrong offset. Sets `*pos`; MPI_ERR_ARG otherwise. */
int amp_view_range(const amp_view_t *v, MPI_Offset etypes, MPI_Count bytes, MPI_Count *pos,
                   const char *routine);

/* The absolute file offset of etype `etypes` of the view, or MPI_ERR_ARG past MPI_Offset. */
int amp_view_etype_offset(const amp_view_t *v, MPI_Offset etypes, MPI_Offset *off,
                          const char *routine);

/* Number of data bytes of the view that lie before absolute file offset `off`. */
MPI_Count amp_view_bytes_before(const amp_view_t *v, MPI_Offset off);
/* How many of the view positions [from, to) lie below file offset `off` (exact even where
 * copies of the filetype interleave). */
MPI_Count amp_view_bytes_before_in(const amp_view_t *v, MPI_Offset off, MPI_Count from,
                                   MPI_Count to);

/* Whether the data of the view is one contiguous run of the file. */
static inline int amp_view_contiguous(const amp_view_t *v)
{
    return v->ft->contiguous;
}

#endif
