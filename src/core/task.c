#include "core/task.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
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

int amp_task_create(int (*fn)(void *), void *arg, amp_task_t **out)
{
    *out = NULL;
    amp_task_t *t = amp_calloc(1, sizeof(*t));
    if (!t)
        return amp_err(MPI_ERR_NO_MEM, "out of memory for a task");
    long page = sysconf(_SC_PAGESIZE);
    t->stack_size = AMP_TASK_STACK + (size_t)page;
    t->stack = mmap(NULL, t->stack_size, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
    if (t->stack == MAP_FAILED) {
        free(t);
        return amp_err(MPI_ERR_NO_MEM, "out of memory for the stack of a task");
    }
    mprotect(t->stack, (size_t)page, PROT_NONE); /* an overflow faults instead of corrupting */
    if (getcontext(&t->ctx) != 0) {
        munmap(t->stack, t->stack_size);
        free(t);
        return amp_err(MPI_ERR_INTERN, "getcontext failed for a task");
    }
    t->ctx.uc_stack.ss_sp = t->stack;
    t->ctx.uc_stack.ss_size = t->stack_size;
    t->ctx.uc_link = &t->caller;
    makecontext(&t->ctx, amp_task_entry, 0);
    t->fn = fn;
    t->arg = arg;
    t->fiber = AMP_TASK_FIBER_NEW();
    t->stack_id = AMP_TASK_STACK_NEW((char *)t->stack, (char *)t->stack + t->stack_size);
    *out = t;
    return MPI_SUCCESS;
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
    if (t->fiber)
        AMP_TASK_FIBER_FREE(t->fiber);
    AMP_TASK_STACK_FREE(t->stack_id);
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

static int amp_task_wait_raw(MPI_Request *req, MPI_Status *status)
{
    if (!amp_task_current)
        return amp_next()->wait(req, status);
    for (;;) {
        int done = 0;
        int rc = amp_next()->test(req, &done, status);
        if (rc != MPI_SUCCESS || done)
            return rc;
        amp_task_yield();
    }
}

static int amp_task_waitall_raw(int n, MPI_Request *reqs, MPI_Status *statuses)
{
    if (!amp_task_current)
        return amp_next()->waitall(n, reqs, statuses);
    for (;;) {
        int done = 0;
        int rc = amp_next()->testall(n, reqs, &done, statuses);
        if (rc != MPI_SUCCESS || done)
            return rc;
        amp_task_yield();
    }
}

static int amp_task_mprobe_raw(int source, int tag, MPI_Comm comm, MPI_Message *msg,
                               MPI_Status *status)
{
    if (!amp_task_current)
        return PMPI_Mprobe(source, tag, comm, msg, status);
    for (;;) {
        int found = 0;
        int rc = PMPI_Improbe(source, tag, comm, &found, msg, status);
        if (rc != MPI_SUCCESS || found)
            return rc;
        amp_task_yield();
    }
}

/* The nonblocking form `start` posted a request (or failed): wait for it. */
static int amp_task_finish(int rc, MPI_Request *req)
{
    return rc == MPI_SUCCESS ? amp_task_wait_raw(req, MPI_STATUS_IGNORE) : rc;
}

/* Outside a task the blocking collective; inside, its nonblocking form `start` (which posts
 * `req`), waited for with a yield per unfinished step. */
#define AMP_TASK_COLLECTIVE(blocking, start)                                                       \
    do {                                                                                           \
        if (!amp_task_current)                                                                     \
            return blocking;                                                                       \
        MPI_Request req;                                                                           \
        return amp_task_finish(start, &req);                                                       \
    } while (0)

static int amp_task_allreduce_raw(const void *in, void *out, int n, MPI_Datatype type, MPI_Op op,
                                  MPI_Comm comm)
{
    AMP_TASK_COLLECTIVE(PMPI_Allreduce(in, out, n, type, op, comm),
                        PMPI_Iallreduce(in, out, n, type, op, comm, &req));
}

static int amp_task_allgather_raw(const void *in, int n, MPI_Datatype type, void *out, int m,
                                  MPI_Datatype out_type, MPI_Comm comm)
{
    AMP_TASK_COLLECTIVE(PMPI_Allgather(in, n, type, out, m, out_type, comm),
                        PMPI_Iallgather(in, n, type, out, m, out_type, comm, &req));
}

static int amp_task_gather_raw(const void *in, int n, MPI_Datatype type, void *out, int m,
                               MPI_Datatype out_type, int root, MPI_Comm comm)
{
    AMP_TASK_COLLECTIVE(PMPI_Gather(in, n, type, out, m, out_type, root, comm),
                        PMPI_Igather(in, n, type, out, m, out_type, root, comm, &req));
}

static int amp_task_gatherv_raw(const void *in, int n, MPI_Datatype type, void *out,
                                const int *counts, const int *displs, MPI_Datatype out_type,
                                int root, MPI_Comm comm)
{
    AMP_TASK_COLLECTIVE(
        PMPI_Gatherv(in, n, type, out, counts, displs, out_type, root, comm),
        PMPI_Igatherv(in, n, type, out, counts, displs, out_type, root, comm, &req));
}

static int amp_task_scatter_raw(const void *in, int n, MPI_Datatype type, void *out, int m,
                                MPI_Datatype out_type, int root, MPI_Comm comm)
{
    AMP_TASK_COLLECTIVE(PMPI_Scatter(in, n, type, out, m, out_type, root, comm),
                        PMPI_Iscatter(in, n, type, out, m, out_type, root, comm, &req));
}

static int amp_task_scatterv_raw(const void *in, const int *counts, const int *displs,
                                 MPI_Datatype type, void *out, int m, MPI_Datatype out_type,
                                 int root, MPI_Comm comm)
{
    AMP_TASK_COLLECTIVE(
        PMPI_Scatterv(in, counts, displs, type, out, m, out_type, root, comm),
        PMPI_Iscatterv(in, counts, displs, type, out, m, out_type, root, comm, &req));
}

static int amp_task_bcast_raw(void *buf, int n, MPI_Datatype type, int root, MPI_Comm comm)
{
    AMP_TASK_COLLECTIVE(PMPI_Bcast(buf, n, type, root, comm),
                        PMPI_Ibcast(buf, n, type, root, comm, &req));
}

static int amp_task_scan_raw(const void *in, void *out, int n, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm)
{
    AMP_TASK_COLLECTIVE(PMPI_Scan(in, out, n, type, op, comm),
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
