/* Deferred shared-pointer writes of one process: a side data file that receives the bytes of
 * every write_shared, and records that say where they are, kept in memory and spilled to a side
 * metadata file past a bound. The individual component keeps a store per file, the single
 * component one per process for all its files; a record names its file by a tag. */
#ifndef AMP_SFP_STORE_H
#define AMP_SFP_STORE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t id;
    double ts;     /* corrected to rank 0's clock */
    int64_t local; /* byte offset in the side data file; -1 for a range pinned by a read */
    int64_t len;   /* etypes */
    int64_t at;    /* pinned ranges: the position, in etypes */
    int64_t tag;   /* the file */
    int32_t rank, pad;
} amp_sfp_rec_t;

typedef struct amp_sfp_store amp_sfp_store_t;

/* A store whose side files, made on first use, get these names (the store owns them). */
amp_sfp_store_t *amp_sfp_store_new(char *data_name, char *meta_name);

/* Closes and removes the side files. */
void amp_sfp_store_free(amp_sfp_store_t *st);

/* Every other call holds the store's lock. */
void amp_sfp_store_lock(amp_sfp_store_t *st);
void amp_sfp_store_unlock(amp_sfp_store_t *st);

/* Appends `bytes` of data; `*local` is where they went. */
int amp_sfp_store_append(amp_sfp_store_t *st, const void *data, size_t bytes, int64_t *local);

/* Adds a record (its id is assigned here). */
int amp_sfp_store_note(amp_sfp_store_t *st, amp_sfp_rec_t *rec);

/* Removes the records of `tag` and returns them (malloc'd); their data stays readable until
 * amp_sfp_store_done. */
int amp_sfp_store_take(amp_sfp_store_t *st, int64_t tag, amp_sfp_rec_t **out, int64_t *n);

/* Reads data appended before. */
int amp_sfp_store_read(amp_sfp_store_t *st, void *buf, size_t len, int64_t local);

/* Ends a take: when no record is left, the side files are emptied. */
int amp_sfp_store_done(amp_sfp_store_t *st);

#endif
