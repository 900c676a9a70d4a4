/* The file object behind an MPI_File handle. The layers above keep their state behind the
 * opaque pointers (sfp, coll, op). */
#ifndef AMP_IO_FILE_H
#define AMP_IO_FILE_H

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>

#include "core/cfg.h"
#include "core/rangelock.h"
#include "dtype/dt.h"
#include "fs/fs.h"
#include "fs/fs_layout.h"

struct amp_datarep;
struct amp_sfp;
struct amp_coll_state;
struct amp_op_state;

/* A file view: displacement, etype, filetype and data representation. */
typedef struct amp_view {
    MPI_Offset disp;
    MPI_Datatype etype, filetype; /* held by the view (duplicates of derived types) */
    amp_dt_t *ft;                 /* the filetype as laid out in the file */
    MPI_Count esize;              /* bytes of one etype in the file */
    char datarep[MPI_MAX_DATAREP_STRING + 1];
    const struct amp_datarep *rep; /* NULL for "native" and "internal" */
} amp_view_t;

#define AMP_FILE_MAGIC 0x616d7066u /* "ampf" */

typedef struct amp_file {
    uint32_t magic;
    MPI_Comm comm; /* private duplicate of the user's communicator, errors returned */
    int rank, nprocs;
    char *path;
    int amode;
    amp_fs_t fs;
    amp_fs_layout_t layout; /* striping in use, the same on every rank (core/file_layout.c) */
    int readable;           /* the descriptor can read (data sieving of writes needs it) */
    amp_cfg_t cfg;
    amp_view_t view;
    MPI_Offset fp; /* individual file pointer, in etypes */
    int atomic;
    MPI_Errhandler errhandler;
    MPI_Comm errh_holder; /* holds a reference to errhandler (file/errh.h) */
    MPI_Fint fint;
    struct amp_sfp *sfp;
    struct amp_coll_state *coll; /* node layout, statistics, the last collective plan */
    struct amp_op_state *op;     /* nonblocking requests and split collectives (op/) */
    int view_holes;  /* some rank's view has holes, so some rank's writes may be sieved */
    void *sieve_buf; /* data sieving buffer, grown on demand */
    size_t sieve_cap;
    pthread_mutex_t lock;          /* guards the sieve buffer of independent transfers */
    pthread_mutex_t fp_lock;       /* held from reading the individual pointer to advancing it */
    amp_rangelock_t atomic_ranges; /* atomic mode: the ranges threads of this process hold */
    amp_rangelock_t io_ranges;     /* the windows independent writes hold among threads */
} amp_file_t;

static inline MPI_File amp_file_handle(amp_file_t *f)
{
    return (MPI_File)(void *)f;
}

#endif
