#include "core/task.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <time.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fault.h"
#include "core/next.h"

/* ThreadSanitizer follows a switch of stacks only when told (its fiber interface). */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#include <sanitizer/tsan_interface.h>
#define AMP_TASK_FIBER_NEW()   __tsan_create_fiber(0)
#define AMP_TASK_FIBER_NOW()   __tsan_get_current_fiber()
#define AMP_TASK_FIBER_TO(f)   __tsan_switch_to_fiber((f), 0)
#define AMP_TASK_FIBER_FREE(f) __tsan_destroy_fiber(f)
#endif
#endif
/* valgrind follows a task's stack only when told where it is (a no-op outside valgrind). */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define AMP_TASK_STACK_NEW(lo, hi) VALGRIND_STACK_REGISTER((lo), (hi))
#define AMP_TASK_STACK_FREE(id)    VALGRIND_STACK_DEREGISTER(id)
#endif
#endif
#ifndef AMP_TASK_STACK_NEW
#define AMP_TASK_STACK_NEW(lo, hi) 0u
#define AMP_TASK_STACK_FREE(id)    ((void)(id))
#endif
#ifndef AMP_TASK_FIBER_NEW
#define AMP_TASK_FIBER_NEW()   NULL
#define AMP_TASK_FIBER_NOW()   NULL
#define AMP_TASK_FIBER_TO(f)   ((void)(f))
#define AMP_TASK_FIBER_FREE(f) ((void)(f))
#endif

/* A task's stack. Pages are only touched as the stack grows; the lowest page is a guard. The
 * MPI library runs on it too (every MPI call a task makes), hence the generous size. */
#define AMP_TASK_STACK ((size_t)1 << 20)

struct amp_task {
    ucontext_t ctx, caller; /* the task, and whoever resumed it last */
    void *stack;
    size_t stack_size;
    int (*fn)(void *);
    void *arg;
    int rc, ended;
    void *fiber, *caller_fiber; /* ThreadSanitizer's names of the two, in its builds */
    unsigned stack_id;          /* valgrind's */
};

/* The task running on this thread, or NULL. Set by amp_task_resume only. */
static __thread amp_task_t *amp_task_current;

/* Not inlined: the thread-local variable is read afresh after every switch, since a task may be
 * resumed on another thread. */
__attribute__((noinline)) int amp_task_inside(void)
{
    return amp_task_current != NULL;
}

static void amp_task_entry(void)
{
    amp_task_t *t = amp_task_current;
    t->rc = t->fn(t->arg);
    t->ended = 1; /* returning switches to uc_link: the caller of the last resume */
}

/* Sets up `t` to run fn(arg) on [stack, stack + size). */
static int amp_task_setup(amp_task_t *t, void *stack, size_t size, int (*fn)(void *), void *arg)
{
    if (getcontext(&t->ctx) != 0)
        return amp_err(MPI_ERR_INTERN, "getcontext failed for a task");
    t->stack = stack;
    t->stack_size = size;
    t->ctx.uc_stack.ss_sp = stack;
    t->ctx.uc_stack.ss_size = size;
    t->ctx.uc_link = &t->caller;
    makecontext(&t->ctx, amp_task_entry, 0);
    t->fn = fn;
    t->arg = arg;
    t->fiber = AMP_TASK_FIBER_NEW();
    t->stack_id = AMP_TASK_STACK_NEW((char *)stack, (char *)stack + size);
    return MPI_SUCCESS;
}

/* Undoes what amp_task_setup told the tools (ThreadSanitizer's fiber, valgrind's stack). */
static void amp_task_teardown(amp_task_t *t)
{
    if (t->fiber)
        AMP_TASK_FIBER_FREE(t->fiber);
    AMP_TASK_STACK_FREE(t->stack_id);
}

