/* Fuzzes the hint and configuration parsers (core/cfg.c) against a model written here from
 * the rules cfg.h states: the application's hints (lenient for other libraries' keys, strict
 * for ampio_ keys), AMPIO_HINTS (strict), sizes with units, config file and ROMIO_HINTS lines.
 *
 * The first byte chooses what is fuzzed: 0 hints and AMPIO_HINTS, 1 a size, 2 a config file
 * line and a ROMIO_HINTS line. */
#include <ctype.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "core/cfg.h"
#include "fuzz.h"

/* The parameter table, read independently of cfg.c (the data, not the parsing). */
typedef struct {
    const char *name;
    char type; /* B(ool) I(nt) S(ize) E(num) T(ext) */
    const char *def;
    int64_t min, max;
    const char *choices;
} model_param_t;

#define BOOL   'B'
#define INT    'I'
#define SIZE   'S'
#define ENUM   'E'
#define STRING 'T'
static const model_param_t params[AMP_CFG_COUNT] = {
#define ROW(id, name, type, def, min, max, choices, scope, doc)                                    \
    [AMP_CFG_##id] = {name, type, def, min, max, choices},
    AMP_CFG_PARAMS(ROW)
#undef ROW
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    /* only the hints of each input: no config file, no ROMIO_HINTS, no AMPIO_* variables */
    setenv("AMPIO_CONFIG", "/nonexistent/ampio-fuzz.conf", 1);
    unsetenv("ROMIO_HINTS");
    unsetenv("AMPIO_HINTS");
    for (int i = 0; i < AMP_CFG_COUNT; i++) {
        char env[128] = "AMPIO_";
        const char *n = params[i].name;
        if (strncmp(n, "ampio_", 6) == 0)
            n += 6;
        size_t k = strlen(env);
        for (; *n && k + 1 < sizeof(env); n++)
            env[k++] = (char)toupper((unsigned char)*n);
        env[k] = '\0';
        unsetenv(env);
    }
    fuzz_mpi_init(argc, argv);
    return 0;
}

/* ---- the model ---- */

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* [space][+|-]digits[space][k|m|g|t][i][b], any case; no negative value; no overflow. */
static int model_size(const char *s, int64_t *out)
{
    while (is_space(*s))
        s++;
    int neg = 0;
    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    if (!isdigit((unsigned char)*s))
        return -1;
    uint64_t v = 0;
    int overflow = 0;
    for (; isdigit((unsigned char)*s); s++) {
        if (v > (UINT64_MAX - 9) / 10)
            overflow = 1;
        else
            v = v * 10 + (uint64_t)(*s - '0');
    }
    if (overflow || v > (uint64_t)INT64_MAX + neg || (neg && v != 0))
        return -1;
    while (is_space(*s))
        s++;
    static const char *units[] = {"",    "b", "k",  "kb",  "kib", "m",  "mb",
                                  "mib", "g", "gb", "gib", "t",   "tb", "tib"};
    static const int shift[] = {0, 0, 10, 10, 10, 20, 20, 20, 30, 30, 30, 40, 40, 40};
    for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++)
        if (strcasecmp(s, units[u]) == 0) {
            if (v > (uint64_t)INT64_MAX >> shift[u])
                return -1;
            *out = (int64_t)(v << shift[u]);
            return 0;
        }
    return -1;
}

/* 0 valid (value in *v), 1 not of the form, 2 out of range (*v the value read) */
static int model_parse(int id, const char *text, int64_t *v)
{
    const model_param_t *p = &params[id];
    *v = 0;
    switch (p->type) {
    case BOOL: {
        static const char *yes[] = {"true", "1", "yes", "on", "enable", "enabled"};
        static const char *no[] = {"false", "0", "no", "off", "disable", "disabled"};
        for (int i = 0; i < 6; i++) {
            if (strcasecmp(text, yes[i]) == 0)
                return *v = 1, 0;
            if (strcasecmp(text, no[i]) == 0)
                return *v = 0, 0;
        }
        return 1;
    }
    case INT: {
        /* decimal, octal for the permission bits: an independent digit loop */
        int base = id == AMP_CFG_FILE_PERM ? 8 : 10;
        const char *s = text;
        while (is_space(*s))
            s++;
        int neg = 0;
        if (*s == '+' || *s == '-')
            neg = *s++ == '-';
        if (!(*s >= '0' && *s < '0' + base))
            return 1;
        uint64_t u = 0;
        for (; *s >= '0' && *s < '0' + base; s++) {
            if (u > (UINT64_MAX - 9) / (uint64_t)base)
                return 1;
            u = u * (uint64_t)base + (uint64_t)(*s - '0');
        }
        if (*s != '\0' || u > (uint64_t)INT64_MAX + neg)
            return 1;
        *v = neg ? (int64_t)(0 - u) : (int64_t)u;
        break;
    }
    case SIZE:
        if (model_size(text, v) != 0)
            return 1;
        break;
    case ENUM: {
        int64_t index = 0;
        for (const char *c = p->choices; *c; index++) {
            size_t n = strcspn(c, ",");
            if (strlen(text) == n && strncasecmp(c, text, n) == 0)
                return *v = index, 0;
            c += n + (c[n] == ',');
        }
        return 1;
    }
    default:
        return 0;
    }
    int chosen = p->type == SIZE && *v == 0 && strcmp(p->def, "0") == 0;
    if (!chosen && (*v < p->min || *v > p->max))
        return 2;
    return 0;
}

