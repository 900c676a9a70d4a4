/* ampio-sfp-server: the keeper of a group's addproc shared file pointers, spawned by ampio with
 * MPI_Comm_spawn. It serves requests (src/sharedfp/sfp_keeper.h) from any rank of its parent in
 * arrival order until rank 0 of the parent says stop, then disconnects. Not for running by
 * hand. */
#include <stdio.h>

#include "sharedfp/sfp_keeper.h"
#include "sharedfp/sfp_pool.h"

static MPI_Offset amp_sfp_server_apply(void *ctx, const MPI_Offset *req)
{
    return amp_sfp_keeper_apply(ctx, AMP_SFP_POOL_SLOTS, req);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL) {
        fprintf(stderr, "ampio-sfp-server: started by ampio only (MPI_Comm_spawn)\n");
        MPI_Finalize();
        return 1;
    }
    MPI_Offset slots[AMP_SFP_POOL_SLOTS] = {0};
    amp_sfp_keeper_serve(parent, amp_sfp_server_apply, slots);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
}
