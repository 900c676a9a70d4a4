/* Which node (shared-memory domain) each rank of a communicator runs on. Finding out splits the
 * communicator; the answer is kept per group, so that the collective layer and the shared file
 * pointers of every file opened on the same processes pay for the split once. */
#ifndef AMP_NODES_H
#define AMP_NODES_H

#include <mpi.h>

/* Fills node[r] (nprocs entries) with the node of rank r, numbered in order of each node's
 * lowest rank, and *nnodes. Collective over `comm`. */
int amp_nodes_get(MPI_Comm comm, int nprocs, int *node, int *nnodes);

/* Local: 1 when the layout of `comm`'s group is kept in this process (then `node` and `nnodes`
 * hold it), else 0. */
int amp_nodes_lookup(MPI_Comm comm, int nprocs, int *node, int *nnodes);

/* The world rank of each rank of `comm` (n entries, malloc'd): a key for what is kept per group.
 * NULL when out of memory or when a rank lies outside MPI_COMM_WORLD (spawned processes). */
int *amp_nodes_world_ranks(MPI_Comm comm, int n);

/* Frees what was kept (at MPI_Finalize). */
void amp_nodes_free(void);

#endif
