/* Lazy set-up on the first MPI_File call, and clean-up when MPI_Finalize deletes the attribute
 * ampio keeps on MPI_COMM_SELF. MPI_Init is not wrapped. */
#ifndef AMP_INIT_H
#define AMP_INIT_H

/* MPI_SUCCESS when MPI is initialized and not finalized, an error naming the problem else. */
int amp_init(void);

#endif
