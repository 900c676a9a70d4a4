/* Datatypes, flattened. A datatype is decoded once (MPI_Type_get_envelope/get_contents), its
 * typemap reduced to contiguous byte segments in typemap order, and the result cached on the
 * type. Typed element runs, needed only to convert data representations, are built on demand. */
#ifndef AMP_DT_H
#define AMP_DT_H

#include <mpi.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* A contiguous piece of a typemap: `len` bytes at displacement `off`. */
typedef struct amp_seg {
    MPI_Aint off;
    MPI_Count len;
} amp_seg_t;

/* Element kinds, for conversions between data representations. */
typedef enum {
    AMP_KIND_RAW,     /* bytes copied as they are (MPI_BYTE, MPI_PACKED, chars) */
    AMP_KIND_INT,     /* signed two's complement integer */
    AMP_KIND_UINT,    /* unsigned integer, also bool and wchar */
    AMP_KIND_FLOAT,   /* IEEE binary32/binary64 */
    AMP_KIND_LDOUBLE, /* x87 80-bit extended stored in 16 bytes */
} amp_kind_class_t;

/* A kind packs class, native element size and external32 element size. */
typedef uint16_t amp_kind_t;
#define AMP_KIND(cls, nsize, fsize) ((amp_kind_t)(((cls) << 12) | ((nsize) << 6) | (fsize)))
#define AMP_KIND_CLASS(k)           ((k) >> 12)
#define AMP_KIND_NSIZE(k)           (((k) >> 6) & 63)
#define AMP_KIND_FSIZE(k)           ((k)&63)
#define AMP_KIND_UNKNOWN            AMP_KIND(AMP_KIND_RAW, 0, 0) /* no conversion is known */

/* A list of segments; with `kind` set, a list of typed runs (`len` bytes of elements of one
 * kind, never merged across kinds). */
typedef struct amp_seglist {
    size_t n, cap;
    amp_seg_t *v;
    amp_kind_t *kind; /* allocated when `typed` */
    int typed;
} amp_seglist_t;

typedef struct amp_dt {
    _Atomic int refs;
    MPI_Count size;       /* bytes of data in one instance */
    MPI_Count lb, extent; /* as MPI_Type_get_extent_x */
    amp_seglist_t segs;   /* merged byte segments, typemap order */
    MPI_Count *prefix;    /* prefix[i]: data bytes before segs.v[i]; prefix[n] == size */
    int nondecreasing;    /* segment starts never go backwards (legal filetype order) */
    int overlapping;      /* some byte appears twice */
    int contiguous;       /* count instances form one contiguous block */
    amp_seglist_t runs;   /* typed runs, built by amp_dt_runs() */
    int runs_built;
    int named; /* a predefined type */
} amp_dt_t;

/* Looks up (or builds and caches) the flattened form of `type`. Release with
 * amp_dt_release(). Returns an MPI error code. */
int amp_dt_get(MPI_Datatype type, amp_dt_t **out);
void amp_dt_release(amp_dt_t *dt);

/* A datatype-less layout of `bytes` contiguous bytes (lb 0, extent `bytes`). */
int amp_dt_contiguous(MPI_Count bytes, amp_dt_t **out);

/* Builds the typed runs of `dt` (once). */
int amp_dt_runs(amp_dt_t *dt, MPI_Datatype type);

/* Validates a handle the way MPI routines must: not MPI_DATATYPE_NULL, committed if derived. */
int amp_dt_check(MPI_Datatype type, const char *what);

/* Frees the cache keyval; called at MPI_Finalize. */
void amp_dt_finalize(void);

/* ---- iteration over the data bytes of consecutive instances ---- */

typedef struct amp_dt_iter {
    const amp_dt_t *dt;
    MPI_Aint base;  /* origin of instance 0 */
    MPI_Count inst; /* current instance */
    size_t seg;     /* current segment */
    MPI_Count used; /* bytes of the current segment already returned */
} amp_dt_iter_t;

/* Positions the iterator `skip` data bytes into the stream of instances starting at `base`. */
void amp_dt_iter_init(amp_dt_iter_t *it, const amp_dt_t *dt, MPI_Aint base, MPI_Count skip);

/* The next contiguous piece, at most `max` bytes long. The caller bounds the total. */
void amp_dt_iter_next(amp_dt_iter_t *it, MPI_Count max, MPI_Aint *addr, MPI_Count *len);

/* ---- segment lists ---- */

int amp_seglist_push(amp_seglist_t *l, MPI_Aint off, MPI_Count len, amp_kind_t kind);
void amp_seglist_free(amp_seglist_t *l);

/* ---- predefined types ---- */

/* Appends the typed runs of a predefined type at displacement `at`. Returns 0 when `type` is
 * not one of the known predefined types. */
int amp_dt_named_runs(MPI_Datatype type, MPI_Aint at, amp_seglist_t *out, int *known);

#endif
