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

/* Nonblocking: starts the access without waiting for any other process and returns a
 * generalized request. The access runs as a task (core/task.h) advanced by every ampio call
 * and by the completion routines; its file access runs on ampio's I/O thread. An error found
 * at initiation is returned at once by an independent access; a collective one takes part
 * without data and every rank reports the error at completion. */
int amp_op_start(amp_file_t *f, const amp_op_access_t *a, MPI_Request *request);

/* Split collectives: `begin` starts the access as amp_op_start does, `end` completes it and
 * reports its error. `kind` names the *_begin routine, so that only the matching *_end ends
 * it. */
int amp_op_split_begin(amp_file_t *f, const amp_op_access_t *a, int kind);
int amp_op_split_end(amp_file_t *f, const void *buf, int kind, MPI_Status *status);

/* Completes this process's pending accesses on the file: the collective ones only
 * (`collective_only`, before a blocking collective, so that collectives are posted in the
 * order they were called) or all (close, set_view, sync, set_size). */
void amp_op_drain(amp_file_t *f, int collective_only);

/* Frees what this layer keeps on the file (at close, after amp_op_drain). */
void amp_op_file_free(amp_file_t *f);

/* ---- the completion routines' view of requests (api/api_request.c) ---- */

typedef struct amp_op_req amp_op_req_t;

/* Whether any ampio request exists, and whether any is still in progress: the completion
 * routines take the host's path unchanged when none does. */
int amp_op_live(void);
int amp_op_pending(void);

/* Advances every pending access one step; never blocks, never re-enters. */
void amp_op_progress(void);

/* The ampio request behind `r`, or NULL. */
amp_op_req_t *amp_op_find(MPI_Request r);

/* Whether `q` is done; its result (and its file's handle, for the error handler). */
int amp_op_done(const amp_op_req_t *q);
int amp_op_result(const amp_op_req_t *q, MPI_File *fh);

/* MPI_Request_free on an ampio request: returns 1 when `q` was still pending (it then goes
 * when done), 0 when the host may free it now. */
int amp_op_detach(amp_op_req_t *q);

/* Brackets a call of a host completion routine: the query callback then reports success (the
 * caller reports the result from amp_op_result), and requests freed inside stay readable until
 * amp_op_wrap_end. */
void amp_op_wrap_begin(void);
void amp_op_wrap_end(void);

/* At MPI_Finalize, after every file was closed or reaped. */
void amp_op_finalize(void);

#endif
