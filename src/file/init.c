#include "file/init.h"

#include <pthread.h>
#include <stdio.h>

#include "core/err.h"
#include "core/fault.h"
#include "file/errh.h"
#include "file/fileops.h"
#include "file/handle.h"
#include "core/nodes.h"
#include "core/worker.h"
#include "op/op.h"
#include "dtype/dt.h"
#include "sharedfp/sfp_pool.h"

static pthread_mutex_t amp_init_lock = PTHREAD_MUTEX_INITIALIZER;
static int amp_init_done;
static int amp_init_keyval = MPI_KEYVAL_INVALID;

static int amp_init_at_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
    amp_handle_foreach(amp_file_reap); /* files the application left open */
    amp_op_finalize();
    amp_worker_finalize();
    amp_fault_report();
    amp_dt_finalize();
    amp_errh_finalize();
    amp_nodes_free();
    amp_sfp_pool_free_all();
    PMPI_Comm_free_keyval(&amp_init_keyval);
    pthread_mutex_lock(&amp_init_lock);
    amp_init_done = 0;
    pthread_mutex_unlock(&amp_init_lock);
    return MPI_SUCCESS;
}

int amp_init(void)
{
    int initialized = 0, finalized = 0;
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (!initialized || finalized)
        return MPI_ERR_OTHER; /* no MPI to make a message with */
    pthread_mutex_lock(&amp_init_lock);
    int rc = MPI_SUCCESS;
    if (!amp_init_done) {
        rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, amp_init_at_finalize, &amp_init_keyval,
                                     NULL);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Comm_set_attr(MPI_COMM_SELF, amp_init_keyval, NULL);
        amp_init_done = rc == MPI_SUCCESS;
        int world = 0;
        if (amp_init_done && PMPI_Comm_rank(MPI_COMM_WORLD, &world) == MPI_SUCCESS)
            amp_fault_init(world);
    }
    pthread_mutex_unlock(&amp_init_lock);
    return rc;
}
