/* The interface between the shared file pointer dispatcher and its components. */
#ifndef AMP_SFP_IMPL_H
#define AMP_SFP_IMPL_H

#include <mpi.h>

#include "io/file.h"
#include "dtype/dt.h"
#include "sharedfp/sfp_pool.h"

typedef struct amp_sfp amp_sfp_t;

typedef struct amp_sfp_ops {
    const char *name;
    /* Collective; returns an error (the same on every rank) when the component cannot serve
     * this file, so that the dispatcher can fall back. */
    int (*create)(amp_sfp_t *s);
    /* create's outcome is already the same on every rank: the dispatcher need not agree */
    int agreed;
    /* `how`: amp_sfp_destroy_t */
    void (*destroy)(amp_sfp_t *s, int how);
    int (*fetch_add)(amp_sfp_t *s, MPI_Offset delta, MPI_Offset *before);
    /* Optional: fetch_add right after a merge, in a collective call (default: fetch_add). */
    int (*fetch_add_collective)(amp_sfp_t *s, MPI_Offset delta, MPI_Offset *before);
    int (*get)(amp_sfp_t *s, MPI_Offset *value);
    int (*set)(amp_sfp_t *s, MPI_Offset value);
    /* Optional: deferred writes and their collective merge. */
    int (*write)(amp_sfp_t *s, const void *buf, MPI_Count count, MPI_Datatype type, amp_dt_t *mdt,
                 MPI_Count bytes);
    int (*sync)(amp_sfp_t *s);
} amp_sfp_ops_t;

struct amp_sfp {
    const amp_sfp_ops_t *ops;
    amp_file_t *f;
    MPI_Comm comm; /* the file's communicator */
    int rank, nprocs;
    char token[40];      /* unique per open file, the same on every rank: names side files */
    void *state;         /* the component's own */
    amp_sfp_slot_t slot; /* the window components' pointer */
    int moved;           /* this rank moved the pointer since it was last reset (atomic) */
};

extern const amp_sfp_ops_t amp_sfp_shm_ops, amp_sfp_rma_ops, amp_sfp_lockedfile_ops,
    amp_sfp_addproc_ops, amp_sfp_individual_ops, amp_sfp_single_ops;

/* Creates `ops` for the file and agrees on the outcome. Collective. */
int amp_sfp_try(amp_sfp_t *s, const amp_sfp_ops_t *ops);

/* Creates the window component every rank is fit to serve: shm when all ranks share a node,
 * else rma. Sets s->ops. Collective; the same outcome on every rank. */
int amp_sfp_create_window(amp_sfp_t *s);

/* amp_sfp_create_window in the steps of amp_sfp_slot_offer around the caller's reduction. */
void amp_sfp_offer_window(amp_sfp_t *s, uint64_t *words);
int amp_sfp_accept_window(amp_sfp_t *s, const uint64_t *words);
void amp_sfp_withdraw_window(amp_sfp_t *s);

/* Side files: "<dir>/.<name>.ampio-sfp-<token><suffix>", mode 0600, never through a link.
 * NEW creates the file, SHARE also opens one of this user that another rank created, EXISTING
 * only opens (and leaves `*fd` at -1 when there is none). `flags` are added to open's (O_DIRECT).
 */
enum { AMP_SFP_SIDE_NEW, AMP_SFP_SIDE_SHARE, AMP_SFP_SIDE_EXISTING };
int amp_sfp_side_name(const amp_sfp_t *s, const char *suffix, char **name);
/* A side file of this process rather than of one file, next to `near`:
 * "<dir>/.ampio-sfp-proc-<token><suffix>". */
int amp_sfp_side_name_process(const char *near, const char *suffix, char **name);
int amp_sfp_side_open(const char *name, int how, int flags, int *fd);
/* Reads (or writes) up to `len` bytes at `off`, retrying after signals and short transfers: the
 * bytes moved, fewer only at the end of the file for a read, or -1 with errno set. */
ssize_t amp_sfp_side_io(int write, int fd, void *buf, size_t len, off_t off);
/* Opens the side file, or creates it holding `init` (`len` bytes): made under a private name,
 * written and synced, then linked to `name`, so that no client ever sees it shorter. Where a
 * client caches sizes (FUSE), a read past a size it saw once returns nothing however the file
 * grew since. */
int amp_sfp_side_open_filled(const char *name, int flags, const void *init, size_t len, int *fd);

#endif
