#include "core/cfg.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/fault.h"
#include "core/mount.h"

typedef enum {
    AMP_CFG_BOOL,
    AMP_CFG_INT,
    AMP_CFG_SIZE,
    AMP_CFG_ENUM,
    AMP_CFG_STRING
} amp_cfg_type_t;

typedef struct {
    const char *name;
    amp_cfg_type_t type;
    const char *def;
    int64_t min, max;
    const char *choices;
    int collective;
    const char *doc;
} amp_cfg_param_t;

#define COLL  1
#define LOCAL 0
static const amp_cfg_param_t amp_cfg_params[AMP_CFG_COUNT] = {
#define AMP_CFG_ROW(id, name, type, def, min, max, choices, scope, doc)                            \
    [AMP_CFG_##id] = {name, AMP_CFG_##type, def, min, max, choices, scope, doc},
    AMP_CFG_PARAMS(AMP_CFG_ROW)
#undef AMP_CFG_ROW
};
#undef COLL
#undef LOCAL

static const char *amp_cfg_src_names[] = {
    "default", "config file", "config (fs)", "ROMIO_HINTS", "environment", "hint", "AMPIO_HINTS"};

/* ---- parsing of one value ---- */

int amp_cfg_parse_size(const char *text, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || errno || v < 0)
        return -1;
    while (isspace((unsigned char)*end))
        end++;
    int64_t mult = 1;
    switch (tolower((unsigned char)*end)) {
    case 'k':
        mult = 1LL << 10;
        break;
    case 'm':
        mult = 1LL << 20;
        break;
    case 'g':
        mult = 1LL << 30;
        break;
    case 't':
        mult = 1LL << 40;
        break;
    case '\0':
        break;
    default:
        if (strcasecmp(end, "b") == 0)
            break;
        return -1;
    }
    if (mult > 1) {
        end++;
        if (strcasecmp(end, "ib") != 0 && strcasecmp(end, "b") != 0 && *end != '\0')
            return -1;
    }
    if (v > INT64_MAX / mult)
        return -1;
    *out = v * mult;
    return 0;
}

static int amp_cfg_parse_bool(const char *text, int64_t *out)
{
    static const char *yes[] = {"true", "1", "yes", "on", "enable", "enabled"};
    static const char *no[] = {"false", "0", "no", "off", "disable", "disabled"};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcasecmp(text, yes[i]) == 0)
            return *out = 1, 0;
        if (strcasecmp(text, no[i]) == 0)
            return *out = 0, 0;
    }
    return -1;
}

static int amp_cfg_parse_enum(const char *choices, const char *text, int64_t *out)
{
    size_t len = strlen(text);
    int64_t index = 0;
    for (const char *p = choices; *p; index++) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n == len && strncasecmp(p, text, n) == 0)
            return *out = index, 0;
        p += n + (comma != NULL);
    }
    return -1;
}

/* Parses `text` for parameter `id` into `v`: 0, or 1 when it is not of the parameter's form, or
 * 2 when it is out of the parameter's range. */
static int amp_cfg_parse(amp_cfg_id_t id, const char *text, int64_t *v)
{
    const amp_cfg_param_t *p = &amp_cfg_params[id];
    int bad = 0;
    char *end;
    *v = 0;
    switch (p->type) {
    case AMP_CFG_BOOL:
        bad = amp_cfg_parse_bool(text, v);
        break;
    case AMP_CFG_INT:
        errno = 0;
        /* decimal, as users write counts ("010" is ten); permission bits are octal */
        *v = strtoll(text, &end, id == AMP_CFG_FILE_PERM ? 8 : 10);
        bad = end == text || *end != '\0' || errno;
        break;
    case AMP_CFG_SIZE:
        bad = amp_cfg_parse_size(text, v);
        break;
    case AMP_CFG_ENUM:
        bad = amp_cfg_parse_enum(p->choices, text, v);
        break;
    case AMP_CFG_STRING:
        break;
    }
    if (bad)
        return 1;
    /* a size whose default is 0 takes 0 as "chosen by ampio", whatever its least value */
    int chosen = p->type == AMP_CFG_SIZE && *v == 0 && strcmp(p->def, "0") == 0;
    if (!chosen && (p->type == AMP_CFG_INT || p->type == AMP_CFG_SIZE) &&
        (*v < p->min || *v > p->max))
        return 2;
    return 0;
}

static const char *amp_cfg_form(const amp_cfg_param_t *p)
{
    return p->type == AMP_CFG_BOOL   ? "true or false"
           : p->type == AMP_CFG_INT  ? "an integer"
           : p->type == AMP_CFG_SIZE ? "a size such as 4096, 512K, 16M or 1GiB"
                                     : p->choices;
}

