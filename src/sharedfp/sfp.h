/* Shared file pointers: a table of components, chosen per file by the hint ampio_sharedfp.
 *
 *   shm         the pointer in a shared-memory window, updated with atomic instructions
 *   rma         the pointer in an MPI-3 RMA window at rank 0, updated with MPI_Fetch_and_op
 *   lockedfile  the pointer in a side file next to the file, updated under fcntl locks
 *   addproc     a process of its own keeps the pointer: a spawned server, or a service thread
 *               in rank 0 (needs MPI_THREAD_MULTIPLE)
 *   individual  each rank appends its write_shared data to its own side files; the records
 *               are merged into the file in timestamp order at collective points
 *   single      as individual, with one pair of side files per process for all its files
 *   auto        shm when all ranks share a node, else rma; lockedfile if no window can be made
 *
 * What is created when. Every component is chosen at MPI_File_open, because the choice must be
 * the same on every rank and write_shared, read_shared and get_position_shared are independent:
 * a first independent call cannot create anything collective (a window, a communicator, a
 * service thread another rank must reach) without hanging. So the collective part is made at
 * open, as cheaply as it can be: the window components take a slot of a window the group's files
 * share (sfp_pool.h), made once per group. Everything a rank can make alone is made on first
 * use: side files (lockedfile, individual, single) appear only when a shared pointer is first
 * moved, and files that never use one leave nothing behind. */
#ifndef AMP_SFP_H
#define AMP_SFP_H

#include <mpi.h>
#include <stdint.h>

#include "io/file.h"
#include "dtype/dt.h"

/* Indices of the hint's choices "auto,shm,rma,lockedfile,addproc,individual,single". */
enum {
    AMP_SFP_AUTO = 0,
    AMP_SFP_SHM = 1,
    AMP_SFP_RMA = 2,
    AMP_SFP_LOCKEDFILE = 3,
    AMP_SFP_ADDPROC = 4,
    AMP_SFP_INDIVIDUAL = 5,
    AMP_SFP_SINGLE = 6,
};

/* Local, before the open's last agreement: allocates the file's pointer, so that a rank out of
 * memory fails the open with the others instead of needing an agreement of its own. */
int amp_sfp_prepare(amp_file_t *f);

/* The automatic choice's slot (sfp_pool.h) and rank 0's name for the open's side files, offered
 * before the open's last agreement, which or-s these AMP_SFP_OPEN_WORDS words over the ranks:
 * no reduction or broadcast of their own. Local, after amp_sfp_prepare; withdrawn (local) when
 * that agreement fails. */
#define AMP_SFP_OPEN_WORDS 5
void amp_sfp_open_offer(amp_file_t *f, uint64_t *words);
void amp_sfp_open_withdraw(amp_file_t *f);

/* Collective at open, after amp_sfp_prepare: chooses and creates the component (from the or-ed
 * words of amp_sfp_open_offer when `offered` is not NULL); the pointer starts at 0. On failure
 * the pointer is freed. */
int amp_sfp_open(amp_file_t *f, const uint64_t *offered);

/* Collective at close: merges deferred data, frees the component, removes side files. */
int amp_sfp_close(amp_file_t *f);

/* amp_sfp_close in two steps around a collective step of the caller's that follows every
 * rank's last use of the pointer (the close's agreement), which spares the component a barrier
 * of its own: the merge (collective), then the freeing. */
int amp_sfp_close_sync(amp_file_t *f);
void amp_sfp_close_free(amp_file_t *f);

/* Local: releases what this process holds of a file never closed (at MPI_Finalize). */
void amp_sfp_reap(amp_file_t *f);

/* Atomically adds `delta` etypes and returns the value before. Independent. */
int amp_sfp_fetch_add(amp_file_t *f, MPI_Offset delta, MPI_Offset *before);

/* The same inside a collective call that began with amp_sfp_sync (ordered accesses): nothing
 * deferred precedes it, so a deferring component needs no note of the range. */
int amp_sfp_fetch_add_collective(amp_file_t *f, MPI_Offset delta, MPI_Offset *before);

/* Reads the value (independent) or replaces it (one rank, inside a collective call). */
int amp_sfp_get(amp_file_t *f, MPI_Offset *value);
int amp_sfp_set(amp_file_t *f, MPI_Offset value);

/* Whether this rank moved the pointer (or set it) since it was last reset: at open, or by
 * amp_sfp_reset. */
int amp_sfp_moved(const amp_file_t *f);

/* Inside a collective call: sets the pointer to 0 (rank 0) when `moved`, the or of
 * amp_sfp_moved over every rank, says it may have left 0; the caller orders the reset before
 * any later access of the pointer. */
int amp_sfp_reset(amp_file_t *f, int moved);

/* Collective: makes deferred shared-pointer writes part of the file. Every collective routine
 * that depends on the file's contents or the pointer calls it first. */
int amp_sfp_sync(amp_file_t *f);

/* write_shared for a component that defers the data: stores `bytes` of file data from
 * buf/count/type and advances the pointer. `*deferred` is 0 when the component writes in
 * place, and then nothing was done. Independent. */
int amp_sfp_write_deferred(amp_file_t *f, const void *buf, MPI_Count count, MPI_Datatype type,
                           amp_dt_t *mdt, MPI_Count bytes, int *deferred);

/* The component's name, as reported by MPI_File_get_info ("ampio_sharedfp_method"). */
const char *amp_sfp_method(const amp_file_t *f);

/* Removes side files left next to `path` (MPI_File_delete). Local; never fails. */
void amp_sfp_delete_side_files(const char *path);

#endif