int amp_task_create(int (*fn)(void *), void *arg, amp_task_t **out)
{
    *out = NULL;
    amp_task_t *t = amp_calloc(1, sizeof(*t));
    if (!t)
        return amp_err(MPI_ERR_NO_MEM, "out of memory for a task");
    long page = sysconf(_SC_PAGESIZE);
    size_t size = AMP_TASK_STACK + (size_t)page;
    void *stack = mmap(NULL, size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
    if (stack == MAP_FAILED) {
        free(t);
        return amp_err(MPI_ERR_NO_MEM, "out of memory for the stack of a task");
    }
    mprotect(stack, (size_t)page, PROT_NONE); /* an overflow faults instead of corrupting */
    int rc = amp_task_setup(t, stack, size, fn, arg);
    if (rc != MPI_SUCCESS) {
        munmap(stack, size);
        free(t);
        return rc;
    }
    *out = t;
    return MPI_SUCCESS;
}

/* The task and stack kept for amp_task_run_reserved: untouched pages of the stack cost no
 * memory. */
static amp_task_t amp_task_reserve;
static char amp_task_reserve_stack[AMP_TASK_STACK] __attribute__((aligned(4096)));
static pthread_mutex_t amp_task_reserve_lock = PTHREAD_MUTEX_INITIALIZER;

int amp_task_run_reserved(int (*fn)(void *), void *arg, void (*idle)(void))
{
    pthread_mutex_lock(&amp_task_reserve_lock);
    amp_task_t *t = &amp_task_reserve;
    memset(t, 0, sizeof(*t));
    int rc = amp_task_setup(t, amp_task_reserve_stack, sizeof(amp_task_reserve_stack), fn, arg);
    if (rc == MPI_SUCCESS) {
        while (!amp_task_resume(t, &rc))
            if (idle)
                idle();
        amp_task_teardown(t);
    }
    pthread_mutex_unlock(&amp_task_reserve_lock);
    return rc;
}

int amp_task_resume(amp_task_t *t, int *rc)
{
    if (!t->ended) {
        amp_task_t *outer = amp_task_current;
        amp_task_current = t;
        t->caller_fiber = AMP_TASK_FIBER_NOW();
        AMP_TASK_FIBER_TO(t->fiber);
        swapcontext(&t->caller, &t->ctx);
        if (t->ended) /* a yield named the caller's fiber itself; an end cannot */
            AMP_TASK_FIBER_TO(t->caller_fiber);
        amp_task_current = outer;
    }
    if (t->ended && rc)
        *rc = t->rc;
    return t->ended;
}

void amp_task_free(amp_task_t *t)
{
    if (!t)
        return;
    amp_task_teardown(t);
    munmap(t->stack, t->stack_size);
    free(t);
}

__attribute__((noinline)) void amp_task_yield(void)
{
    amp_task_t *t = amp_task_current;
    if (t) {
        AMP_TASK_FIBER_TO(t->caller_fiber);
        swapcontext(&t->ctx, &t->caller);
    }
}

/* ---- waits ---- */

/* On a node with more ranks than cores, a rank that spins while it waits takes the core from
 * the ranks it waits for, and a collective step then lasts until the scheduler gives them a
 * turn: at 4 ranks on 2 cores, the close's single reduction took 2-9 ms on a third of the
 * ranks although every rank had arrived together. There a collective step outside a task
 * tests for a moment, for the peers already running, then naps between tests (about 0.1 ms
 * with the kernel's timer slack), which leaves the core to them. Collectives poll only on
 * communicators every rank marked, on a shadow of theirs (amp_task_shadow). */
#define AMP_TASK_CROWDED_SPIN   100e-6 /* seconds of testing before the first nap */
#define AMP_TASK_CROWDED_NAP_NS 50000

static int amp_task_crowded; /* some communicator of this process was marked (a fast test) */
static int amp_task_crowded_key = MPI_KEYVAL_INVALID;
static pthread_once_t amp_task_crowded_once = PTHREAD_ONCE_INIT;

static int amp_task_shadow_free(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm;
    (void)key;
    (void)extra;
    MPI_Comm *shadow = value;
    PMPI_Comm_free(shadow);
    free(shadow);
    return MPI_SUCCESS;
}

static void amp_task_crowded_key_make(void)
{
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, amp_task_shadow_free, &amp_task_crowded_key,
                            NULL);
}