static int amp_cfg_store(amp_cfg_t *cfg, amp_cfg_id_t id, const char *text, int64_t v,
                         amp_cfg_src_t src)
{
    char *copy = amp_strdup(text);
    if (!copy)
        return amp_err(MPI_ERR_NO_MEM, "out of memory storing parameter %s",
                       amp_cfg_params[id].name);
    free(cfg->str[id]);
    cfg->str[id] = copy;
    cfg->num[id] = v;
    cfg->src[id] = src;
    return MPI_SUCCESS;
}

/* Parses `text` for parameter `id`; on success stores value and source. */
static int amp_cfg_set(amp_cfg_t *cfg, amp_cfg_id_t id, const char *text, amp_cfg_src_t src)
{
    const amp_cfg_param_t *p = &amp_cfg_params[id];
    int64_t v;
    int bad = amp_cfg_parse(id, text, &v);
    if (bad == 2)
        return amp_err(MPI_ERR_INFO, "%s value \"%s\" of %s is out of range [%lld, %lld]",
                       amp_cfg_src_names[src], text, p->name, (long long)p->min, (long long)p->max);
    if (bad)
        return amp_err(MPI_ERR_INFO, "%s value \"%s\" of %s is not valid: expected %s",
                       amp_cfg_src_names[src], text, p->name, amp_cfg_form(p));
    return amp_cfg_store(cfg, id, text, v, src);
}

void amp_cfg_note(amp_cfg_t *cfg, const char *fmt, ...)
{
    size_t at = strlen(cfg->notes);
    if (at + 4 >= sizeof(cfg->notes))
        return;
    if (at)
        at += (size_t)snprintf(cfg->notes + at, sizeof(cfg->notes) - at, "; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cfg->notes + at, sizeof(cfg->notes) - at, fmt, ap);
    va_end(ap);
}

/* A hint of the application or of a ROMIO_HINTS file. The standard lets an implementation
 * ignore hints, and ROMIO and OMPIO accept values ampio cannot use: such a value of a hint
 * that is not ampio's own is clamped to ampio's range, or ignored when it is not of the
 * hint's form, and noted for AMPIO_EXPLAIN. ampio_ hints, asked of ampio by name, stay
 * strict. */
static int amp_cfg_set_hint(amp_cfg_t *cfg, amp_cfg_id_t id, const char *text, amp_cfg_src_t src)
{
    const amp_cfg_param_t *p = &amp_cfg_params[id];
    if (strncmp(p->name, "ampio_", 6) == 0)
        return amp_cfg_set(cfg, id, text, src);
    int64_t v;
    int bad = amp_cfg_parse(id, text, &v);
    if (bad == 1) {
        amp_cfg_note(cfg, "%s %s=%s ignored: expected %s", amp_cfg_src_names[src], p->name, text,
                     amp_cfg_form(p));
        return MPI_SUCCESS;
    }
    if (bad == 2) {
        int64_t in_range = v < p->min ? p->min : p->max;
        char word[32];
        snprintf(word, sizeof(word), "%lld", (long long)in_range);
        amp_cfg_note(cfg, "%s %s=%s is out of ampio's range [%lld, %lld]: %s used",
                     amp_cfg_src_names[src], p->name, text, (long long)p->min, (long long)p->max,
                     word);
        return amp_cfg_store(cfg, id, word, in_range, src);
    }
    return amp_cfg_store(cfg, id, text, v, src);
}

static int amp_cfg_lookup(const char *name)
{
    for (int i = 0; i < AMP_CFG_COUNT; i++)
        if (strcmp(amp_cfg_params[i].name, name) == 0)
            return i;
    return -1;
}

/* ---- the config file, read once per process ---- */

typedef struct {
    char *key, *value;
    char *mount; /* "key@mount": for files on that file system only, else NULL */
} amp_cfg_kv_t;

static pthread_once_t amp_cfg_file_once = PTHREAD_ONCE_INIT;
static amp_cfg_kv_t *amp_cfg_file_kv;
static size_t amp_cfg_file_n;
static char amp_cfg_file_path[4096];

static char *amp_cfg_trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

int amp_cfg_conf_line(char *line, char **key, char **value)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    char *eq = strchr(line, '=');
    if (!eq)
        return 0;
    *eq = '\0';
    *key = amp_cfg_trim(line);
    *value = amp_cfg_trim(eq + 1);
    return 1;
}

