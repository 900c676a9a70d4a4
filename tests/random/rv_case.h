/* One random case: every rank's view, memory type and accesses, derived from the case seed
 * alone, and the model of the file they produce. */
#ifndef RV_CASE_H
#define RV_CASE_H

#include "rv_spec.h"

#define RV_MAXOPS   4
#define RV_MAXHINTS 8

/* access families; the same numbering serves writes and reads */
enum {
    FAM_AT_ALL,    /* write_at_all */
    FAM_ALL,       /* write_all */
    FAM_AT,        /* write_at */
    FAM_PLAIN,     /* write */
    FAM_IAT,       /* iwrite_at + wait */
    FAM_I,         /* iwrite + wait */
    FAM_ALL_SPLIT, /* write_all_begin/end */
    FAM_AT_SPLIT,  /* write_at_all_begin/end */
    FAM_IAT_ALL,   /* iwrite_at_all + wait */
    FAM_I_ALL,     /* iwrite_all + wait */
    FAM_COUNT
};

enum { VIEW_TILED_SAME, VIEW_TILED_OWN, VIEW_PARTITION };

typedef struct {
    rv_spec *ft;    /* filetype */
    long long disp; /* view displacement, bytes */
    rv_spec *mt;    /* memory type of every access */
    int count[RV_MAXOPS];
    long long offset[RV_MAXOPS]; /* etypes into the view */
    long long stream[RV_MAXOPS]; /* index of the first data byte in the rank's stream */
} rv_rank_plan;

typedef struct {
    unsigned long long seed;
    int nprocs, granule, view, nops, tight;
    int wfam[RV_MAXOPS], rfam[RV_MAXOPS], full_fam;
    int truncate;      /* empty the file with set_size instead of deleting it */
    int wait_early;    /* complete pending nonblocking accesses before each collective one */
    int reopen_rdonly; /* read back through a read-only handle */
    int nhints;
    const char *hint_key[RV_MAXHINTS], *hint_val[RV_MAXHINTS];
    rv_rank_plan *rank; /* nprocs entries */
    unsigned char *image; /* the model of the file */
    long long fsize;
} rv_case;

/* Maps a position in the data of a type tiled from `base` to a byte offset. */
typedef struct {
    const rv_spec *t;
    long long base;
    long long *prefix; /* data bytes before each piece */
} rv_layout;

void rv_layout_init(rv_layout *l, const rv_spec *t, long long base);
void rv_layout_free(rv_layout *l);
/* Byte offset of data byte `pos`; *run: bytes contiguous from there. */
long long rv_layout_at(const rv_layout *l, long long pos, long long *run);

/* tight: every filetype keeps its data within [0, extent) (no view runs past its extent) */
void rv_case_make(rv_case *c, unsigned long long seed, int nprocs, int tight);
void rv_case_free(rv_case *c);

/* "seed=.. np=.. ..." for `rank` */
void rv_case_describe(const rv_case *c, int rank, char *buf, size_t len);

const char *rv_family_name(int fam, int write);

#endif
