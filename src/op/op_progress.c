/* The progress of nonblocking accesses: every request alive is on one list; a pass of progress
 * resumes each started task once, and a collective access starts when the previous collective
 * access of its file has ended, so that every rank posts a file's collectives in the order it
 * called them. Passes run under one lock (tasks are resumed one thread at a time); a thread
 * that finds the lock taken skips its pass, since another thread is advancing the same tasks.
 * Two locks: the progress lock serialises passes, starts and the files' queues, and is held
 * while tasks call MPI; the list lock guards the list of requests alive and is never held
 * across an MPI call. The host's callbacks (a generalized request's free) take only the list
 * lock, so a thread inside MPI (holding the MPI library's own lock) never waits for a thread
 * that holds the progress lock and waits for MPI's. Detached requests are freed after the
 * pass, outside the progress lock.
 *
 * Under MPI_THREAD_MULTIPLE a progress thread of ampio's own makes a pass every tick while any
 * access is pending and sleeps otherwise, so that collective accesses advance while the
 * application computes without calling MPI. Under lower thread levels only the application's
 * threads may call MPI, and passes run from its calls alone. */
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "core/cfg.h"
#include "core/err.h"
#include "core/fault.h"
#include "core/next.h"
#include "op/op_internal.h"

static pthread_mutex_t amp_op_lock = PTHREAD_MUTEX_INITIALIZER;      /* progress */
static pthread_mutex_t amp_op_list_lock = PTHREAD_MUTEX_INITIALIZER; /* the list */
static amp_op_req_t *amp_op_head, *amp_op_tail;                      /* alive, oldest first */
static amp_op_req_t **amp_op_snap; /* a pass's tasks (progress lock) */
static size_t amp_op_snap_cap;
static int amp_op_nlive, amp_op_npending; /* read without the lock, atomically */
static __thread int amp_op_busy;          /* this thread is in a pass */

int amp_op_live(void)
{
    return __atomic_load_n(&amp_op_nlive, __ATOMIC_ACQUIRE) != 0;
}

int amp_op_pending(void)
{
    return __atomic_load_n(&amp_op_npending, __ATOMIC_ACQUIRE) != 0;
}

int amp_op_done(const amp_op_req_t *q)
{
    return __atomic_load_n(&q->done, __ATOMIC_ACQUIRE);
}

int amp_op_result(const amp_op_req_t *q, MPI_File *fh)
{
    if (fh)
        *fh = q->fh;
    return q->rc;
}

amp_op_req_t *amp_op_find(MPI_Request r)
{
    if (r == MPI_REQUEST_NULL || !amp_op_live())
        return NULL;
    amp_op_req_t *found = NULL;
    pthread_mutex_lock(&amp_op_list_lock);
    for (amp_op_req_t *q = amp_op_head; q && !found; q = q->next_live)
        if (q->greq != MPI_REQUEST_NULL && q->greq == r)
            found = q;
    pthread_mutex_unlock(&amp_op_list_lock);
    return found;
}

/* The task of `q` ended: its result, its file's next collective access, and `q` on the list of
 * the pass's completions. Called with the lock held. */
static void amp_op_ended(amp_op_req_t *q, int rc, amp_op_req_t **completed)
{
    amp_task_free(q->task);
    q->task = NULL;
    q->rc = rc;
    amp_op_prep_free(&q->p);
    struct amp_op_state *s = q->f->op;
    s->pending--;
    if (q->collective) {
        s->head = q->next_file; /* q was the head: collectives run one at a time */
        if (!s->head)
            s->tail = NULL;
        else
            s->head->started = 1; /* resumed later in this pass: it is further down the list */
    }
    q->f = NULL;
    q->next_done = *completed;
    *completed = q;
    __atomic_store_n(&q->done, 1, __ATOMIC_RELEASE);
    __atomic_sub_fetch(&amp_op_npending, 1, __ATOMIC_RELEASE);
}

/* Resumes `q` once. Called with the lock held. */
static void amp_op_step(amp_op_req_t *q, amp_op_req_t **completed)
{
    int rc = MPI_SUCCESS;
    if (amp_task_resume(q->task, &rc))
        amp_op_ended(q, rc, completed);
}