static void amp_cfg_file_read(void)
{
    const char *path = getenv("AMPIO_CONFIG");
    char user[4096];
    FILE *f = NULL;
    if (path && *path) {
        f = fopen(path, "r");
    } else {
        const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
        if (xdg && *xdg)
            snprintf(user, sizeof(user), "%s/ampio/ampio.conf", xdg);
        else if (home && *home)
            snprintf(user, sizeof(user), "%s/.config/ampio/ampio.conf", home);
        else
            user[0] = '\0';
        path = user;
        if (*user)
            f = fopen(user, "r");
        if (!f) {
            path = AMPIO_SYSCONFDIR "/ampio.conf";
            f = fopen(path, "r");
        }
    }
    if (!f)
        return;
    snprintf(amp_cfg_file_path, sizeof(amp_cfg_file_path), "%s", path);
    char line[4096], *key, *value;
    while (fgets(line, sizeof(line), f)) {
        if (!amp_cfg_conf_line(line, &key, &value))
            continue;
        amp_cfg_kv_t *grown = amp_realloc(amp_cfg_file_kv, (amp_cfg_file_n + 1) * sizeof(*grown));
        if (!grown)
            break;
        amp_cfg_file_kv = grown;
        amp_cfg_kv_t *kv = &amp_cfg_file_kv[amp_cfg_file_n++];
        char *at = strchr(key, '@'); /* name@mount: for files on that file system */
        kv->mount = NULL;
        if (at) {
            *at = '\0';
            kv->mount = amp_strdup(amp_cfg_trim(at + 1));
            key = amp_cfg_trim(key);
        }
        kv->key = amp_strdup(key);
        kv->value = amp_strdup(value);
        if (!kv->key || !kv->value || (at && !kv->mount)) {
            /* out of memory: without its mount an entry would apply everywhere, drop it */
            free(kv->key);
            free(kv->value);
            free(kv->mount);
            amp_cfg_file_n--;
        }
    }
    fclose(f);
}

/* ---- the ROMIO_HINTS file, read once per process ----
 * ROMIO's format: "key value" per line, '#' starts a comment line, a line of any other form is
 * skipped, and the first line of a key wins. Keys ampio does not know are ROMIO's own. */

static pthread_once_t amp_cfg_romio_once = PTHREAD_ONCE_INIT;
static char *amp_cfg_romio_value[AMP_CFG_COUNT];

int amp_cfg_romio_line(char *line, char **key, char **value)
{
    char *save = NULL;
    *key = strtok_r(line, " \t\r\n\v\f", &save);
    *value = *key ? strtok_r(NULL, " \t\r\n\v\f", &save) : NULL;
    return *value && **key != '#' && !strtok_r(NULL, " \t\r\n\v\f", &save);
}

static void amp_cfg_romio_read(void)
{
    const char *path = getenv("ROMIO_HINTS");
    FILE *f = path && *path ? fopen(path, "r") : NULL;
    if (!f)
        return;
    char line[4096], *key, *value;
    while (fgets(line, sizeof(line), f)) {
        if (!amp_cfg_romio_line(line, &key, &value))
            continue;
        int id = amp_cfg_lookup(key);
        if (id >= 0 && !amp_cfg_romio_value[id])
            amp_cfg_romio_value[id] = amp_strdup(value); /* NULL when out of memory: ignored */
    }
    fclose(f);
}

/* ---- sources ---- */