typedef struct {
    int64_t num[AMP_CFG_COUNT];
    char str[AMP_CFG_COUNT][MPI_MAX_INFO_VAL + 1];
    int error;
} model_cfg_t;

static void model_set(model_cfg_t *m, int id, const char *text, int64_t v)
{
    m->num[id] = v;
    snprintf(m->str[id], sizeof(m->str[id]), "%s", text);
}

/* A hint: strict for ampio_ keys, else ignored when malformed and clamped when out of range. */
static void model_hint(model_cfg_t *m, int id, const char *text)
{
    int64_t v;
    int bad = model_parse(id, text, &v);
    if (bad && strncmp(params[id].name, "ampio_", 6) == 0) {
        m->error = 1;
    } else if (bad == 2) {
        int64_t c = v < params[id].min ? params[id].min : params[id].max;
        char word[32];
        snprintf(word, sizeof(word), "%lld", (long long)c);
        model_set(m, id, word, c);
    } else if (!bad) {
        model_set(m, id, text, v);
    }
}

static int model_lookup(const char *key)
{
    for (int i = 0; i < AMP_CFG_COUNT; i++)
        if (strcmp(params[i].name, key) == 0)
            return i;
    return -1;
}

static void model_trim(char *s)
{
    size_t a = 0, n = strlen(s);
    while (a < n && is_space(s[a]))
        a++;
    while (n > a && is_space(s[n - 1]))
        n--;
    memmove(s, s + a, n - a);
    s[n - a] = '\0';
}

/* AMPIO_HINTS: "key=value" items between ';', every one strict. */
static void model_override(model_cfg_t *m, const char *text)
{
    char item[512];
    while (*text && !m->error) {
        size_t n = strcspn(text, ";");
        if (n > 0) {
            snprintf(item, sizeof(item), "%.*s", (int)n, text);
            char *eq = strchr(item, '=');
            if (!eq) {
                m->error = 1;
                break;
            }
            *eq = '\0';
            char *value = eq + 1;
            model_trim(item);
            model_trim(value);
            int id = model_lookup(item);
            int64_t v;
            if (id < 0 || model_parse(id, value, &v) != 0)
                m->error = 1;
            else
                model_set(m, id, value, v);
        }
        text += n + (text[n] == ';');
    }
}

/* ---- the input ---- */

/* A string of up to `max` bytes; NUL, which C strings cannot hold, becomes a space. */
static void read_text(fuzz_in_t *in, char *out, size_t max)
{
    size_t n = (size_t)fuzz_range(in, 0, (long)max);
    for (size_t i = 0; i < n; i++) {
        char c = (char)fuzz_byte(in);
        out[i] = c ? c : ' ';
    }
    out[n] = '\0';
}

static void check_load(const amp_cfg_t *cfg, int rc, const model_cfg_t *m, const char *what)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    FUZZ_CHECK(m->error ? cls == MPI_ERR_INFO : rc == MPI_SUCCESS, "%s: rc class %d, model %s",
               what, cls, m->error ? "MPI_ERR_INFO" : "success");
    if (rc != MPI_SUCCESS)
        return;
    for (int i = 0; i < AMP_CFG_COUNT; i++) {
        FUZZ_CHECK(cfg->num[i] == m->num[i], "%s: %s = %lld (\"%s\"), model %lld (\"%s\")", what,
                   params[i].name, (long long)cfg->num[i], cfg->str[i] ? cfg->str[i] : "",
                   (long long)m->num[i], m->str[i]);
        if (params[i].type == STRING)
            FUZZ_CHECK(cfg->str[i] && strcmp(cfg->str[i], m->str[i]) == 0,
                       "%s: %s = \"%s\", model \"%s\"", what, params[i].name,
                       cfg->str[i] ? cfg->str[i] : "(null)", m->str[i]);
    }
}