/* One pass over every started task. Called with the progress lock held: the tasks taken from
 * the list are not done, so nobody frees them meanwhile. */
static void amp_op_pass(amp_op_req_t **completed)
{
    size_t n = 0;
    pthread_mutex_lock(&amp_op_list_lock);
    for (amp_op_req_t *q = amp_op_head; q; q = q->next_live) {
        if (!q->started || q->done)
            continue;
        if (n == amp_op_snap_cap) {
            size_t cap = amp_op_snap_cap ? 2 * amp_op_snap_cap : 16;
            amp_op_req_t **grown = amp_realloc(amp_op_snap, cap * sizeof(*grown));
            if (!grown)
                break; /* the rest waits for the next pass */
            amp_op_snap = grown;
            amp_op_snap_cap = cap;
        }
        amp_op_snap[n++] = q;
    }
    pthread_mutex_unlock(&amp_op_list_lock);
    amp_op_busy = 1;
    for (size_t i = 0; i < n; i++)
        amp_op_step(amp_op_snap[i], completed);
    amp_op_busy = 0;
}

/* Completes the generalized requests of the pass's ended tasks. Called with the lock held:
 * completing calls no callback, and the lock orders it before a detach that follows. Returns
 * the detached requests, which the host frees once the lock is released. */
static amp_op_req_t *amp_op_complete(amp_op_req_t *completed)
{
    amp_op_req_t *detached = NULL;
    while (completed) {
        amp_op_req_t *q = completed;
        completed = q->next_done;
        if (q->greq == MPI_REQUEST_NULL)
            continue;
        /* once complete, a request the application still holds is the waiting thread's to
         * free: nothing of it is touched after; `released` tells that thread so (the host's
         * own ordering of the completion is invisible to checkers such as ThreadSanitizer) */
        MPI_Request greq = q->greq;
        if (q->detached) {
            q->next_done = detached;
            detached = q;
        }
        __atomic_store_n(&q->released, 1, __ATOMIC_RELEASE);
        PMPI_Grequest_complete(greq);
    }
    return detached;
}

static void amp_op_release(amp_op_req_t *detached)
{
    while (detached) {
        amp_op_req_t *q = detached;
        detached = q->next_done;
        MPI_Request r = q->greq;
        amp_next()->request_free(&r); /* calls amp_op_greq_free, which frees q */
    }
}

/* A pass under the lock; `wait` takes the lock even when another thread holds it. */
static void amp_op_advance(int wait)
{
    if (amp_op_busy)
        return; /* inside a task's step: never re-entered */
    if (wait)
        pthread_mutex_lock(&amp_op_lock);
    else if (pthread_mutex_trylock(&amp_op_lock) != 0)
        return;
    amp_op_req_t *completed = NULL;
    amp_op_pass(&completed);
    amp_op_req_t *detached = amp_op_complete(completed);
    pthread_mutex_unlock(&amp_op_lock);
    amp_op_release(detached);
}

void amp_op_progress(void)
{
    if (amp_op_pending())
        amp_op_advance(0);
}

/* ---- the progress thread ---- */

#define AMP_OP_TICK_NS 20000 /* between passes; the kernel's timer slack adds about 50 us */

static pthread_mutex_t amp_op_thr_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t amp_op_thr_work = PTHREAD_COND_INITIALIZER;
static pthread_t amp_op_thr;
static int amp_op_thr_state; /* 0: not decided, 1: running, -1: not used (thread level) */
static int amp_op_thr_stop;

static void *amp_op_thread_main(void *unused)
{
    (void)unused;
    sigset_t all; /* signals are the application's threads' business */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_mutex_lock(&amp_op_thr_lock);
    while (!amp_op_thr_stop) {
        if (!amp_op_pending()) {
            pthread_cond_wait(&amp_op_thr_work, &amp_op_thr_lock);
            continue;
        }
        pthread_mutex_unlock(&amp_op_thr_lock);
        amp_op_advance(0);
        struct timespec tick = {0, AMP_OP_TICK_NS};
        nanosleep(&tick, NULL);
        pthread_mutex_lock(&amp_op_thr_lock);
    }
    pthread_mutex_unlock(&amp_op_thr_lock);
    return NULL;
}

