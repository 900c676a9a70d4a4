/* Shared by the collective algorithms: the call as every rank sees it, the round engine that
 * moves data between members and aggregators, and the component table. */
#ifndef AMP_COLL_INTERNAL_H
#define AMP_COLL_INTERNAL_H

#include <stdint.h>

#include "coll/auto_select.h"
#include "coll/coll.h"

/* What every rank knows about every rank after one allgather. */
typedef struct amp_coll_rank {
    MPI_Offset lo, hi; /* file extent of the rank's data: [lo, hi), empty when bytes == 0 */
    MPI_Count bytes;
    int64_t state; /* owners first: AMP_COLL_OWN_* */
    int64_t runs;  /* contiguous file runs of the data, when big_req_size asks (else 0) */
} amp_coll_rank_t;

#define AMP_COLL_RANK_WORDS ((int)(sizeof(amp_coll_rank_t) / sizeof(int64_t)))

/* What a rank did before the call was described (owners first, coll.c). */
enum { AMP_COLL_OWN_PENDING, AMP_COLL_OWN_DONE, AMP_COLL_OWN_FAILED };

/* Counters of one call, summed into the file's statistics. */
typedef struct amp_coll_counters {
    double t_total, t_io; /* seconds; exchange time is the difference */
    int64_t rounds;
    int64_t bytes_io; /* bytes this rank read or wrote in the file */
} amp_coll_counters_t;

typedef struct amp_coll_call {
    amp_file_t *f;
    const amp_coll_io_t *io;
    MPI_Comm comm;
    int rank, nprocs;
    const amp_coll_rank_t *ranks; /* nprocs entries */
    MPI_Offset glo, ghi;          /* extent of all data */
    MPI_Count gbytes;             /* bytes of all ranks */
    int disjoint;                 /* every rank's data in a file range of its own, in rank order */
    int naggr;
    int *aggr;                     /* aggregator ranks, ascending */
    MPI_Count cb;                  /* bytes an aggregator handles per round */
    MPI_Offset align;              /* file domain boundaries are multiples of this */
    const amp_fs_layout_t *layout; /* the file's striping */
    MPI_Offset file_size;          /* at the start of a read */
    const amp_groups_t *groups;    /* groups of the automatic choice, or NULL: equal ranges */
    const char *why;               /* why the algorithm was chosen, for AMPIO_EXPLAIN */
    amp_coll_counters_t count;
} amp_coll_call_t;

/* ---- pure planning (coll_plan.c): functions of the call's description, free of MPI ---- */

/* glo, ghi, gbytes and disjoint from the description c->ranks (nprocs records). */
void amp_coll_summarize(amp_coll_call_t *c);

/* The algorithm the automatic choice takes for the call's shape and direction, and c->why:
 * individual, stripe-contiguous domains (writes) or dynamic segmentation. */
int amp_coll_choose_shape(amp_coll_call_t *c, int write);

/* n aggregator ranks (ascending in `out`), spread over the nodes first (slot 0 of every node,
 * then slot 1...), at most per_node of them on a node when per_node > 0; how many in *count.
 * Returns MPI_SUCCESS or an error (never a count: an error code is no number of ranks). */
int amp_coll_place_aggregators(const int *node, int nnodes, int nprocs, int per_node, int n,
                               int *out, int *count);
/* Keeps the first failure in *first (a failure that must not stop a protocol, whose peers
 * would wait, is returned once it has completed); returns rc. */
static inline int amp_coll_keep(int *first, int rc)
{
    if (*first == MPI_SUCCESS && rc != MPI_SUCCESS)
        *first = rc;
    return rc;
}

/* Receives and discards the matched message `msg` without memory for it (a receive of nothing
 * truncates: the message is consumed, the truncation is expected). */
void amp_coll_drop(MPI_Message *msg);

/* ---- member side: this rank's data ---- */

/* Data bytes of this rank (offsets within its access) lying before file offset `off`. */
MPI_Count amp_coll_bytes_before(const amp_coll_call_t *c, MPI_Offset off);

/* The number of contiguous file runs of the view positions [pos, pos + nbytes). */
int64_t amp_coll_count_runs(const amp_view_t *v, MPI_Count pos, MPI_Count nbytes);