static int amp_cfg_apply_info(amp_cfg_t *cfg, MPI_Info info, amp_cfg_src_t src)
{
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    int nkeys = 0;
    PMPI_Info_get_nkeys(info, &nkeys);
    for (int k = 0; k < nkeys; k++) {
        char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        PMPI_Info_get_nthkey(info, k, key);
        PMPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
        int id = amp_cfg_lookup(key);
        if (id < 0 || !flag)
            continue; /* hints of other libraries are not ours to judge */
        int rc = amp_cfg_set_hint(cfg, (amp_cfg_id_t)id, value, src);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* AMPIO_HINTS="key=value;key=value" */
static int amp_cfg_apply_override(amp_cfg_t *cfg)
{
    const char *text = getenv("AMPIO_HINTS");
    if (!text || !*text)
        return MPI_SUCCESS;
    char *copy = amp_strdup(text), *save = NULL;
    if (!copy)
        return amp_err(MPI_ERR_NO_MEM, "out of memory parsing AMPIO_HINTS");
    int rc = MPI_SUCCESS;
    for (char *item = strtok_r(copy, ";", &save); item && rc == MPI_SUCCESS;
         item = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) {
            rc = amp_err(MPI_ERR_INFO, "AMPIO_HINTS item \"%s\" is not key=value", item);
            break;
        }
        *eq = '\0';
        char *key = amp_cfg_trim(item), *value = amp_cfg_trim(eq + 1);
        int id = amp_cfg_lookup(key);
        if (id < 0)
            rc = amp_err(MPI_ERR_INFO, "AMPIO_HINTS names unknown parameter \"%s\"", key);
        else
            rc = amp_cfg_set(cfg, (amp_cfg_id_t)id, value, AMP_CFG_SRC_OVERRIDE);
    }
    free(copy);
    return rc;
}

static void amp_cfg_env_name(const char *name, char *out, size_t size)
{
    size_t n = (size_t)snprintf(out, size, "AMPIO_");
    /* ampio_foo is AMPIO_FOO, not AMPIO_AMPIO_FOO */
    if (strncmp(name, "ampio_", 6) == 0)
        name += 6;
    for (; *name && n + 1 < size; name++)
        out[n++] = (char)toupper((unsigned char)*name);
    out[n] = '\0';
}

int amp_cfg_load(amp_cfg_t *cfg, MPI_Info hints)
{
    return amp_cfg_load_for(cfg, hints, NULL);
}

/* The mount point of `path` when some config file key needs it, else "". */
static void amp_cfg_mount(const char *path, char *mount, size_t len)
{
    mount[0] = '\0';
    for (size_t k = 0; path && k < amp_cfg_file_n; k++)
        if (amp_cfg_file_kv[k].mount) {
            if (amp_mount_of(path, mount, len, NULL, 0) != 0)
                mount[0] = '\0';
            return;
        }
}

int amp_cfg_load_for(amp_cfg_t *cfg, MPI_Info hints, const char *path)
{
    memset(cfg, 0, sizeof(*cfg));
    pthread_once(&amp_cfg_file_once, amp_cfg_file_read);
    pthread_once(&amp_cfg_romio_once, amp_cfg_romio_read);
    char mount[4096];
    amp_cfg_mount(path, mount, sizeof(mount));
    /* a misspelt key in the config file must not go unnoticed */
    for (size_t k = 0; k < amp_cfg_file_n; k++)
        if (amp_cfg_file_kv[k].key && amp_cfg_lookup(amp_cfg_file_kv[k].key) < 0)
            return amp_err(MPI_ERR_INFO, "the config file %s names unknown parameter \"%s\"",
                           amp_cfg_file_path, amp_cfg_file_kv[k].key);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < AMP_CFG_COUNT && rc == MPI_SUCCESS; i++) {
        const amp_cfg_param_t *p = &amp_cfg_params[i];
        rc = amp_cfg_set(cfg, (amp_cfg_id_t)i, p->def, AMP_CFG_SRC_DEFAULT);
        for (int fs = 0; fs < 2; fs++) /* then the values for this file system */
            for (size_t k = 0; k < amp_cfg_file_n && rc == MPI_SUCCESS; k++) {
                const amp_cfg_kv_t *kv = &amp_cfg_file_kv[k];
                if (!kv->key || strcmp(kv->key, p->name) != 0 || !kv->mount != !fs ||
                    (fs && strcmp(kv->mount, mount) != 0))
                    continue;
                rc = amp_cfg_set(cfg, (amp_cfg_id_t)i, kv->value,
                                 fs ? AMP_CFG_SRC_FILE_FS : AMP_CFG_SRC_FILE);
            }
        if (amp_cfg_romio_value[i] && rc == MPI_SUCCESS)
            rc = amp_cfg_set_hint(cfg, (amp_cfg_id_t)i, amp_cfg_romio_value[i],
                                  AMP_CFG_SRC_ROMIO_HINTS);
        char env[128];
        amp_cfg_env_name(p->name, env, sizeof(env));
        const char *value = getenv(env);
        if (value && *value && rc == MPI_SUCCESS)
            rc = amp_cfg_set(cfg, (amp_cfg_id_t)i, value, AMP_CFG_SRC_ENV);
    }
    if (rc == MPI_SUCCESS)
        rc = amp_cfg_update(cfg, hints);
    if (rc != MPI_SUCCESS)
        amp_cfg_free(cfg);
    return rc;
}

int amp_cfg_update(amp_cfg_t *cfg, MPI_Info hints)
{
    int rc = amp_cfg_apply_info(cfg, hints, AMP_CFG_SRC_HINT);
    if (rc == MPI_SUCCESS)
        rc = amp_cfg_apply_override(cfg);
    return rc;
}