/* Wakes the progress thread for a new access, starting it first when the thread level allows
 * and `f` wants it. */
static void amp_op_thread_wake(amp_file_t *f)
{
    pthread_mutex_lock(&amp_op_thr_lock);
    if (amp_op_thr_state == 0 && amp_cfg_num(&f->cfg, AMP_CFG_AMPIO_PROGRESS_THREAD)) {
        int level = MPI_THREAD_SINGLE;
        PMPI_Query_thread(&level);
        amp_op_thr_state = -1;
        amp_op_thr_stop = 0;
        if (level == MPI_THREAD_MULTIPLE &&
            pthread_create(&amp_op_thr, NULL, amp_op_thread_main, NULL) == 0)
            amp_op_thr_state = 1;
    }
    if (amp_op_thr_state == 1)
        pthread_cond_signal(&amp_op_thr_work);
    pthread_mutex_unlock(&amp_op_thr_lock);
}

static void amp_op_thread_stop(void)
{
    pthread_mutex_lock(&amp_op_thr_lock);
    int running = amp_op_thr_state == 1;
    amp_op_thr_stop = 1;
    pthread_cond_signal(&amp_op_thr_work);
    pthread_mutex_unlock(&amp_op_thr_lock);
    if (running)
        pthread_join(amp_op_thr, NULL);
    amp_op_thr_state = 0;
}

static int amp_op_req_main(void *arg)
{
    amp_op_req_t *q = arg;
    MPI_Status status;
    int rc = amp_op_run(q->f, &q->p, &status);
    if (rc == MPI_SUCCESS)
        PMPI_Get_elements_x(&status, MPI_BYTE, &q->bytes);
    return rc;
}

typedef struct {
    amp_file_t *f;
    amp_op_prep_t *p;
} amp_op_unmade_t;

static int amp_op_unmade_main(void *arg)
{
    amp_op_unmade_t *u = arg;
    MPI_Status status;
    return amp_op_run(u->f, u->p, &status);
}

static void amp_op_unmade_idle(void)
{
    amp_op_advance(1);
    sched_yield(); /* the other ranks need the core */
}

/* A collective access this rank cannot make a request for (out of memory) still takes part, at
 * once and without data, after this rank's earlier collectives on the file, so that the other
 * ranks' requests complete with this rank's error, which their agreement gives them. It runs
 * as a task on the reserved stack: the others' nonblocking collectives match no blocking one.
 * The start returns `rc`; the individual pointer stays where it was. */
static int amp_op_req_unmade(amp_file_t *f, amp_op_prep_t *p, int rc)
{
    if (p->fp_moved) {
        pthread_mutex_lock(&f->fp_lock);
        f->fp -= p->etypes;
        pthread_mutex_unlock(&f->fp_lock);
        p->fp_moved = 0;
    }
    if (p->a.collective) {
        amp_op_drain(f, 1);
        if (p->rc == MPI_SUCCESS)
            p->rc = rc;
        amp_op_unmade_t u = {f, p};
        amp_task_run_reserved(amp_op_unmade_main, &u, amp_op_unmade_idle);
    }
    amp_op_prep_free(p);
    return rc;
}

