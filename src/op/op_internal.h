/* Shared by the files of the op layer. */
#ifndef AMP_OP_INTERNAL_H
#define AMP_OP_INTERNAL_H

#include "core/task.h"
#include "dtype/dt.h"
#include "op/op.h"

/* An access checked, sized and, where that needs nobody else, positioned. */
typedef struct amp_op_prep {
    amp_op_access_t a;
    amp_dt_t *mdt;      /* held until amp_op_prep_free */
    MPI_Datatype owned; /* a duplicate of a->type this access holds, or MPI_DATATYPE_NULL */
    MPI_Count bytes, item;
    MPI_Offset etypes; /* bytes in etypes */
    MPI_Offset start;  /* first etype of the access, when `placed` */
    MPI_Count pos;     /* its first data byte of the view, checked to fit (amp_view_range) */
    int placed;        /* start is known (ordered accesses learn it in their collective) */
    int deferred;      /* a shared pointer component took the data to place it later */
    int fp_moved;      /* the individual pointer was moved at initiation by the whole access */
    pthread_mutex_t *fp_held; /* blocking: the pointer's lock, held from reading to advancing */
    int rc; /* the first error; a collective access still takes part without data */
} amp_op_prep_t;

/* Checks and sizes `a`, and positions it unless it is ordered. `nonblocking`: the individual
 * pointer moves now by the whole access (the standard updates it at initiation), and the
 * datatype is duplicated when a data representation converts through it later. */
void amp_op_prepare(amp_file_t *f, const amp_op_access_t *a, int nonblocking, amp_op_prep_t *p);

/* The rest of the access (collective ones agree on errors); fills `status`. */
int amp_op_run(amp_file_t *f, amp_op_prep_t *p, MPI_Status *status);

void amp_op_prep_free(amp_op_prep_t *p);

/* A nonblocking access: a task running amp_op_run, behind a generalized request (`greq`) or a
 * split collective (greq MPI_REQUEST_NULL). Fields below `p` change under the progress lock. */
struct amp_op_req {
    amp_file_t *f; /* NULL once the access is done (the file may be closed after) */
    MPI_File fh;   /* for the error handler at completion */
    amp_op_prep_t p;
    amp_task_t *task;
    MPI_Request greq;
    int collective;
    int started;  /* the task has run its first step (collectives wait for the previous one) */
    int done;     /* ended: rc and bytes are final (read with acquire ordering) */
    int detached; /* the application freed the request: it goes when done */
    int released; /* completed with the host: the progressing thread touches it no more */
    int rc;
    MPI_Count bytes;                          /* memory bytes moved */
    struct amp_op_req *next_file;             /* the file's queue of collective accesses */
    struct amp_op_req *next_done;             /* done in this pass of progress */
    struct amp_op_req *next_live, *prev_live; /* every request not yet freed */
};

/* A split collective begun and not yet ended. */
typedef struct amp_op_split {
    int active;
    int kind; /* which *_begin started it */
    amp_op_req_t *req;
} amp_op_split_t;

/* What this layer keeps per file. */
struct amp_op_state {
    amp_op_split_t split;
    amp_op_req_t *head, *tail; /* collective accesses in the order they were started */
    int pending;               /* accesses started and not done, collective or not */
};

/* The file's state, made on first need; NULL when out of memory. */
struct amp_op_state *amp_op_state(amp_file_t *f);

/* Makes the task of a prepared access (the request takes `p`), registers it and runs its
 * first step, unless an earlier collective access of the file still runs. `greq` is made
 * here when `with_greq`. */
int amp_op_req_start(amp_file_t *f, amp_op_prep_t *p, int with_greq, amp_op_req_t **out);

/* Advances every pending access until `q` is done. */
void amp_op_req_finish(amp_op_req_t *q);

/* Frees a done request that has no generalized request (split collectives). */
void amp_op_req_free(amp_op_req_t *q);

/* Unlinks `q` from the requests alive (the free callback of its generalized request). */
void amp_op_req_unlink(amp_op_req_t *q);

/* The generalized request's callbacks (op_request.c). */
int amp_op_greq_query(void *extra, MPI_Status *status);
int amp_op_greq_free(void *extra);
int amp_op_greq_cancel(void *extra, int complete);

/* Fills `status` (may be MPI_STATUS_IGNORE) for `bytes` of memory data moved. */
void amp_op_status(MPI_Status *status, MPI_Count bytes);

#endif