void amp_task_mark_crowded(MPI_Comm comm)
{
    pthread_once(&amp_task_crowded_once, amp_task_crowded_key_make);
    /* every rank duplicates, whatever failed before, then all agree that each has its shadow */
    MPI_Comm *shadow = amp_malloc(sizeof(*shadow)), dup = MPI_COMM_NULL;
    int ok = PMPI_Comm_dup(comm, &dup) == MPI_SUCCESS, all = 0;
    ok = ok && shadow && amp_task_crowded_key != MPI_KEYVAL_INVALID;
    if (ok)
        *shadow = dup;
    ok = ok && PMPI_Comm_set_attr(comm, amp_task_crowded_key, shadow) == MPI_SUCCESS;
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, comm) != MPI_SUCCESS)
        all = 0;
    if (all) { /* released: a thread that sees the flag sees the key */
        __atomic_store_n(&amp_task_crowded, 1, __ATOMIC_RELEASE);
        return;
    }
    if (ok) /* frees the shadow */
        PMPI_Comm_delete_attr(comm, amp_task_crowded_key);
    else if (dup != MPI_COMM_NULL)
        PMPI_Comm_free(&dup);
    if (!ok)
        free(shadow);
}

/* Outside a task, on a communicator marked crowded: replaces `*comm` by its shadow, on which
 * the collectives take their nonblocking form. The shadow carries only these, in the order of
 * the blocking calls, apart from the nonblocking collectives tasks start on `*comm` (a
 * blocking and a nonblocking collective never match, and nonblocking ones match in the order
 * each rank started them). */
static int amp_task_shadow(MPI_Comm *comm)
{
    if (!__atomic_load_n(&amp_task_crowded, __ATOMIC_ACQUIRE))
        return 0;
    MPI_Comm *shadow = NULL;
    int flag = 0;
    if (PMPI_Comm_get_attr(*comm, amp_task_crowded_key, &shadow, &flag) != MPI_SUCCESS || !flag)
        return 0;
    *comm = *shadow;
    return 1;
}

/* Between two tests of a polling wait: a yield inside a task; outside, nothing until
 * `*spin_until` (0: not started), then a nap. */
static void amp_task_pause(double *spin_until)
{
    if (amp_task_current) {
        amp_task_yield();
        return;
    }
    double now = PMPI_Wtime();
    if (*spin_until == 0)
        *spin_until = now + AMP_TASK_CROWDED_SPIN;
    if (now < *spin_until)
        return;
    struct timespec nap = {0, AMP_TASK_CROWDED_NAP_NS};
    nanosleep(&nap, NULL);
}

/* Tests until done, pausing between tests. */
static int amp_task_wait_polled(MPI_Request *req, MPI_Status *status)
{
    for (double spin = 0;; amp_task_pause(&spin)) {
        int done = 0;
        int rc = amp_next()->test(req, &done, status);
        if (rc != MPI_SUCCESS || done)
            return rc;
    }
}

/* Messages are waited for as before outside a task, even on a crowded node: the napping wait
 * slowed the aggregated patterns' exchanges (tiles, coll_perf, BT-IO, the lattice: reads at
 * 0.6-0.7x in the quick sweep at 4 ranks on 2 cores), where it sped up collective steps. */
static int amp_task_wait_raw(MPI_Request *req, MPI_Status *status)
{
    return amp_task_current ? amp_task_wait_polled(req, status) : amp_next()->wait(req, status);
}

static int amp_task_waitall_raw(int n, MPI_Request *reqs, MPI_Status *statuses)
{
    if (!amp_task_current)
        return amp_next()->waitall(n, reqs, statuses);
    for (double spin = 0;; amp_task_pause(&spin)) {
        int done = 0;
        int rc = amp_next()->testall(n, reqs, &done, statuses);
        if (rc != MPI_SUCCESS || done)
            return rc;
    }
}

