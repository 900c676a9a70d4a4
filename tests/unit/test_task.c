/* Tasks and I/O threads: a task gives its thread back at every unfinished wait and goes on where
 * it stopped when resumed; outside a task the same waits block. Work handed to an I/O thread
 * runs on another thread, and an error it raises comes back with its class and message. */
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <string.h>

#include "core/err.h"
#include "core/task.h"
#include "core/worker.h"
#include "unit.h"

/* ---- a task waiting for a message that is sent only after its first step ---- */

typedef struct {
    int got, steps_before_message, value;
} recv_task_t;

static int recv_in_task(void *arg)
{
    recv_task_t *t = arg;
    MPI_Request req;
    PMPI_Irecv(&t->value, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &req);
    int rc = amp_task_wait(&req, MPI_STATUS_IGNORE);
    t->got = 1;
    int sum = 0; /* a collective inside a task: its nonblocking form, waited for in steps */
    if (rc == MPI_SUCCESS)
        rc = amp_task_allreduce(&t->value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
    return rc == MPI_SUCCESS ? sum : -1;
}

static void check_yield_and_resume(void)
{
    recv_task_t state = {0};
    amp_task_t *t = NULL;
    UNIT_EQ(amp_task_create(recv_in_task, &state, &t), MPI_SUCCESS);
    int rc = -2;
    for (int i = 0; i < 5; i++) /* nothing was sent: every step ends at the wait */
        UNIT_EQ(amp_task_resume(t, &rc), 0);
    UNIT_EQ(state.got, 0);
    UNIT_EQ(amp_task_inside(), 0);
    int value = 41;
    PMPI_Send(&value, 1, MPI_INT, 0, 7, MPI_COMM_SELF);
    int ended = 0;
    for (int i = 0; i < 1000 && !ended; i++)
        ended = amp_task_resume(t, &rc);
    UNIT_EQ(ended, 1);
    UNIT_EQ(state.got, 1);
    UNIT_EQ(rc, 41);
    amp_task_free(t);
}

/* ---- outside a task the waits block, and amp_worker_run runs on the caller's thread ---- */

static int where_it_ran(void *arg)
{
    *(pthread_t *)arg = pthread_self();
    return MPI_SUCCESS;
}

static void check_outside_task(void)
{
    int in = 3, out = 0;
    UNIT_EQ(amp_task_allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF), MPI_SUCCESS);
    UNIT_EQ(out, 3);
    pthread_t ran = 0;
    UNIT_EQ(amp_worker_run(where_it_ran, &ran), MPI_SUCCESS);
    UNIT_CHECK(pthread_equal(ran, pthread_self()));
}

/* ---- inside a task the work goes to an I/O thread; its error comes back whole ---- */

static int failing_io(void *arg)
{
    *(pthread_t *)arg = pthread_self();
    return amp_err_errno(ENOSPC, "writing \"%s\" at offset %d", "the-file", 4096);
}

typedef struct {
    pthread_t ran;
    int rc;
} offload_t;

static int offload_in_task(void *arg)
{
    offload_t *o = arg;
    o->rc = amp_worker_run(failing_io, &o->ran);
    return MPI_SUCCESS;
}

static void check_offload(void)
{
    offload_t o = {0};
    amp_task_t *t = NULL;
    UNIT_EQ(amp_task_create(offload_in_task, &o, &t), MPI_SUCCESS);
    int ended = 0, rc = -1;
    for (long i = 0; i < 100000000 && !ended; i++)
        ended = amp_task_resume(t, &rc);
    UNIT_EQ(ended, 1);
    amp_task_free(t);
    UNIT_CHECK(!pthread_equal(o.ran, pthread_self()));
    UNIT_EQ(amp_err_class(o.rc), MPI_ERR_NO_SPACE);
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    PMPI_Error_string(o.rc, msg, &len);
    UNIT_CHECK(strstr(msg, "the-file") != NULL);
    UNIT_CHECK(strstr(msg, "4096") != NULL);
}

/* ---- a thread that must not call MPI gets bare classes and keeps the message ---- */

static void check_capture(void)
{
    char msg[128] = "";
    amp_err_capture(msg, sizeof(msg));
    int code = amp_err_errno(EDQUOT, "writing \"%s\"", "q");
    int cls = amp_err_class(code);
    amp_err_capture(NULL, 0);
    UNIT_EQ(code, MPI_ERR_QUOTA); /* the class itself: no MPI call made a code */
    UNIT_EQ(cls, MPI_ERR_QUOTA);
    UNIT_CHECK(strstr(msg, "writing \"q\"") == msg);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    check_yield_and_resume();
    check_outside_task();
    check_offload();
    check_capture();
    amp_worker_finalize();
    int status = unit_report("test_task");
    MPI_Finalize();
    return status;
}