static void fuzz_hints(fuzz_in_t *in)
{
    model_cfg_t m;
    memset(&m, 0, sizeof(m));
    for (int i = 0; i < AMP_CFG_COUNT; i++) {
        int64_t v;
        FUZZ_CHECK(model_parse(i, params[i].def, &v) == 0, "default of %s", params[i].name);
        model_set(&m, i, params[i].def, v);
    }
    MPI_Info info;
    MPI_Info_create(&info);
    char override[1024] = "", key[64], value[MPI_MAX_INFO_VAL + 1];
    int records = (int)fuzz_range(in, 0, 12);
    for (int r = 0; r < records; r++) {
        unsigned sel = fuzz_byte(in);
        read_text(in, value, 40);
        if (sel == 255) { /* an item of AMPIO_HINTS */
            size_t at = strlen(override);
            snprintf(override + at, sizeof(override) - at, "%s%s", at ? ";" : "", value);
            continue;
        }
        if (value[0] == '\0')
            continue; /* MPI_Info values may not be empty */
        if (sel % (AMP_CFG_COUNT + 4) < AMP_CFG_COUNT)
            snprintf(key, sizeof(key), "%s", params[sel % (AMP_CFG_COUNT + 4)].name);
        else
            snprintf(key, sizeof(key), "other_library_key_%u", sel % 4);
        MPI_Info_set(info, key, value);
    }
    /* the model reads back what the info holds, as ampio does */
    int nkeys = 0;
    MPI_Info_get_nkeys(info, &nkeys);
    for (int k = 0; k < nkeys; k++) {
        int flag = 0;
        MPI_Info_get_nthkey(info, k, key);
        MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
        int id = model_lookup(key);
        if (flag && id >= 0)
            model_hint(&m, id, value);
    }
    if (override[0]) {
        setenv("AMPIO_HINTS", override, 1);
        if (!m.error)
            model_override(&m, override);
    }

    amp_cfg_t cfg;
    int rc = amp_cfg_load(&cfg, info);
    check_load(&cfg, rc, &m, "load");
    if (rc == MPI_SUCCESS) {
        /* what ampio reports as hints must load back into the same values */
        MPI_Info back;
        MPI_Info_create(&back);
        FUZZ_CHECK(amp_cfg_to_info(&cfg, back) == MPI_SUCCESS, "to_info");
        amp_cfg_t again;
        rc = amp_cfg_load(&again, back);
        FUZZ_CHECK(rc == MPI_SUCCESS, "reloading the reported hints fails");
        for (int i = 0; i < AMP_CFG_COUNT; i++)
            FUZZ_CHECK(again.num[i] == cfg.num[i], "%s: %lld reported, %lld loaded back",
                       params[i].name, (long long)cfg.num[i], (long long)again.num[i]);
        FUZZ_CHECK(amp_cfg_coll_hash(&again) == amp_cfg_coll_hash(&cfg), "hash of reloaded");
        amp_cfg_free(&again);
        MPI_Info_free(&back);
        amp_cfg_free(&cfg);
    }
    unsetenv("AMPIO_HINTS");
    MPI_Info_free(&info);
}

static void fuzz_size(fuzz_in_t *in)
{
    char text[64];
    read_text(in, text, 40);
    int64_t got = -1, want = -1;
    int rc = amp_cfg_parse_size(text, &got), mrc = model_size(text, &want);
    FUZZ_CHECK((rc == 0) == (mrc == 0), "\"%s\": parse %d, model %d", text, rc, mrc);
    if (rc == 0)
        FUZZ_CHECK(got == want, "\"%s\": %lld, model %lld", text, (long long)got, (long long)want);
}

static int model_space_run(const char *s, const char *e)
{
    return e > s && (is_space(*s) || is_space(e[-1]));
}

static void fuzz_lines(fuzz_in_t *in)
{
    char line[256], copy[256], *key, *value;
    read_text(in, line, 200);

    /* config file: '#' starts a comment, the first '=' splits, both sides trimmed */
    snprintf(copy, sizeof(copy), "%s", line);
    int got = amp_cfg_conf_line(copy, &key, &value);
    size_t data = strcspn(line, "#");
    const char *eq = memchr(line, '=', data);
    FUZZ_CHECK(got == (eq != NULL), "conf \"%s\": %d", line, got);
    if (got) {
        char k[256], v[256];
        snprintf(k, sizeof(k), "%.*s", (int)(eq - line), line);
        snprintf(v, sizeof(v), "%.*s", (int)(data - (size_t)(eq + 1 - line)), eq + 1);
        model_trim(k);
        model_trim(v);
        FUZZ_CHECK(strcmp(key, k) == 0 && strcmp(value, v) == 0,
                   "conf \"%s\": [%s]=[%s], model [%s]=[%s]", line, key, value, k, v);
        FUZZ_CHECK(!model_space_run(key, key + strlen(key)), "key not trimmed");
    }

    /* ROMIO_HINTS: exactly two words, the first not a comment */
    snprintf(copy, sizeof(copy), "%s", line);
    got = amp_cfg_romio_line(copy, &key, &value);
    char words[3][256];
    int n = 0;
    for (const char *s = line; *s && n < 3;) {
        while (*s && is_space(*s))
            s++;
        size_t len = 0;
        while (s[len] && !is_space(s[len]))
            len++;
        if (len)
            snprintf(words[n++], sizeof(words[0]), "%.*s", (int)len, s);
        s += len;
    }
    int want = n == 2 && words[0][0] != '#';
    FUZZ_CHECK(got == want, "romio \"%s\": %d, model %d", line, got, want);
    if (got)
        FUZZ_CHECK(strcmp(key, words[0]) == 0 && strcmp(value, words[1]) == 0,
                   "romio \"%s\": [%s] [%s]", line, key, value);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in_t in = {data, size};
    switch (fuzz_byte(&in) % 3) {
    case 0:
        fuzz_hints(&in);
        break;
    case 1:
        fuzz_size(&in);
        break;
    default:
        fuzz_lines(&in);
    }
    return 0;
}
