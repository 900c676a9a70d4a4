/* Independent transfer of data between memory and the file through the file's view. */
#ifndef AMP_XFER_H
#define AMP_XFER_H

#include "io/file.h"

typedef struct amp_xfer {
    amp_file_t *f;
    int write;
    MPI_Count pos;    /* first data byte of the view */
    MPI_Count nbytes; /* bytes to move */
    void *mem;        /* memory buffer and the layout of its items */
    const amp_dt_t *mdt;
    int lock_held; /* no lock needed: the caller holds one over the whole range (atomic mode),
                      or no other process can access the range meanwhile */
} amp_xfer_t;

/* Moves the data; `*done` is the number of bytes moved (less than asked only when a read
 * reaches the end of file, or on error). */
int amp_xfer(const amp_xfer_t *x, MPI_Count *done);

/* Whether plain writes of the file must lock their range: some rank may sieve a write (a view
 * with holes, where locked read-modify-write is safe), and its read-modify-write must not put
 * back stale bytes over a write that landed meanwhile. The same on every rank. */
int amp_xfer_writes_lock(const amp_file_t *f);

/* amp_xfer as a job for ampio's I/O threads (core/worker.h): POSIX calls only. */
typedef struct amp_xfer_job {
    const amp_xfer_t *x;
    MPI_Count done;
} amp_xfer_job_t;
int amp_xfer_job(void *job);

#endif
