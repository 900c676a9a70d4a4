/* Entry points of every data access routine: explicit offsets, individual and shared file
 * pointers; blocking, nonblocking and split collective; and their MPI-4 large-count forms. */
#include "api/api.h"

#pragma GCC visibility push(default)

/* ---- the four shapes every routine reduces to ---- */

static int amp_api_access(MPI_File fh, const char *routine, int write, amp_op_where_t where,
                          int collective, MPI_Offset offset, const void *buf, MPI_Count count,
                          MPI_Datatype type, MPI_Status *status)
{
    amp_op_access_t a = {routine, write, where, collective, offset, (void *)buf, count, type};
    AMP_API_ON_FILE(fh, routine, amp_op_access(f, &a, status));
}

static int amp_api_start(MPI_File fh, const char *routine, int write, amp_op_where_t where,
                         int collective, MPI_Offset offset, const void *buf, MPI_Count count,
                         MPI_Datatype type, MPI_Request *request)
{
    amp_op_access_t a = {routine, write, where, collective, offset, (void *)buf, count, type};
    AMP_API_ON_FILE(fh, routine, amp_op_start(f, &a, request));
}

/* Split collectives: which *_begin began, so that the matching *_end is required. */
enum {
    AMP_SPLIT_READ_AT,
    AMP_SPLIT_WRITE_AT,
    AMP_SPLIT_READ,
    AMP_SPLIT_WRITE,
    AMP_SPLIT_READ_ORDERED,
    AMP_SPLIT_WRITE_ORDERED
};

static int amp_api_begin(MPI_File fh, const char *routine, int kind, int write,
                         amp_op_where_t where, MPI_Offset offset, const void *buf, MPI_Count count,
                         MPI_Datatype type)
{
    amp_op_access_t a = {routine, write, where, 1, offset, (void *)buf, count, type};
    AMP_API_ON_FILE(fh, routine, amp_op_split_begin(f, &a, kind));
}

static int amp_api_end(MPI_File fh, const char *routine, int kind, const void *buf,
                       MPI_Status *status)
{
    AMP_API_ON_FILE(fh, routine, amp_op_split_end(f, buf, kind, status));
}

/* ---- explicit offsets ---- */

#define AMP_AT(name, write, coll, CONST, COUNT)                                                    \
    int PMPI_File_##name(MPI_File fh, MPI_Offset offset, CONST void *buf, COUNT count,             \
                         MPI_Datatype type, MPI_Status *status)                                    \
    {                                                                                              \
        return amp_api_access(fh, "MPI_File_" #name, write, AMP_OP_AT, coll, offset, buf, count,   \
                              type, status);                                                       \
    }                                                                                              \
    AMP_WEAK(name)
#define AMP_IAT(name, write, coll, CONST, COUNT)                                                   \
    int PMPI_File_##name(MPI_File fh, MPI_Offset offset, CONST void *buf, COUNT count,             \
                         MPI_Datatype type, MPI_Request *request)                                  \
    {                                                                                              \
        return amp_api_start(fh, "MPI_File_" #name, write, AMP_OP_AT, coll, offset, buf, count,    \
                             type, request);                                                       \
    }                                                                                              \
    AMP_WEAK(name)
/* ---- individual and shared file pointers ---- */

#define AMP_PTR(name, write, where, coll, CONST, COUNT)                                            \
    int PMPI_File_##name(MPI_File fh, CONST void *buf, COUNT count, MPI_Datatype type,             \
                         MPI_Status *status)                                                       \
    {                                                                                              \
        return amp_api_access(fh, "MPI_File_" #name, write, where, coll, 0, buf, count, type,      \
                              status);                                                             \
    }                                                                                              \
    AMP_WEAK(name)
#define AMP_IPTR(name, write, where, coll, CONST, COUNT)                                           \
    int PMPI_File_##name(MPI_File fh, CONST void *buf, COUNT count, MPI_Datatype type,             \
                         MPI_Request *request)                                                     \
    {                                                                                              \
        return amp_api_start(fh, "MPI_File_" #name, write, where, coll, 0, buf, count, type,       \
                             request);                                                             \
    }                                                                                              \
    AMP_WEAK(name)
/* ---- split collectives ---- */

#define AMP_BEGIN_AT(name, kind, write, CONST, COUNT)                                              \
    int PMPI_File_##name(MPI_File fh, MPI_Offset offset, CONST void *buf, COUNT count,             \
                         MPI_Datatype type)                                                        \
    {                                                                                              \
        return amp_api_begin(fh, "MPI_File_" #name, kind, write, AMP_OP_AT, offset, buf, count,    \
                             type);                                                                \
    }                                                                                              \
    AMP_WEAK(name)