int amp_op_req_start(amp_file_t *f, amp_op_prep_t *p, int with_greq, amp_op_req_t **out)
{
    *out = NULL;
    pthread_mutex_lock(&amp_op_lock);
    struct amp_op_state *s = amp_op_state(f);
    pthread_mutex_unlock(&amp_op_lock);
    amp_op_req_t *q = s ? amp_calloc(1, sizeof(*q)) : NULL;
    if (!q)
        return amp_op_req_unmade(
            f, p, amp_err(MPI_ERR_NO_MEM, "%s: out of memory for a request", p->a.routine));
    q->f = f;
    q->fh = amp_file_handle(f);
    q->p = *p;
    q->greq = MPI_REQUEST_NULL;
    q->collective = p->a.collective;
    int rc = amp_task_create(amp_op_req_main, q, &q->task);
    if (rc == MPI_SUCCESS && with_greq)
        rc = PMPI_Grequest_start(amp_op_greq_query, amp_op_greq_free, amp_op_greq_cancel, q,
                                 &q->greq);
    if (rc != MPI_SUCCESS) {
        amp_task_free(q->task);
        free(q);
        return amp_op_req_unmade(f, p, rc);
    }

    pthread_mutex_lock(&amp_op_lock);
    pthread_mutex_lock(&amp_op_list_lock);
    q->prev_live = amp_op_tail;
    if (amp_op_tail)
        amp_op_tail->next_live = q;
    else
        amp_op_head = q;
    amp_op_tail = q;
    pthread_mutex_unlock(&amp_op_list_lock);
    __atomic_add_fetch(&amp_op_nlive, 1, __ATOMIC_RELEASE);
    __atomic_add_fetch(&amp_op_npending, 1, __ATOMIC_RELEASE);
    s->pending++;
    q->started = 1;
    if (q->collective) {
        q->started = s->head == NULL;
        if (s->tail)
            s->tail->next_file = q;
        else
            s->head = q;
        s->tail = q;
    }
    amp_op_req_t *completed = NULL, *detached = NULL;
    if (q->started && !amp_op_busy) {
        amp_op_busy = 1;
        amp_op_step(q, &completed); /* the first step: local, it posts and returns */
        amp_op_busy = 0;
        detached = amp_op_complete(completed);
    }
    pthread_mutex_unlock(&amp_op_lock);
    amp_op_release(detached);
    amp_op_thread_wake(f);
    *out = q;
    return MPI_SUCCESS;
}

void amp_op_req_finish(amp_op_req_t *q)
{
    while (!amp_op_done(q)) {
        amp_op_advance(1);
        if (!amp_op_done(q))
            sched_yield(); /* other ranks, and the I/O thread, need the core */
    }
}

void amp_op_req_unlink(amp_op_req_t *q)
{
    pthread_mutex_lock(&amp_op_list_lock);
    if (q->prev_live)
        q->prev_live->next_live = q->next_live;
    else
        amp_op_head = q->next_live;
    if (q->next_live)
        q->next_live->prev_live = q->prev_live;
    else
        amp_op_tail = q->prev_live;
    q->next_live = q->prev_live = NULL;
    __atomic_sub_fetch(&amp_op_nlive, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&amp_op_list_lock);
}

void amp_op_req_free(amp_op_req_t *q)
{
    if (!q)
        return;
    amp_op_req_unlink(q);
    free(q);
}

int amp_op_detach(amp_op_req_t *q)
{
    pthread_mutex_lock(&amp_op_lock);
    int pending = !q->done;
    if (pending)
        q->detached = 1;
    pthread_mutex_unlock(&amp_op_lock);
    return pending;
}

/* A request of `f` not yet done (the newest of the collective queue when `collective_only`). */
static amp_op_req_t *amp_op_pending_on(amp_file_t *f, int collective_only)
{
    amp_op_req_t *found = NULL;
    pthread_mutex_lock(&amp_op_lock);
    if (f->op && collective_only)
        found = f->op->tail;
    else if (f->op && f->op->pending) {
        pthread_mutex_lock(&amp_op_list_lock);
        for (amp_op_req_t *q = amp_op_head; q && !found; q = q->next_live)
            if (q->f == f && !q->done)
                found = q;
        pthread_mutex_unlock(&amp_op_list_lock);
    }
    pthread_mutex_unlock(&amp_op_lock);
    return found;
}

void amp_op_drain(amp_file_t *f, int collective_only)
{
    if (!amp_op_pending())
        return;
    /* No request is held across a pass: one the application freed (MPI_Request_free) is
     * freed by the pass that completes it. */
    while (amp_op_pending_on(f, collective_only)) {
        amp_op_advance(1);
        if (amp_op_pending_on(f, collective_only))
            sched_yield(); /* other ranks, and the I/O thread, need the core */
    }
}

void amp_op_finalize(void)
{
    while (amp_op_pending()) {
        amp_op_advance(1);
        sched_yield();
    }
    amp_op_thread_stop();
    pthread_mutex_lock(&amp_op_lock);
    free(amp_op_snap);
    amp_op_snap = NULL;
    amp_op_snap_cap = 0;
    pthread_mutex_unlock(&amp_op_lock);
}
