/* Agreement among the ranks of a file: an error on one rank becomes an error on every rank, so
 * that no collective call hangs or succeeds partially. */
#ifndef AMP_AGREE_H
#define AMP_AGREE_H

#include <mpi.h>
#include <stdint.h>

/* Every rank returns an error when any rank passed one: the failing rank its own code, the
 * others a code of the same class naming that rank and its message. */
int amp_agree(MPI_Comm comm, int code);

/* Largest `n` of amp_agree_or. */
#define AMP_AGREE_OR_WORDS 16

/* amp_agree, and in the same single reduction the bitwise or of every rank's `n` words into
 * `words`: a word one rank alone sets (the others pass 0) reaches every rank, and a value passed
 * next to its complement was equal on every rank when both come back unchanged
 * (amp_agree_or_same). Only when a rank failed does a second step name it; `words` are then
 * left as they were. Every call reduces AMP_AGREE_OR_WORDS words, whatever `n`. */
int amp_agree_or(MPI_Comm comm, int code, uint64_t *words, int n);

/* Whether `value`, passed as words[0] = value and words[1] = ~value to amp_agree_or, came back
 * unchanged: equal on every rank. */
int amp_agree_or_same(const uint64_t *words, uint64_t value);

/* Sets `*same` to whether each of the `n` (at most 4) values is equal on every rank. */
int amp_agree_same_n(MPI_Comm comm, const uint64_t *values, int n, int *same);

/* The same, and sets `*any` to whether `flag` is true on some rank (one reduction for both). */
int amp_agree_same_any(MPI_Comm comm, uint64_t value, int flag, int *same, int *any);

#endif
