/* The predefined datatypes: their element kinds and external32 sizes (MPI-3.1 section 13.5.2),
 * and the typemaps of the pair types used with MINLOC/MAXLOC. */
#include <stddef.h>
#include <wchar.h>

#include "dtype/dt.h"

typedef struct {
    MPI_Datatype type;
    amp_kind_t kind;
    int count; /* elements: 2 for complex types */
} amp_named_t;

#define RAW(t)                                                                                     \
    {                                                                                              \
        t, AMP_KIND(AMP_KIND_RAW, 1, 1), 0                                                         \
    }
#define SINT(t, c)                                                                                 \
    {                                                                                              \
        t, AMP_KIND(AMP_KIND_INT, sizeof(c), sizeof(c)), 1                                         \
    }
#define UINT(t, c)                                                                                 \
    {                                                                                              \
        t, AMP_KIND(AMP_KIND_UINT, sizeof(c), sizeof(c)), 1                                        \
    }
#define FLT(t, c, n)                                                                               \
    {                                                                                              \
        t, AMP_KIND(AMP_KIND_FLOAT, sizeof(c), sizeof(c)), n                                       \
    }

static const amp_named_t amp_named_table[] = {
    RAW(MPI_BYTE),
    RAW(MPI_PACKED),
    RAW(MPI_CHAR),
    RAW(MPI_SIGNED_CHAR),
    RAW(MPI_UNSIGNED_CHAR),
    RAW(MPI_CHARACTER),
    {MPI_WCHAR, AMP_KIND(AMP_KIND_UINT, sizeof(wchar_t), 2), 1},
    SINT(MPI_SHORT, short),
    UINT(MPI_UNSIGNED_SHORT, unsigned short),
    SINT(MPI_INT, int),
    UINT(MPI_UNSIGNED, unsigned),
    {MPI_LONG, AMP_KIND(AMP_KIND_INT, sizeof(long), 4), 1},
    {MPI_UNSIGNED_LONG, AMP_KIND(AMP_KIND_UINT, sizeof(unsigned long), 4), 1},
    SINT(MPI_LONG_LONG_INT, long long),
    SINT(MPI_LONG_LONG, long long),
    UINT(MPI_UNSIGNED_LONG_LONG, unsigned long long),
    SINT(MPI_INT8_T, int8_t),
    SINT(MPI_INT16_T, int16_t),
    SINT(MPI_INT32_T, int32_t),
    SINT(MPI_INT64_T, int64_t),
    UINT(MPI_UINT8_T, uint8_t),
    UINT(MPI_UINT16_T, uint16_t),
    UINT(MPI_UINT32_T, uint32_t),
    UINT(MPI_UINT64_T, uint64_t),
    SINT(MPI_AINT, MPI_Aint),
    SINT(MPI_OFFSET, MPI_Offset),
    SINT(MPI_COUNT, MPI_Count),
    UINT(MPI_C_BOOL, _Bool),
    FLT(MPI_FLOAT, float, 1),
    FLT(MPI_DOUBLE, double, 1),
    {MPI_LONG_DOUBLE, AMP_KIND(AMP_KIND_LDOUBLE, sizeof(long double), 16), 1},
    FLT(MPI_C_FLOAT_COMPLEX, float, 2),
    FLT(MPI_C_COMPLEX, float, 2),
    FLT(MPI_C_DOUBLE_COMPLEX, double, 2),
    {MPI_C_LONG_DOUBLE_COMPLEX, AMP_KIND(AMP_KIND_LDOUBLE, sizeof(long double), 16), 2},
    SINT(MPI_INTEGER, int32_t),
    FLT(MPI_REAL, float, 1),
    FLT(MPI_DOUBLE_PRECISION, double, 1),
    FLT(MPI_COMPLEX, float, 2),
    FLT(MPI_DOUBLE_COMPLEX, double, 2),
    UINT(MPI_LOGICAL, int32_t),
    SINT(MPI_2INTEGER, int32_t),
    FLT(MPI_2REAL, float, 2),
    FLT(MPI_2DOUBLE_PRECISION, double, 2),
    SINT(MPI_2INT, int),
    SINT(MPI_INTEGER1, int8_t),
    SINT(MPI_INTEGER2, int16_t),
    SINT(MPI_INTEGER4, int32_t),
    SINT(MPI_INTEGER8, int64_t),
    FLT(MPI_REAL4, float, 1),
    FLT(MPI_REAL8, double, 1),
    FLT(MPI_COMPLEX8, float, 2),
    FLT(MPI_COMPLEX16, double, 2),
};

/* Pair types: two members at the offsets the C compiler gives. */
typedef struct {
    MPI_Datatype type;
    amp_kind_t first;
    MPI_Aint second_off;
} amp_pair_t;

struct amp_float_int {
    float v;
    int i;
};
struct amp_double_int {
    double v;
    int i;
};
struct amp_long_int {
    long v;
    int i;
};
struct amp_short_int {
    short v;
    int i;
};
struct amp_ldouble_int {
    long double v;
    int i;
};

static const amp_pair_t amp_pair_table[] = {
    {MPI_FLOAT_INT, AMP_KIND(AMP_KIND_FLOAT, 4, 4), offsetof(struct amp_float_int, i)},
    {MPI_DOUBLE_INT, AMP_KIND(AMP_KIND_FLOAT, 8, 8), offsetof(struct amp_double_int, i)},
    {MPI_LONG_INT, AMP_KIND(AMP_KIND_INT, sizeof(long), 4), offsetof(struct amp_long_int, i)},
    {MPI_SHORT_INT, AMP_KIND(AMP_KIND_INT, sizeof(short), 2), offsetof(struct amp_short_int, i)},
    {MPI_LONG_DOUBLE_INT, AMP_KIND(AMP_KIND_LDOUBLE, sizeof(long double), 16),
     offsetof(struct amp_ldouble_int, i)},
};

int amp_dt_named_runs(MPI_Datatype type, MPI_Aint at, amp_seglist_t *out, int *known)
{
    int size = 0;
    PMPI_Type_size(type, &size);
    *known = 1;
    for (size_t i = 0; i < sizeof(amp_pair_table) / sizeof(amp_pair_table[0]); i++) {
        const amp_pair_t *p = &amp_pair_table[i];
        if (p->type == MPI_DATATYPE_NULL || p->type != type)
            continue;
        int rc = amp_seglist_push(out, at, AMP_KIND_NSIZE(p->first), p->first);
        if (rc == MPI_SUCCESS)
            rc = amp_seglist_push(out, at + p->second_off, sizeof(int),
                                  AMP_KIND(AMP_KIND_INT, sizeof(int), 4));
        return rc;
    }
    for (size_t i = 0; i < sizeof(amp_named_table) / sizeof(amp_named_table[0]); i++) {
        const amp_named_t *n = &amp_named_table[i];
        if (n->type == MPI_DATATYPE_NULL || n->type != type)
            continue;
        int elems = n->count ? n->count : size;
        if (elems * AMP_KIND_NSIZE(n->kind) != size)
            break; /* the host disagrees with our idea of this type: treat it as bytes */
        return size ? amp_seglist_push(out, at, size, n->kind) : MPI_SUCCESS;
    }
    /* Unknown predefined type: its bytes, which no conversion may touch. */
    *known = 0;
    return size ? amp_seglist_push(out, at, size, AMP_KIND_UNKNOWN) : MPI_SUCCESS;
}
