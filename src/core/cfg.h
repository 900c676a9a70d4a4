/* Configuration: values of the parameters of cfg_table.h for one file, with their sources.
 * Precedence: AMPIO_HINTS > the application's hints > AMPIO_* environment > the ROMIO_HINTS
 * file > config file > built-in default. */
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
    AMP_CFG_SRC_FILE_FS,     /* the config file's value for the file's file system (key@mount) */
    AMP_CFG_SRC_ROMIO_HINTS, /* the file ROMIO_HINTS names */
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
    AMP_FCOLL_STRIPE,
    AMP_FCOLL_COUNT
};

typedef struct amp_cfg {
    int64_t num[AMP_CFG_COUNT]; /* BOOL, INT, SIZE and ENUM (index into the choices) */
    char *str[AMP_CFG_COUNT];   /* the value as text, for every type */
    amp_cfg_src_t src[AMP_CFG_COUNT];
    char notes[512]; /* hints clamped or ignored since the last amp_cfg_explain_notes */
} amp_cfg_t;

/* Fills `cfg` from every source, with `hints` as the application's hints (MPI_INFO_NULL for
 * none). A bad value from ampio's own sources (environment, config file, AMPIO_HINTS) or of an
 * ampio_ hint is an MPI_ERR_INFO error naming it; a value ampio cannot use of another hint
 * (the application's, ROMIO_HINTS) is clamped or ignored and noted in `notes`. */
int amp_cfg_load(amp_cfg_t *cfg, MPI_Info hints);

/* The same for the file at `path`: config file keys "name@mount" apply to files on the file
 * system mounted at `mount` (ampio-calibrate --save keeps k so, one per file system). */
int amp_cfg_load_for(amp_cfg_t *cfg, MPI_Info hints, const char *path);

/* Applies the application's hints of a later call (set_view, set_info) on top of `cfg`;
 * AMPIO_HINTS still wins. */
int amp_cfg_update(amp_cfg_t *cfg, MPI_Info hints);

void amp_cfg_free(amp_cfg_t *cfg);

/* Adds a note on a hint ampio could not follow, printed under AMPIO_EXPLAIN. */
void amp_cfg_note(amp_cfg_t *cfg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints the notes on clamped or ignored hints under AMPIO_EXPLAIN (on rank 0) and clears them. */
void amp_cfg_explain_notes(amp_cfg_t *cfg, int rank, const char *path);

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

/* One line of a config file ("key = value # comment") or of a ROMIO_HINTS file ("key value"),
 * parsed in place: 1 with `key` and `value` pointing into `line`, 0 when the line has none. */
int amp_cfg_conf_line(char *line, char **key, char **value);
int amp_cfg_romio_line(char *line, char **key, char **value);

/* Where the value of `id` came from: "default", "config file", "environment", ... */
const char *amp_cfg_source(const amp_cfg_t *cfg, amp_cfg_id_t id);

static inline int64_t amp_cfg_num(const amp_cfg_t *cfg, amp_cfg_id_t id)
{
    return cfg->num[id];
}

#endif
