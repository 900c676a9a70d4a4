#include "core/worker.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "core/err.h"
#include "core/task.h"

/* One thread: jobs of one file serialise on the file's transfer lock anyway, and one thread
 * keeps the order in which jobs were handed over. */
#define AMP_WORKER_THREADS 1

static pthread_mutex_t amp_worker_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t amp_worker_work = PTHREAD_COND_INITIALIZER; /* a job was queued */
static pthread_cond_t amp_worker_fin = PTHREAD_COND_INITIALIZER;  /* a job has run */
static amp_worker_job_t *amp_worker_head, *amp_worker_tail;
static pthread_t amp_worker_threads[AMP_WORKER_THREADS];
static int amp_worker_started, amp_worker_stop;
static long long amp_worker_moved;
static __thread int amp_worker_self; /* the calling thread is an I/O thread */

static void *amp_worker_main(void *unused)
{
    (void)unused;
    sigset_t all; /* signals are the application's threads' business */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    amp_worker_self = 1;
    pthread_mutex_lock(&amp_worker_lock);
    for (;;) {
        while (!amp_worker_head && !amp_worker_stop)
            pthread_cond_wait(&amp_worker_work, &amp_worker_lock);
        amp_worker_job_t *job = amp_worker_head;
        if (!job)
            break; /* stopping, and nothing is left */
        amp_worker_head = job->next;
        if (!amp_worker_head)
            amp_worker_tail = NULL;
        __atomic_store_n(&job->state, AMP_WORKER_RUNNING, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&amp_worker_lock);

        amp_err_capture(job->msg, sizeof(job->msg));
        int rc = job->fn(job->arg);
        amp_err_capture(NULL, 0);

        pthread_mutex_lock(&amp_worker_lock);
        job->rc = rc;
        __atomic_store_n(&job->state, AMP_WORKER_DONE, __ATOMIC_RELEASE);
        pthread_cond_broadcast(&amp_worker_fin);
    }
    pthread_mutex_unlock(&amp_worker_lock);
    return NULL;
}

/* Called with the lock held. */
static int amp_worker_start(void)
{
    if (amp_worker_started)
        return MPI_SUCCESS;
    for (int i = 0; i < AMP_WORKER_THREADS; i++)
        if (pthread_create(&amp_worker_threads[i], NULL, amp_worker_main, NULL) != 0) {
            amp_worker_stop = 1; /* the ones started end; submit fails from now on */
            return MPI_ERR_OTHER;
        }
    amp_worker_started = 1;
    amp_worker_stop = 0;
    return MPI_SUCCESS;
}

int amp_worker_submit(amp_worker_job_t *job)
{
    job->direct = 0;
    job->state = AMP_WORKER_QUEUED;
    job->rc = MPI_SUCCESS;
    job->msg[0] = '\0';
    job->next = NULL;
    pthread_mutex_lock(&amp_worker_lock);
    int rc = amp_worker_start();
    if (rc == MPI_SUCCESS) {
        if (amp_worker_tail)
            amp_worker_tail->next = job;
        else
            amp_worker_head = job;
        amp_worker_tail = job;
        pthread_cond_signal(&amp_worker_work);
    }
    pthread_mutex_unlock(&amp_worker_lock);
    if (rc != MPI_SUCCESS)
        return amp_err(MPI_ERR_OTHER, "cannot start ampio's I/O thread");
    return MPI_SUCCESS;
}

int amp_worker_cancel(amp_worker_job_t *job)
{
    int removed = 0;
    pthread_mutex_lock(&amp_worker_lock);
    if (__atomic_load_n(&job->state, __ATOMIC_RELAXED) == AMP_WORKER_QUEUED) {
        amp_worker_job_t **at = &amp_worker_head, *prev = NULL;
        while (*at && *at != job) {
            prev = *at;
            at = &(*at)->next;
        }
        if (*at) {
            *at = job->next;
            if (amp_worker_tail == job)
                amp_worker_tail = prev;
            __atomic_store_n(&job->state, AMP_WORKER_CANCELLED, __ATOMIC_RELEASE);
            removed = 1;
        }
    }
    pthread_mutex_unlock(&amp_worker_lock);
    return removed;
}

int amp_worker_done(const amp_worker_job_t *job)
{
    int state = __atomic_load_n(&job->state, __ATOMIC_ACQUIRE);
    return state == AMP_WORKER_DONE || state == AMP_WORKER_CANCELLED;
}

int amp_worker_result(amp_worker_job_t *job)
{
    if (job->rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (!job->msg[0])
        return amp_err(job->rc, "file access on ampio's I/O thread failed");
    return amp_err(job->rc, "%s", job->msg);
}

int amp_worker_wait(amp_worker_job_t *job)
{
    if (amp_task_inside()) {
        while (!amp_worker_done(job))
            amp_task_yield();
    } else {
        pthread_mutex_lock(&amp_worker_lock);
        while (!amp_worker_done(job))
            pthread_cond_wait(&amp_worker_fin, &amp_worker_lock);
        pthread_mutex_unlock(&amp_worker_lock);
    }
    return amp_worker_result(job);
}

void amp_worker_begin(amp_worker_job_t *job, int (*fn)(void *), void *arg)
{
    job->fn = fn;
    job->arg = arg;
    job->direct = !amp_task_inside();
    if (!job->direct && amp_worker_submit(job) == MPI_SUCCESS)
        return;
    job->direct = 1; /* no thread to take it: run it here */
    job->rc = fn(arg);
    job->state = AMP_WORKER_DONE;
}

int amp_worker_end(amp_worker_job_t *job)
{
    return job->direct ? job->rc : amp_worker_wait(job);
}

int amp_worker_run(int (*fn)(void *), void *arg)
{
    amp_worker_job_t job;
    amp_worker_begin(&job, fn, arg);
    return amp_worker_end(&job);
}

void amp_worker_count(long long bytes)
{
    if (amp_worker_self)
        __atomic_add_fetch(&amp_worker_moved, bytes, __ATOMIC_RELAXED);
}

long long amp_worker_bytes(void)
{
    return __atomic_load_n(&amp_worker_moved, __ATOMIC_RELAXED);
}

void amp_worker_finalize(void)
{
    pthread_mutex_lock(&amp_worker_lock);
    int started = amp_worker_started;
    amp_worker_stop = 1;
    pthread_cond_broadcast(&amp_worker_work);
    pthread_mutex_unlock(&amp_worker_lock);
    if (started)
        for (int i = 0; i < AMP_WORKER_THREADS; i++)
            pthread_join(amp_worker_threads[i], NULL);
    pthread_mutex_lock(&amp_worker_lock);
    amp_worker_started = 0;
    pthread_mutex_unlock(&amp_worker_lock);
}