static int amp_task_mprobe_raw(int source, int tag, MPI_Comm comm, MPI_Message *msg,
                               MPI_Status *status)
{
    if (!amp_task_current)
        return PMPI_Mprobe(source, tag, comm, msg, status);
    for (double spin = 0;; amp_task_pause(&spin)) {
        int found = 0;
        int rc = PMPI_Improbe(source, tag, comm, &found, msg, status);
        if (rc != MPI_SUCCESS || found)
            return rc;
    }
}

/* The nonblocking form `start` posted a request (or failed): wait for it. */
static int amp_task_finish(int rc, MPI_Request *req)
{
    return rc == MPI_SUCCESS ? amp_task_wait_polled(req, MPI_STATUS_IGNORE) : rc;
}

/* The blocking collective where collectives on `comm` block; else its nonblocking form
 * `start` (which posts `req`; on the shadow of a crowded `comm`), waited for by polling. */
#define AMP_TASK_COLLECTIVE(comm, blocking, start)                                                 \
    do {                                                                                           \
        if (!amp_task_current && !amp_task_shadow(&(comm)))                                        \
            return blocking;                                                                       \
        MPI_Request req;                                                                           \
        return amp_task_finish(start, &req);                                                       \
    } while (0)

static int amp_task_allreduce_raw(const void *in, void *out, int n, MPI_Datatype type, MPI_Op op,
                                  MPI_Comm comm)
{
    AMP_TASK_COLLECTIVE(comm, PMPI_Allreduce(in, out, n, type, op, comm),
                        PMPI_Iallreduce(in, out, n, type, op, comm, &req));
}

static int amp_task_allgather_raw(const void *in, int n, MPI_Datatype type, void *out, int m,
                                  MPI_Datatype out_type, MPI_Comm comm)
{
    AMP_TASK_COLLECTIVE(comm, PMPI_Allgather(in, n, type, out, m, out_type, comm),
                        PMPI_Iallgather(in, n, type, out, m, out_type, comm, &req));
}

static int amp_task_gather_raw(const void *in, int n, MPI_Datatype type, void *out, int m,
                               MPI_Datatype out_type, int root, MPI_Comm comm)
{
    AMP_TASK_COLLECTIVE(comm, PMPI_Gather(in, n, type, out, m, out_type, root, comm),
                        PMPI_Igather(in, n, type, out, m, out_type, root, comm, &req));
}

static int amp_task_gatherv_raw(const void *in, int n, MPI_Datatype type, void *out,
                                const int *counts, const int *displs, MPI_Datatype out_type,
                                int root, MPI_Comm comm)
{
    AMP_TASK_COLLECTIVE(
        comm, PMPI_Gatherv(in, n, type, out, counts, displs, out_type, root, comm),
        PMPI_Igatherv(in, n, type, out, counts, displs, out_type, root, comm, &req));
}

static int amp_task_scatter_raw(const void *in, int n, MPI_Datatype type, void *out, int m,
                                MPI_Datatype out_type, int root, MPI_Comm comm)
{
    AMP_TASK_COLLECTIVE(comm, PMPI_Scatter(in, n, type, out, m, out_type, root, comm),
                        PMPI_Iscatter(in, n, type, out, m, out_type, root, comm, &req));
}

static int amp_task_scatterv_raw(const void *in, const int *counts, const int *displs,
                                 MPI_Datatype type, void *out, int m, MPI_Datatype out_type,
                                 int root, MPI_Comm comm)
{
    AMP_TASK_COLLECTIVE(
        comm, PMPI_Scatterv(in, counts, displs, type, out, m, out_type, root, comm),
        PMPI_Iscatterv(in, counts, displs, type, out, m, out_type, root, comm, &req));
}

