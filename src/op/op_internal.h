/* Shared by the files of the op layer. */
#ifndef AMP_OP_INTERNAL_H
#define AMP_OP_INTERNAL_H

#include "op/op.h"

/* A split collective begun and not yet ended. */
typedef struct amp_op_split {
    int active;
    int kind; /* which *_begin started it */
    int rc;
    MPI_Status status;
} amp_op_split_t;

/* What this layer keeps per file. */
struct amp_op_state {
    amp_op_split_t split;
};

/* The file's state, made on first need; NULL when out of memory. */
struct amp_op_state *amp_op_state(amp_file_t *f);

/* Fills `status` (may be MPI_STATUS_IGNORE) for `bytes` of memory data moved. */
void amp_op_status(MPI_Status *status, MPI_Count bytes);

#endif
