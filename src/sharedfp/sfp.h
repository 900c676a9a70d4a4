/* Shared file pointers. The pointer (in etypes) lives in memory that every rank can update
 * atomically: a shared-memory window when all ranks share a node, else an MPI-3 RMA window
 * advanced with MPI_Fetch_and_op. Neither needs file locks nor leaves files behind. */
#ifndef AMP_SFP_H
#define AMP_SFP_H

#include <mpi.h>

typedef struct amp_sfp amp_sfp_t;

enum { AMP_SFP_AUTO = 0, AMP_SFP_SHM = 1, AMP_SFP_RMA = 2 };

/* Collective over `comm`; the pointer starts at 0. */
int amp_sfp_create(MPI_Comm comm, int method, amp_sfp_t **out);

/* Collective. */
void amp_sfp_free(amp_sfp_t **sfp);

/* Atomically adds `delta` and returns the value before. Independent. */
int amp_sfp_fetch_add(amp_sfp_t *sfp, MPI_Offset delta, MPI_Offset *before);

/* Reads or replaces the value. Independent. */
int amp_sfp_get(amp_sfp_t *sfp, MPI_Offset *value);
int amp_sfp_set(amp_sfp_t *sfp, MPI_Offset value);

/* "shm" or "rma". */
const char *amp_sfp_method(const amp_sfp_t *sfp);

#endif