void amp_cfg_free(amp_cfg_t *cfg)
{
    for (int i = 0; i < AMP_CFG_COUNT; i++) {
        free(cfg->str[i]);
        cfg->str[i] = NULL;
    }
}

int amp_cfg_copy(amp_cfg_t *dst, const amp_cfg_t *src)
{
    *dst = *src;
    for (int i = 0; i < AMP_CFG_COUNT; i++)
        dst->str[i] = NULL;
    for (int i = 0; i < AMP_CFG_COUNT; i++) {
        if (src->str[i] && !(dst->str[i] = amp_strdup(src->str[i]))) {
            amp_cfg_free(dst);
            return amp_err(MPI_ERR_NO_MEM, "out of memory copying the configuration");
        }
    }
    return MPI_SUCCESS;
}

uint64_t amp_cfg_coll_hash(const amp_cfg_t *cfg)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (int i = 0; i < AMP_CFG_COUNT; i++) {
        if (!amp_cfg_params[i].collective)
            continue;
        const unsigned char *s = (const unsigned char *)(cfg->str[i] ? cfg->str[i] : "");
        if (amp_cfg_params[i].type != AMP_CFG_STRING) {
            /* compare parsed values so that "16M" and "16777216" agree */
            for (int b = 0; b < 8; b++)
                h = (h ^ (uint8_t)(cfg->num[i] >> (8 * b))) * 1099511628211ULL;
        } else {
            for (; *s; s++)
                h = (h ^ *s) * 1099511628211ULL;
        }
        h = (h ^ 0xff) * 1099511628211ULL;
    }
    return h;
}

int amp_cfg_to_info(const amp_cfg_t *cfg, MPI_Info info)
{
    for (int i = 0; i < AMP_CFG_COUNT; i++) {
        char text[64];
        const char *value = cfg->str[i] ? cfg->str[i] : "";
        if (amp_cfg_params[i].type == AMP_CFG_SIZE || amp_cfg_params[i].type == AMP_CFG_INT) {
            snprintf(text, sizeof(text), i == AMP_CFG_FILE_PERM ? "0%llo" : "%lld",
                     (long long)cfg->num[i]);
            value = text;
        } else if (amp_cfg_params[i].type == AMP_CFG_BOOL) {
            value = cfg->num[i] ? "true" : "false";
        } else if (amp_cfg_params[i].type == AMP_CFG_ENUM) {
            value = amp_cfg_word(cfg, (amp_cfg_id_t)i);
        }
        if (*value == '\0')
            continue; /* MPI_Info values may not be empty */
        int rc = PMPI_Info_set(info, amp_cfg_params[i].name, value);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

const char *amp_cfg_word(const amp_cfg_t *cfg, amp_cfg_id_t id)
{
    static __thread char word[64];
    const char *p = amp_cfg_params[id].choices;
    if (!p)
        return cfg->str[id];
    for (int64_t index = 0; *p; index++) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (index == cfg->num[id]) {
            snprintf(word, sizeof(word), "%.*s", (int)n, p);
            return word;
        }
        p += n + (comma != NULL);
    }
    return cfg->str[id];
}

void amp_cfg_print(const amp_cfg_t *cfg, FILE *out)
{
    fprintf(out, "%-24s %-14s %-12s %s\n", "parameter", "value", "source", "meaning");
    for (int i = 0; i < AMP_CFG_COUNT; i++) {
        const char *value = cfg->str[i] && *cfg->str[i] ? cfg->str[i] : "(none)";
        fprintf(out, "%-24s %-14s %-12s %s\n", amp_cfg_params[i].name, value,
                amp_cfg_src_names[cfg->src[i]], amp_cfg_params[i].doc);
    }
    if (cfg->notes[0])
        fprintf(out, "hints not used as given: %s\n", cfg->notes);
    if (amp_cfg_file_path[0])
        fprintf(out, "config file: %s\n", amp_cfg_file_path);
    else
        fprintf(out,
                "config file: none (AMPIO_CONFIG, ~/.config/ampio/ampio.conf, "
                "%s/ampio.conf)\n",
                AMPIO_SYSCONFDIR);
}

const char *amp_cfg_source(const amp_cfg_t *cfg, amp_cfg_id_t id)
{
    return amp_cfg_src_names[cfg->src[id]];
}

void amp_cfg_explain_notes(amp_cfg_t *cfg, int rank, const char *path)
{
    if (cfg->notes[0] && rank == 0 && amp_cfg_num(cfg, AMP_CFG_AMPIO_EXPLAIN))
        fprintf(stderr, "ampio explain: hints of \"%s\": %s\n", path, cfg->notes);
    cfg->notes[0] = '\0';
}
