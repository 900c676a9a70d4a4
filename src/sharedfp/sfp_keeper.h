/* The request protocol between the ranks of a group and the keeper of their addproc pointers
 * (a spawned ampio-sfp-server, or a service thread in rank 0). A request is three MPI_Offsets
 * {operation, slot, argument} with tag AMP_SFP_KEEPER_REQ; the reply, with tag
 * AMP_SFP_KEEPER_REPLY, is the slot's value before. A process has one request in flight at a
 * time, so replies need no id. */
#ifndef AMP_SFP_KEEPER_H
#define AMP_SFP_KEEPER_H

#include <mpi.h>

enum { AMP_SFP_KEEPER_REQ = 1, AMP_SFP_KEEPER_REPLY = 2 };
enum { AMP_SFP_KEEPER_ADD, AMP_SFP_KEEPER_SET, AMP_SFP_KEEPER_STOP };

/* The keeper's side: applies one request to `slots` (of `nslots`); returns the value before. */
static inline MPI_Offset amp_sfp_keeper_apply(MPI_Offset *slots, int nslots, const MPI_Offset *req)
{
    if (req[1] < 0 || req[1] >= nslots)
        return -1;
    MPI_Offset *v = &slots[req[1]], before = *v;
    *v = req[0] == AMP_SFP_KEEPER_SET ? req[2] : before + req[2];
    return before;
}

#endif