#define AMP_BEGIN(name, kind, write, where, CONST, COUNT)                                          \
    int PMPI_File_##name(MPI_File fh, CONST void *buf, COUNT count, MPI_Datatype type)             \
    {                                                                                              \
        return amp_api_begin(fh, "MPI_File_" #name, kind, write, where, 0, buf, count, type);      \
    }                                                                                              \
    AMP_WEAK(name)
#define AMP_END(name, kind, CONST)                                                                 \
    int PMPI_File_##name(MPI_File fh, CONST void *buf, MPI_Status *status)                         \
    {                                                                                              \
        return amp_api_end(fh, "MPI_File_" #name, kind, buf, status);                              \
    }                                                                                              \
    AMP_WEAK(name)
#define AMP_NOCONST

/* Each routine once with an int count and, where the host declares MPI-4 names, once with an
 * MPI_Count. */
#define AMP_ALL_COUNTS(X, name, ...)                                                               \
    X(name, __VA_ARGS__, int)                                                                      \
    AMP_LARGE(X(name##_c, __VA_ARGS__, MPI_Count))

#if MPI_VERSION >= 4
#define AMP_LARGE(x) x
#else
#define AMP_LARGE(x)
#endif

AMP_ALL_COUNTS(AMP_AT, read_at, 0, 0, AMP_NOCONST)
AMP_ALL_COUNTS(AMP_AT, read_at_all, 0, 1, AMP_NOCONST)
AMP_ALL_COUNTS(AMP_AT, write_at, 1, 0, const)
AMP_ALL_COUNTS(AMP_AT, write_at_all, 1, 1, const)
AMP_ALL_COUNTS(AMP_IAT, iread_at, 0, 0, AMP_NOCONST)
AMP_ALL_COUNTS(AMP_IAT, iread_at_all, 0, 1, AMP_NOCONST)
AMP_ALL_COUNTS(AMP_IAT, iwrite_at, 1, 0, const)
AMP_ALL_COUNTS(AMP_IAT, iwrite_at_all, 1, 1, const)

AMP_ALL_COUNTS(AMP_PTR, read, 0, AMP_OP_INDIV, 0, AMP_NOCONST)
AMP_ALL_COUNTS(AMP_PTR, read_all, 0, AMP_OP_INDIV, 1, AMP_NOCONST)
AMP_ALL_COUNTS(AMP_PTR, write, 1, AMP_OP_INDIV, 0, const)
AMP_ALL_COUNTS(AMP_PTR, write_all, 1, AMP_OP_INDIV, 1, const)
AMP_ALL_COUNTS(AMP_IPTR, iread, 0, AMP_OP_INDIV, 0, AMP_NOCONST)
AMP_ALL_COUNTS(AMP_IPTR, iread_all, 0, AMP_OP_INDIV, 1, AMP_NOCONST)
AMP_ALL_COUNTS(AMP_IPTR, iwrite, 1, AMP_OP_INDIV, 0, const)
AMP_ALL_COUNTS(AMP_IPTR, iwrite_all, 1, AMP_OP_INDIV, 1, const)

AMP_ALL_COUNTS(AMP_PTR, read_shared, 0, AMP_OP_SHARED, 0, AMP_NOCONST)
AMP_ALL_COUNTS(AMP_PTR, write_shared, 1, AMP_OP_SHARED, 0, const)
AMP_ALL_COUNTS(AMP_IPTR, iread_shared, 0, AMP_OP_SHARED, 0, AMP_NOCONST)
AMP_ALL_COUNTS(AMP_IPTR, iwrite_shared, 1, AMP_OP_SHARED, 0, const)
AMP_ALL_COUNTS(AMP_PTR, read_ordered, 0, AMP_OP_ORDERED, 1, AMP_NOCONST)
AMP_ALL_COUNTS(AMP_PTR, write_ordered, 1, AMP_OP_ORDERED, 1, const)

AMP_ALL_COUNTS(AMP_BEGIN_AT, read_at_all_begin, AMP_SPLIT_READ_AT, 0, AMP_NOCONST)
AMP_ALL_COUNTS(AMP_BEGIN_AT, write_at_all_begin, AMP_SPLIT_WRITE_AT, 1, const)
AMP_ALL_COUNTS(AMP_BEGIN, read_all_begin, AMP_SPLIT_READ, 0, AMP_OP_INDIV, AMP_NOCONST)
AMP_ALL_COUNTS(AMP_BEGIN, write_all_begin, AMP_SPLIT_WRITE, 1, AMP_OP_INDIV, const)
AMP_ALL_COUNTS(AMP_BEGIN, read_ordered_begin, AMP_SPLIT_READ_ORDERED, 0, AMP_OP_ORDERED,
               AMP_NOCONST)
AMP_ALL_COUNTS(AMP_BEGIN, write_ordered_begin, AMP_SPLIT_WRITE_ORDERED, 1, AMP_OP_ORDERED, const)

AMP_END(read_at_all_end, AMP_SPLIT_READ_AT, AMP_NOCONST)
AMP_END(write_at_all_end, AMP_SPLIT_WRITE_AT, const)
AMP_END(read_all_end, AMP_SPLIT_READ, AMP_NOCONST)
AMP_END(write_all_end, AMP_SPLIT_WRITE, const)
AMP_END(read_ordered_end, AMP_SPLIT_READ_ORDERED, AMP_NOCONST)
AMP_END(write_ordered_end, AMP_SPLIT_WRITE_ORDERED, const)

#pragma GCC visibility pop
