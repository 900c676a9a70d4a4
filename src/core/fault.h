/* Fault injection, for tests: environment variables make one chosen call of ampio's own layers
 * fail, so that tests can check that every failure becomes an error of the right class on every
 * rank, with no hang and no lost data (docs/DESIGN.md, "Fault injection"). Read at MPI_Init;
 * nothing is counted before it, and each fault fires once:
 *
 *   AMPIO_FAULT_ALLOC=n        the n-th allocation fails (returns NULL)
 *   AMPIO_FAULT_FS=n[:kind]    the n-th file system call fails with kind eio (the default),
 *                              enospc or eintr; kind short makes the n-th data transfer move
 *                              half of what was asked
 *   AMPIO_FAULT_COMM=n         the n-th communication call reports MPI_ERR_OTHER once it has
 *                              completed (the agreement on errors itself is never failed)
 *   AMPIO_FAULT_RANK=r         only on rank r of MPI_COMM_WORLD (default: every rank)
 *   AMPIO_FAULT_REPORT=1       at MPI_Finalize, print the calls counted and the faults fired
 *
 * Without these variables each hook is one predictable branch. */
#ifndef AMP_FAULT_H
#define AMP_FAULT_H

#include <stddef.h>

enum { AMP_FAULT_ALLOC, AMP_FAULT_FS, AMP_FAULT_COMM, AMP_FAULT_KINDS };

/* What amp_fault_fs asks the caller to do instead of its call. */
#define AMP_FAULT_SHORT (-1)

extern int amp_fault_on; /* some fault is armed (or counting is reported) */

/* Reads the variables; `world_rank` is this process's rank in MPI_COMM_WORLD. */
void amp_fault_init(int world_rank);

/* At finalize: the report of AMPIO_FAULT_REPORT. */
void amp_fault_report(void);

/* Counts one call of `kind`; whether it must fail. */
int amp_fault_hit(int kind);

int amp_fault_fs_call(int transfer);

/* A file system call: 0 to go on, an errno value to fail with, or AMP_FAULT_SHORT (only when
 * `transfer`) to move half of the bytes. */
static inline int amp_fault_fs(int transfer)
{
    if (!amp_fault_on)
        return 0;
    return amp_fault_fs_call(transfer);
}

/* Whether a communication call that succeeded must report a failure (core/task.c makes it
 * MPI_ERR_OTHER). */
static inline int amp_fault_comm(void)
{
    return amp_fault_on && amp_fault_hit(AMP_FAULT_COMM);
}

/* Allocation in ampio's layers: malloc and friends, with the allocation fault. */
void *amp_malloc(size_t size);
void *amp_calloc(size_t n, size_t size);
void *amp_realloc(void *p, size_t size);
char *amp_strdup(const char *s);
char *amp_strndup(const char *s, size_t n);

#endif
