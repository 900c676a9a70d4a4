/* Agreement among the ranks of a file: an error on one rank becomes an error on every rank, so
 * that no collective call hangs or succeeds partially. */
#ifndef AMP_AGREE_H
#define AMP_AGREE_H

#include <mpi.h>
#include <stdint.h>

/* Every rank returns an error when any rank passed one: the failing rank its own code, the
 * others a code of the same class naming that rank and its message. */
int amp_agree(MPI_Comm comm, int code);

/* Sets `*same` to whether `value` is equal on every rank. */
int amp_agree_same(MPI_Comm comm, uint64_t value, int *same);

/* Sets `*same` to whether each of the `n` (at most 4) values is equal on every rank. */
int amp_agree_same_n(MPI_Comm comm, const uint64_t *values, int n, int *same);

/* The same, and sets `*any` to whether `flag` is true on some rank (one reduction for both). */
int amp_agree_same_any(MPI_Comm comm, uint64_t value, int flag, int *same, int *any);

#endif