/* The file runs of this rank's data bytes [s_lo, s_hi), appended as (offset, length) pairs. */
int amp_coll_runs(const amp_coll_call_t *c, MPI_Count s_lo, MPI_Count s_hi, int64_t **runs,
                  size_t *nruns);

/* Copies this rank's data bytes [s_lo, s_hi) between memory and a packed buffer. */
void amp_coll_pack(const amp_coll_call_t *c, MPI_Count s_lo, MPI_Count s_hi, void *packed);
void amp_coll_unpack(const amp_coll_call_t *c, MPI_Count s_lo, MPI_Count s_hi, const void *packed);

/* The address of data byte `s` when memory is contiguous, else NULL. */
char *amp_coll_direct(const amp_coll_call_t *c, MPI_Count s);

/* ---- the round engine ---- */

/* One aggregator's work. Rounds split the data either at file offsets (`bounds`, nrounds + 1
 * ascending offsets) or by a fixed number of bytes per member and round (`quantum`). */
typedef struct amp_coll_work {
    int agg;    /* aggregator rank */
    int member; /* this rank sends the aggregator data */
    int nmembers;
    int *members; /* ranks it serves, ascending; known on the aggregator (and in a group) */
    int nrounds;
    MPI_Offset *bounds; /* by offsets, or NULL */
    MPI_Offset *starts; /* by offsets: round r is [starts[r], bounds[r + 1]) (NULL: adjacent) */
    MPI_Count quantum;  /* by bytes, when bounds == NULL */
    /* on a member: its data for this aggregator is [s_lo, s_hi) of its access, or, when the
     * plan dealt them (`dealt`), the runs `runs` */
    MPI_Count s_lo, s_hi;
    int dealt;
    int64_t *runs;
    size_t nruns;
    /* on the aggregator: the runs of each member, in the order of `members` */
    int64_t **mruns;
    size_t *mnruns;
} amp_coll_work_t;

typedef struct amp_coll_plan {
    int nwork;
    amp_coll_work_t *work; /* every aggregator this rank serves as a member, and its own */
    int mine;              /* index of the work this rank aggregates, or -1 */
} amp_coll_plan_t;

/* Members send their runs for each aggregator (work[i].s_lo..s_hi, or the runs the plan dealt)
 * to it; the aggregator fills mruns/mnruns. Every rank must know which members send to which
 * aggregator. The runs of a member whose data are one contiguous range of the file are known to
 * every rank from the call's description: those are computed, not sent (the shortcut of
 * contiguous_data). Must be called by every rank of a work before its rounds are known beyond
 * `bounds` (dynamic segmentation cuts them afterwards). */
int amp_coll_exchange_runs(amp_coll_call_t *c, amp_coll_plan_t *p);

/* Whether aggregators compute the runs of rank q instead of receiving them. */
int amp_coll_runs_known(const amp_coll_call_t *c, int q);

/* Moves the data round by round. First every rank agrees that all are `ready` (MPI_SUCCESS:
 * planned and exchanged) and have the engine's memory; if some rank is not, no data moves,
 * and the others return MPI_SUCCESS for the call's own agreement to replace. Later local
 * failures are remembered and returned after the protocol has completed on this rank, so
 * that no peer waits forever. */
int amp_coll_engine_write(amp_coll_call_t *c, amp_coll_plan_t *p, int ready);
int amp_coll_engine_read(amp_coll_call_t *c, amp_coll_plan_t *p, int ready);

void amp_coll_plan_free(amp_coll_plan_t *p);

/* Buffers of the round engine kept on the file from one collective call to the next: a new
 * buffer costs a page fault, and the kernel zeroing the page, for every 4 KiB it moves. */
typedef enum {
    AMP_COLL_SCRATCH_ROUND0, /* the aggregator's round buffers */
    AMP_COLL_SCRATCH_ROUND1,
    AMP_COLL_SCRATCH_PACK,  /* a member's packed data of one round, for every aggregator */
    AMP_COLL_SCRATCH_SIEVE, /* ds_in_coll: a round's range read, patched and written whole */
    AMP_COLL_SCRATCH_COUNT
} amp_coll_scratch_id_t;

/* Buffers above this size are freed at the end of the call that needed them. */
#define AMP_COLL_SCRATCH_KEEP ((MPI_Count)64 << 20)

/* A buffer of at least `need` bytes (contents undefined), or NULL. */
char *amp_coll_scratch(amp_file_t *f, amp_coll_scratch_id_t which, MPI_Count need);
void amp_coll_scratch_trim(amp_file_t *f);