static int amp_task_bcast_raw(void *buf, int n, MPI_Datatype type, int root, MPI_Comm comm)
{
    AMP_TASK_COLLECTIVE(comm, PMPI_Bcast(buf, n, type, root, comm),
                        PMPI_Ibcast(buf, n, type, root, comm, &req));
}

static int amp_task_scan_raw(const void *in, void *out, int n, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm)
{
    AMP_TASK_COLLECTIVE(comm, PMPI_Scan(in, out, n, type, op, comm),
                        PMPI_Iscan(in, out, n, type, op, comm, &req));
}

/* ---- the waits of the protocols, where a communication fault may be injected ---- */

static int amp_task_fault(int rc)
{
    if (rc != MPI_SUCCESS || !amp_fault_comm())
        return rc;
    return amp_err(MPI_ERR_OTHER, "injected communication fault (AMPIO_FAULT_COMM)");
}

int amp_task_wait(MPI_Request *req, MPI_Status *status)
{
    return amp_task_fault(amp_task_wait_raw(req, status));
}

int amp_task_waitall(int n, MPI_Request *reqs, MPI_Status *statuses)
{
    return amp_task_fault(amp_task_waitall_raw(n, reqs, statuses));
}

int amp_task_mprobe(int source, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *status)
{
    return amp_task_fault(amp_task_mprobe_raw(source, tag, comm, msg, status));
}

int amp_task_allreduce(const void *in, void *out, int n, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm)
{
    return amp_task_fault(amp_task_allreduce_raw(in, out, n, type, op, comm));
}

int amp_task_allgather(const void *in, int n, MPI_Datatype type, void *out, int m,
                       MPI_Datatype out_type, MPI_Comm comm)
{
    return amp_task_fault(amp_task_allgather_raw(in, n, type, out, m, out_type, comm));
}

int amp_task_gather(const void *in, int n, MPI_Datatype type, void *out, int m,
                    MPI_Datatype out_type, int root, MPI_Comm comm)
{
    return amp_task_fault(amp_task_gather_raw(in, n, type, out, m, out_type, root, comm));
}

int amp_task_gatherv(const void *in, int n, MPI_Datatype type, void *out, const int *counts,
                     const int *displs, MPI_Datatype out_type, int root, MPI_Comm comm)
{
    return amp_task_fault(
        amp_task_gatherv_raw(in, n, type, out, counts, displs, out_type, root, comm));
}

int amp_task_scatter(const void *in, int n, MPI_Datatype type, void *out, int m,
                     MPI_Datatype out_type, int root, MPI_Comm comm)
{
    return amp_task_fault(amp_task_scatter_raw(in, n, type, out, m, out_type, root, comm));
}

int amp_task_scatterv(const void *in, const int *counts, const int *displs, MPI_Datatype type,
                      void *out, int m, MPI_Datatype out_type, int root, MPI_Comm comm)
{
    return amp_task_fault(
        amp_task_scatterv_raw(in, counts, displs, type, out, m, out_type, root, comm));
}

int amp_task_bcast(void *buf, int n, MPI_Datatype type, int root, MPI_Comm comm)
{
    return amp_task_fault(amp_task_bcast_raw(buf, n, type, root, comm));
}

int amp_task_scan(const void *in, void *out, int n, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    return amp_task_fault(amp_task_scan_raw(in, out, n, type, op, comm));
}

int amp_task_agree_allreduce(const void *in, void *out, int n, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm)
{
    return amp_task_allreduce_raw(in, out, n, type, op, comm);
}

int amp_task_agree_bcast(void *buf, int n, MPI_Datatype type, int root, MPI_Comm comm)
{
    return amp_task_bcast_raw(buf, n, type, root, comm);
}

int amp_task_agree_allgather(const void *in, int n, MPI_Datatype type, void *out, int m,
                             MPI_Datatype out_type, MPI_Comm comm)
{
    return amp_task_allgather_raw(in, n, type, out, m, out_type, comm);
}
