/* ampio's I/O threads: file access handed over by nonblocking requests and by tasks runs here,
 * in the order it was handed over, while the application computes. Jobs make POSIX calls only,
 * never MPI: an error a job raises is kept as a class and a message, and becomes an MPI error
 * code when the job's owner collects it (amp_worker_result). */
#ifndef AMP_WORKER_H
#define AMP_WORKER_H

#include <mpi.h>

#define AMP_WORKER_MSG_MAX 512

enum { AMP_WORKER_QUEUED, AMP_WORKER_RUNNING, AMP_WORKER_DONE, AMP_WORKER_CANCELLED };

typedef struct amp_worker_job {
    int (*fn)(void *arg); /* the access; POSIX calls only */
    void *arg;
    int state;                    /* AMP_WORKER_*, read and written atomically */
    int rc;                       /* fn's result: MPI_SUCCESS or an error class */
    char msg[AMP_WORKER_MSG_MAX]; /* the message of the last error fn raised */
    int direct; /* fn ran on the caller's thread (amp_worker_begin): rc is an MPI code */
    struct amp_worker_job *next;
} amp_worker_job_t;

/* Queues `job` (fn and arg set, the rest cleared here); the threads start on first use. */
int amp_worker_submit(amp_worker_job_t *job);

/* Removes a job no thread has taken yet; returns 1 if it was removed (then it never runs). */
int amp_worker_cancel(amp_worker_job_t *job);

/* Whether the job has run. */
int amp_worker_done(const amp_worker_job_t *job);

/* Waits for the job (a yield per check inside a task, a blocking wait outside) and returns
 * its result as an MPI error code, made on the calling thread. */
int amp_worker_wait(amp_worker_job_t *job);

/* The result of a job that has run, as an MPI error code made on the calling thread. */
int amp_worker_result(amp_worker_job_t *job);

/* Starts fn(arg) on an I/O thread when called inside a task, so that the task's thread can
 * wait for messages meanwhile; outside a task runs it here and now, as a blocking call would.
 * amp_worker_end waits for it and returns its result. */
void amp_worker_begin(amp_worker_job_t *job, int (*fn)(void *), void *arg);
int amp_worker_end(amp_worker_job_t *job);

/* amp_worker_begin and amp_worker_end in one. */
int amp_worker_run(int (*fn)(void *), void *arg);

/* Counts `bytes` of file data moved, when called on an I/O thread (for ampio's statistics). */
void amp_worker_count(long long bytes);
long long amp_worker_bytes(void);

/* Stops the threads once every queued job has run (at MPI_Finalize). */
void amp_worker_finalize(void);

#endif
