/* Operations: the top floor under the entry points. Every data access comes here; this layer
 * checks it, fixes its position (explicit offset, individual or shared pointer, rank order),
 * chooses its path (independent transfer, collective access, a shared pointer component that
 * defers the data) and runs it, at once or behind a request. */
#ifndef AMP_OP_H
#define AMP_OP_H

#include "io/file.h"

typedef enum {
    AMP_OP_AT,      /* explicit offset */
    AMP_OP_INDIV,   /* individual file pointer */
    AMP_OP_SHARED,  /* shared file pointer, independent */
    AMP_OP_ORDERED, /* shared file pointer, collective in rank order */
} amp_op_where_t;

typedef struct amp_op_access {
    const char *routine; /* for messages */
    int write;
    amp_op_where_t where;
    int collective;
    MPI_Offset offset; /* AMP_OP_AT: in etypes */
    void *buf;
    MPI_Count count;
    MPI_Datatype type;
} amp_op_access_t;

/* Performs the access; fills `status` (may be MPI_STATUS_IGNORE). Collective accesses agree
 * on errors, so every rank returns an error when one rank failed. */
int amp_op_access(amp_file_t *f, const amp_op_access_t *a, MPI_Status *status);

/* Nonblocking: performs the access and returns a completed generalized request. */
int amp_op_start(amp_file_t *f, const amp_op_access_t *a, MPI_Request *request);

/* Split collectives: `begin` performs the access and keeps its status for `end`. `kind` names
 * the *_begin routine, so that only the matching *_end ends it. */
int amp_op_split_begin(amp_file_t *f, const amp_op_access_t *a, int kind);
int amp_op_split_end(amp_file_t *f, const void *buf, int kind, MPI_Status *status);

/* Frees what this layer keeps on the file (at close). */
void amp_op_file_free(amp_file_t *f);

#endif
