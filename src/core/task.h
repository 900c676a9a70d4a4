/* Tasks: a protocol written as straight-line code (a collective access, an agreement) runs on a
 * stack of its own and gives its thread back wherever it would wait, so that the thread that
 * resumes it advances it a step at a time: the protocol is a state machine whose state is its
 * stack. Outside a task every wait below blocks as the plain MPI call does, so one piece of
 * code serves blocking calls unchanged and nonblocking ones in steps.
 *
 * Inside a task the waits are nonblocking MPI (MPI_Iallgather, MPI_Iallreduce, MPI_Ibcast,
 * MPI_Iscan, MPI_Improbe, tests of Isend/Irecv requests), tested once per step. */
#ifndef AMP_TASK_H
#define AMP_TASK_H

#include <mpi.h>

typedef struct amp_task amp_task_t;

/* A task that will run fn(arg); nothing runs before the first amp_task_resume. */
int amp_task_create(int (*fn)(void *), void *arg, amp_task_t **out);

/* Runs fn(arg) as a task to its end on the calling thread, calling `idle` (may be NULL) between
 * its steps, on a task and stack kept for this, one at a time: it needs no memory. The last
 * resort of a rank that must take part in a protocol of nonblocking collectives (which match
 * no blocking ones) and could not make a task for it. Returns fn's result. */
int amp_task_run_reserved(int (*fn)(void *), void *arg, void (*idle)(void));

/* Runs `t` on the calling thread until it waits or ends. Returns 1 when it has ended, with
 * fn's result in *rc; 0 when it waits. A task may be resumed from another thread than the
 * last one, one thread at a time; task code keeps no thread-local state across a wait. */
int amp_task_resume(amp_task_t *t, int *rc);

/* Frees an ended task (or one never resumed). */
void amp_task_free(amp_task_t *t);

/* Whether the calling code runs inside a task. */
int amp_task_inside(void);

/* Inside a task: gives the thread back until the next resume. Outside: nothing. */
void amp_task_yield(void);

/* Collective over `comm`, which every rank marks or none: its ranks share cores with more
 * ranks than there are cores on some node. Collectives on it (on a duplicate of it kept as its
 * attribute) then poll and nap outside a task instead of blocking in MPI (task.c says why).
 * Where a rank cannot set it up, none does. */
void amp_task_mark_crowded(MPI_Comm comm);

/* ---- waits: blocking outside a task (collectives polling where crowded), a yield per
 * unfinished step inside ---- */

int amp_task_wait(MPI_Request *req, MPI_Status *status);
int amp_task_waitall(int n, MPI_Request *reqs, MPI_Status *statuses);
int amp_task_mprobe(int source, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *status);

int amp_task_allreduce(const void *in, void *out, int n, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm);
int amp_task_allgather(const void *in, int n, MPI_Datatype type, void *out, int m,
                       MPI_Datatype out_type, MPI_Comm comm);
int amp_task_gather(const void *in, int n, MPI_Datatype type, void *out, int m,
                    MPI_Datatype out_type, int root, MPI_Comm comm);
int amp_task_gatherv(const void *in, int n, MPI_Datatype type, void *out, const int *counts,
                     const int *displs, MPI_Datatype out_type, int root, MPI_Comm comm);
int amp_task_scatter(const void *in, int n, MPI_Datatype type, void *out, int m,
                     MPI_Datatype out_type, int root, MPI_Comm comm);
int amp_task_scatterv(const void *in, const int *counts, const int *displs, MPI_Datatype type,
                      void *out, int m, MPI_Datatype out_type, int root, MPI_Comm comm);
int amp_task_bcast(void *buf, int n, MPI_Datatype type, int root, MPI_Comm comm);
int amp_task_scan(const void *in, void *out, int n, MPI_Datatype type, MPI_Op op, MPI_Comm comm);

/* The same for the agreement on errors (core/agree.c), which no injected communication fault
 * touches: it is what carries every other fault to every rank. */
int amp_task_agree_allreduce(const void *in, void *out, int n, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm);
int amp_task_agree_bcast(void *buf, int n, MPI_Datatype type, int root, MPI_Comm comm);
int amp_task_agree_allgather(const void *in, int n, MPI_Datatype type, void *out, int m,
                             MPI_Datatype out_type, MPI_Comm comm);

#endif
