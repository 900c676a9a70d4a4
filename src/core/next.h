/* The host MPI's completion routines. ampio interposes MPI_Wait, MPI_Test and their kin (so
 * that they advance its requests); ampio's own code calls the host's through this table, found
 * past ampio in the symbol search order, so that it never re-enters the interposed ones. */
#ifndef AMP_NEXT_H
#define AMP_NEXT_H

#include <mpi.h>

typedef struct amp_next {
    int (*wait)(MPI_Request *, MPI_Status *);
    int (*waitall)(int, MPI_Request *, MPI_Status *);
    int (*waitany)(int, MPI_Request *, int *, MPI_Status *);
    int (*waitsome)(int, MPI_Request *, int *, int *, MPI_Status *);
    int (*test)(MPI_Request *, int *, MPI_Status *);
    int (*testall)(int, MPI_Request *, int *, MPI_Status *);
    int (*testany)(int, MPI_Request *, int *, int *, MPI_Status *);
    int (*testsome)(int, MPI_Request *, int *, int *, MPI_Status *);
    int (*request_get_status)(MPI_Request, int *, MPI_Status *);
    int (*request_free)(MPI_Request *);
} amp_next_t;

/* The table, resolved on first use; a routine the host lacks aborts with a message. */
const amp_next_t *amp_next(void);

#endif
