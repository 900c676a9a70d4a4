/* The request protocol between the ranks of a group and the keeper of their addproc pointers
 * (a spawned ampio-sfp-server, or a service thread in rank 0). A request is three MPI_Offsets
 * {operation, slot, argument} with tag AMP_SFP_KEEPER_REQ; the reply, with tag
 * AMP_SFP_KEEPER_REPLY, is the slot's value before. A process has one request in flight at a
 * time, so replies need no id. */
#ifndef AMP_SFP_KEEPER_H
#define AMP_SFP_KEEPER_H

#include <mpi.h>
#include <sched.h>
#include <time.h>

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

/* Serves requests on `comm` until a stop, in arrival order; `apply` answers one. The keeper
 * probes instead of blocking in a receive: a receive blocked in a library that polls would take
 * a core from the ranks for as long as the keeper lives, and with more ranks than cores that
 * slows every other MPI call. Within a burst of requests it yields between probes, so answers
 * stay prompt; idle for longer than AMP_SFP_KEEPER_SPIN it sleeps, backing off to
 * AMP_SFP_KEEPER_NAP_MAX. */
#define AMP_SFP_KEEPER_SPIN    200e-6 /* s */
#define AMP_SFP_KEEPER_NAP_MAX 200000 /* ns */

typedef MPI_Offset (*amp_sfp_keeper_apply_fn)(void *ctx, const MPI_Offset *req);

static inline void amp_sfp_keeper_serve(MPI_Comm comm, amp_sfp_keeper_apply_fn apply, void *ctx)
{
    long nap = 0;
    double idle_since = PMPI_Wtime();
    for (;;) {
        int arrived = 0;
        MPI_Status st;
        if (PMPI_Iprobe(MPI_ANY_SOURCE, AMP_SFP_KEEPER_REQ, comm, &arrived, &st) != MPI_SUCCESS)
            return;
        if (!arrived) {
            if (PMPI_Wtime() - idle_since < AMP_SFP_KEEPER_SPIN) {
                sched_yield();
                continue;
            }
            nap =
                nap ? (2 * nap < AMP_SFP_KEEPER_NAP_MAX ? 2 * nap : AMP_SFP_KEEPER_NAP_MAX) : 1000;
            nanosleep(&(struct timespec){0, nap}, NULL);
            continue;
        }
        nap = 0;
        MPI_Offset req[3], before;
        if (PMPI_Recv(req, 3, MPI_OFFSET, st.MPI_SOURCE, AMP_SFP_KEEPER_REQ, comm, &st) !=
                MPI_SUCCESS ||
            req[0] == AMP_SFP_KEEPER_STOP)
            return;
        before = apply(ctx, req);
        PMPI_Send(&before, 1, MPI_OFFSET, st.MPI_SOURCE, AMP_SFP_KEEPER_REPLY, comm);
        idle_since = PMPI_Wtime();
    }
}

#endif
