/* Configuration: values of the parameters of cfg_table.h for one file, with their sources.
 * Precedence: AMPIO_HINTS > the application's hints > AMPIO_* environment > config file >
 * built-in default. */
#ifndef AMP_CFG_H
#define AMP_CFG_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "core/cfg_table.h"

typedef enum {
#define AMP_CFG_ENUM_ID(id, ...) AMP_CFG_##id,
    AMP_CFG_PARAMS(AMP_CFG_ENUM_ID)
#undef AMP_CFG_ENUM_ID
        AMP_CFG_COUNT
} amp_cfg_id_t;

typedef enum {
    AMP_CFG_SRC_DEFAULT,
    AMP_CFG_SRC_FILE,
    AMP_CFG_SRC_ENV,
    AMP_CFG_SRC_HINT,
    AMP_CFG_SRC_OVERRIDE, /* AMPIO_HINTS */
} amp_cfg_src_t;

/* Values of ENUM parameters, as integers (their index in the choices). */
enum { AMP_CFG_AUTOMATIC = 0, AMP_CFG_ENABLE = 1, AMP_CFG_DISABLE = 2 };
enum {
    AMP_FCOLL_AUTO,
    AMP_FCOLL_INDIVIDUAL,
    AMP_FCOLL_TWO_PHASE,
    AMP_FCOLL_DYNAMIC_SEG,
    AMP_FCOLL_STATIC_SEG,
    AMP_FCOLL_COUNT
};

typedef struct amp_cfg {
    int64_t num[AMP_CFG_COUNT]; /* BOOL, INT, SIZE and ENUM (index into the choices) */
    char *str[AMP_CFG_COUNT];   /* the value as text, for every type */
    amp_cfg_src_t src[AMP_CFG_COUNT];
} amp_cfg_t;

/* Fills `cfg` from every source, with `hints` as the application's hints (MPI_INFO_NULL for
 * none). A bad value from any source is an MPI_ERR_INFO error naming it. */
int amp_cfg_load(amp_cfg_t *cfg, MPI_Info hints);

/* Applies the application's hints of a later call (set_view, set_info) on top of `cfg`;
 * AMPIO_HINTS still wins. */
int amp_cfg_update(amp_cfg_t *cfg, MPI_Info hints);

void amp_cfg_free(amp_cfg_t *cfg);

/* A deep copy, so that an update can be tried and dropped; MPI_ERR_NO_MEM on failure. */
int amp_cfg_copy(amp_cfg_t *dst, const amp_cfg_t *src);

/* A hash of the COLL-scope values, equal on ranks that agree. */
uint64_t amp_cfg_coll_hash(const amp_cfg_t *cfg);

/* Stores every value into `info` as text. */
int amp_cfg_to_info(const amp_cfg_t *cfg, MPI_Info info);

/* Prints the table with values and sources. */
void amp_cfg_print(const amp_cfg_t *cfg, FILE *out);

/* The value as a word: for ENUM the choice in effect (e.g. "automatic"), else the text. */
const char *amp_cfg_word(const amp_cfg_t *cfg, amp_cfg_id_t id);

/* Parses a size with an optional unit (k, M, G, T, with or without "iB"/"B"). */
int amp_cfg_parse_size(const char *text, int64_t *out);

/* Where the value of `id` came from: "default", "config file", "environment", ... */
const char *amp_cfg_source(const amp_cfg_t *cfg, amp_cfg_id_t id);

static inline int64_t amp_cfg_num(const amp_cfg_t *cfg, amp_cfg_id_t id)
{
    return cfg->num[id];
}

#endif
