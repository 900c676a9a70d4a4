/* Data representations: "native" and "internal" (the same here), "external32" (big-endian,
 * the sizes of MPI-3.1 section 13.5.2) and those registered with MPI_Register_datarep. */
#ifndef AMP_DATAREP_H
#define AMP_DATAREP_H

#include <mpi.h>

#include "dtype/dt.h"

typedef struct amp_datarep {
    char name[MPI_MAX_DATAREP_STRING + 1];
    int external32;
    MPI_Datarep_conversion_function *read_fn, *write_fn;
#if MPI_VERSION >= 4
    MPI_Datarep_conversion_function_c *read_fn_c, *write_fn_c;
#endif
    MPI_Datarep_extent_function *extent_fn;
    void *extra;
} amp_datarep_t;

/* Finds a representation by name; *rep is NULL for "native" and "internal". */
int amp_datarep_find(const char *name, const amp_datarep_t **rep);

/* The conversion functions of MPI_Register_datarep (int counts) or _c (MPI_Count). */
typedef struct amp_datarep_fns {
    MPI_Datarep_conversion_function *read_fn, *write_fn;
#if MPI_VERSION >= 4
    MPI_Datarep_conversion_function_c *read_fn_c, *write_fn_c;
#endif
} amp_datarep_fns_t;

int amp_datarep_register(const char *name, const amp_datarep_fns_t *fns,
                         MPI_Datarep_extent_function *extent_fn, void *extra);

/* Whether accesses through `rep` convert data (else they are native accesses). */
int amp_datarep_converts(const amp_datarep_t *rep);

/* Extent of `type` in the file (MPI_File_get_type_extent). */
int amp_datarep_extent(const amp_datarep_t *rep, MPI_Datatype type, MPI_Count *extent);

/* The layout in the file of a filetype (`native` is its flattened memory form) and the file
 * size of one etype. */
int amp_datarep_layout(const amp_datarep_t *rep, MPI_Datatype type, amp_dt_t *native,
                       amp_dt_t **file);
int amp_datarep_size(const amp_datarep_t *rep, MPI_Datatype type, amp_dt_t *native,
                     MPI_Count *size);

/* Converts `count` items of `type` at `buf` into `stream` (the file representation, packed). */
int amp_datarep_encode(const amp_datarep_t *rep, const void *buf, MPI_Datatype type, amp_dt_t *dt,
                       MPI_Count count, void *stream);

/* Converts the first `stream_bytes` of `stream` back into items at `buf`. Only what was read
 * whole is stored: whole elements for external32 (a read past the end of file returns the
 * elements it got, as for native data), whole items for registered representations (their
 * conversion functions take items). */
int amp_datarep_decode(const amp_datarep_t *rep, void *buf, MPI_Datatype type, amp_dt_t *dt,
                       MPI_Count count, const void *stream, MPI_Count stream_bytes);

#endif