/* ---- components ---- */

typedef struct amp_fcoll {
    const char *name;
    /* Builds the plan of this rank from what every rank knows: no communication, so that a
     * rank that fails here leaves no peer waiting (the ranks agree on it next). */
    int (*plan)(amp_coll_call_t *c, amp_coll_plan_t *p);
    /* The part of the plan that follows from the description alone (pure, no MPI): the work
     * of rank c->rank, its members and rounds, without this rank's own data ranges (s_lo,
     * s_hi come from its view) and the runs exchanged afterwards. */
    int (*domains)(amp_coll_call_t *c, amp_coll_plan_t *p);
    /* Completes the plans together (collective): amp_coll_exchange_runs when NULL. Completes
     * the protocol on every failure and returns the first. */
    int (*exchange)(amp_coll_call_t *c, amp_coll_plan_t *p);
} amp_fcoll_t;

extern const amp_fcoll_t amp_fcoll_two_phase;
extern const amp_fcoll_t amp_fcoll_dynamic_seg;
extern const amp_fcoll_t amp_fcoll_static_seg;
extern const amp_fcoll_t amp_fcoll_stripe;

/* Groups of consecutive ranks, one aggregator each (the dynamic and static segmentation).
 * Pure: a member's data for the group are all of its data, [0, its bytes). */
int amp_coll_groups(amp_coll_call_t *c, amp_coll_plan_t *p);

/* Dynamic segmentation on the aggregator: the rounds of work w, cut from its members' runs
 * (mruns) every collective buffer of data, or one round when the group's data fit in one.
 * Pure. */
int amp_coll_dynseg_rounds(const amp_coll_call_t *c, amp_coll_work_t *w);

/* Whether the `n` groups of amp_coll_groups cover disjoint ranges of file blocks (c->align).
 * Groups whose data interleave would have two aggregators write one block. */
int amp_coll_groups_disjoint(const amp_coll_call_t *c, int n, int *disjoint);

/* The automatic choice of aggregators (coll_auto.c): per file state and cached plan. */
typedef struct amp_coll_auto amp_coll_auto_t;
int amp_coll_auto_init(amp_file_t *f, amp_coll_auto_t **out);

/* The planner without a file: the process grid of a Cartesian communicator (ndims 0: none). */
int amp_coll_auto_new(int ndims, const int *dims, amp_coll_auto_t **out);

/* What the automatic plan takes from the file besides the description. */
typedef struct amp_coll_auto_in {
    int64_t k;            /* ampio_saturation_k */
    int contiguous;       /* the view's data are one contiguous run of the file */
    const char *topology; /* the ampio_topology hint, "" when unset */
} amp_coll_auto_in_t;

/* amp_coll_auto_cached and amp_coll_auto_plan on explicit inputs (pure, no MPI). */
int amp_coll_auto_cached_in(amp_coll_call_t *c, amp_coll_auto_t *a, const amp_coll_auto_in_t *in);
int amp_coll_auto_plan_in(amp_coll_call_t *c, amp_coll_auto_t *a, const amp_coll_auto_in_t *in);
void amp_coll_auto_free(amp_coll_auto_t *a);

/* The plan of the last call when this call has the same layout (then c->groups is set). The
 * layout is known to every rank, so all ranks find the plan or none does. */
int amp_coll_auto_cached(amp_coll_call_t *c, amp_coll_auto_t *a);

/* Groups the ranks of this call (c->groups) so that each group writes about k bytes, and
 * keeps the plan for the next call. */
int amp_coll_auto_plan(amp_coll_call_t *c, amp_coll_auto_t *a);

/* Drops the kept plan (when some rank could not make it). */
void amp_coll_auto_forget(amp_coll_auto_t *a);

/* Aggregator plans made for the file so far (the others were reused). */
int64_t amp_coll_auto_plans(const amp_coll_auto_t *a);

/* One line on how the last plan was made, for AMPIO_EXPLAIN. */
int amp_coll_auto_describe(const amp_coll_call_t *c, const amp_coll_auto_t *a, char *text,
                           size_t len);

/* Aggregator ranks: `n` spread over the nodes first, then within nodes. */
int amp_coll_pick_aggregators(amp_file_t *f, int n, int *out, int *count);

#endif
