#include "io/datarep.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"

#define AMP_DATAREP_MAX 32

static amp_datarep_t amp_datarep_external32 = {.name = "external32", .external32 = 1};
static amp_datarep_t amp_datarep_user[AMP_DATAREP_MAX];
static int amp_datarep_nuser;
static pthread_mutex_t amp_datarep_lock = PTHREAD_MUTEX_INITIALIZER;

int amp_datarep_find(const char *name, const amp_datarep_t **rep)
{
    *rep = NULL;
    if (!name)
        return amp_err(MPI_ERR_ARG, "the data representation name is NULL");
    if (strcmp(name, "native") == 0 || strcmp(name, "internal") == 0)
        return MPI_SUCCESS;
    if (strcmp(name, "external32") == 0) {
        *rep = &amp_datarep_external32;
        return MPI_SUCCESS;
    }
    pthread_mutex_lock(&amp_datarep_lock);
    for (int i = 0; i < amp_datarep_nuser; i++)
        if (strcmp(amp_datarep_user[i].name, name) == 0)
            *rep = &amp_datarep_user[i];
    pthread_mutex_unlock(&amp_datarep_lock);
    if (*rep)
        return MPI_SUCCESS;
    return amp_err(MPI_ERR_UNSUPPORTED_DATAREP,
                   "data representation \"%s\" is not known: use \"native\", \"internal\", "
                   "\"external32\" or register it with MPI_Register_datarep",
                   name);
}

int amp_datarep_register(const char *name, const amp_datarep_fns_t *fns,
                         MPI_Datarep_extent_function *extent_fn, void *extra)
{
    if (!name || !*name || strlen(name) > MPI_MAX_DATAREP_STRING)
        return amp_err(MPI_ERR_ARG, "data representation name is empty or longer than %d",
                       MPI_MAX_DATAREP_STRING);
    if (!extent_fn)
        return amp_err(MPI_ERR_ARG, "data representation \"%s\" has no extent function", name);
    const amp_datarep_t *existing;
    if (strcmp(name, "native") == 0 || strcmp(name, "internal") == 0 ||
        strcmp(name, "external32") == 0 ||
        (amp_datarep_find(name, &existing) == MPI_SUCCESS && existing))
        return amp_err(MPI_ERR_DUP_DATAREP, "data representation \"%s\" is already defined", name);
    pthread_mutex_lock(&amp_datarep_lock);
    if (amp_datarep_nuser == AMP_DATAREP_MAX) {
        pthread_mutex_unlock(&amp_datarep_lock);
        return amp_err(MPI_ERR_NO_MEM, "no room for data representation \"%s\" (at most %d)", name,
                       AMP_DATAREP_MAX);
    }
    amp_datarep_t *rep = &amp_datarep_user[amp_datarep_nuser];
    memset(rep, 0, sizeof(*rep));
    snprintf(rep->name, sizeof(rep->name), "%s", name);
    rep->read_fn = fns->read_fn;
    rep->write_fn = fns->write_fn;
#if MPI_VERSION >= 4
    rep->read_fn_c = fns->read_fn_c;
    rep->write_fn_c = fns->write_fn_c;
#endif
    rep->extent_fn = extent_fn;
    rep->extra = extra;
    amp_datarep_nuser++;
    pthread_mutex_unlock(&amp_datarep_lock);
    return MPI_SUCCESS;
}

/* ---- sizes ---- */

/* external32 bytes of the data of one instance, from its typed runs. */
static int amp_ext32_size(MPI_Datatype type, amp_dt_t *dt, MPI_Count *size, int *same_sizes)
{
    int rc = amp_dt_runs(dt, type);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Count total = 0;
    *same_sizes = 1;
    for (size_t i = 0; i < dt->runs.n; i++) {
        amp_kind_t k = dt->runs.kind[i];
        if (k == AMP_KIND_UNKNOWN)
            return amp_err(MPI_ERR_UNSUPPORTED_DATAREP,
                           "a predefined type in this datatype has no known external32 form");
        total += dt->runs.v[i].len / AMP_KIND_NSIZE(k) * AMP_KIND_FSIZE(k);
        if (AMP_KIND_NSIZE(k) != AMP_KIND_FSIZE(k))
            *same_sizes = 0;
    }
    *size = total;
    return MPI_SUCCESS;
}

int amp_datarep_size(const amp_datarep_t *rep, MPI_Datatype type, amp_dt_t *native, MPI_Count *size)
{
    if (!amp_datarep_converts(rep)) {
        *size = native->size;
        return MPI_SUCCESS;
    }
    if (rep->external32) {
        int same;
        return amp_ext32_size(type, native, size, &same);
    }
    MPI_Aint extent = 0;
    int rc = rep->extent_fn(type, &extent, rep->extra);
    if (rc != MPI_SUCCESS)
        return rc;
    *size = extent;
    return MPI_SUCCESS;
}

int amp_datarep_extent(const amp_datarep_t *rep, MPI_Datatype type, MPI_Count *extent)
{
    amp_dt_t *dt;
    int rc = amp_dt_get(type, &dt);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!rep) {
        *extent = dt->extent;
    } else if (rep->external32) {
        int same;
        rc = amp_ext32_size(type, dt, extent, &same);
        if (rc == MPI_SUCCESS && same)
            *extent = dt->extent;
    } else {
        MPI_Aint file_extent = 0;
        rc = rep->extent_fn(type, &file_extent, rep->extra);
        *extent = file_extent;
    }
    amp_dt_release(dt);
    return rc;
}

int amp_datarep_converts(const amp_datarep_t *rep)
{
    if (!rep)
        return 0;
    if (rep->external32 || rep->read_fn || rep->write_fn)
        return 1;
#if MPI_VERSION >= 4
    if (rep->read_fn_c || rep->write_fn_c)
        return 1;
#endif
    return 0; /* MPI_CONVERSION_FN_NULL: accesses use the native representation */
}

int amp_datarep_layout(const amp_datarep_t *rep, MPI_Datatype type, amp_dt_t *native,
                       amp_dt_t **file)
{
    if (!amp_datarep_converts(rep)) {
        atomic_fetch_add(&native->refs, 1);
        *file = native;
        return MPI_SUCCESS;
    }
    MPI_Count size;
    int same = 0, rc;
    if (rep->external32)
        rc = amp_ext32_size(type, native, &size, &same);
    else
        rc = amp_datarep_size(rep, type, native, &size);
    if (rc != MPI_SUCCESS)
        return rc;
    if (same) {
        atomic_fetch_add(&native->refs, 1);
        *file = native;
        return MPI_SUCCESS;
    }
    /* Sizes change: only a dense filetype has an unambiguous layout, a packed stream. */
    if (!native->contiguous)
        return amp_err(MPI_ERR_UNSUPPORTED_DATAREP,
                       "a filetype with holes whose elements change size in data "
                       "representation \"%s\" is not supported",
                       rep->name);
    return amp_dt_contiguous(size, file);
}

/* ---- external32 element conversion ---- */

static void amp_store_be(unsigned char *out, uint64_t v, int size)
{
    for (int i = size - 1; i >= 0; i--, v >>= 8)
        out[i] = (unsigned char)v;
}

static uint64_t amp_load_be(const unsigned char *in, int size)
{
    uint64_t v = 0;
    for (int i = 0; i < size; i++)
        v = v << 8 | in[i];
    return v;
}

static uint64_t amp_load_le(const unsigned char *in, int size)
{
    uint64_t v = 0;
    for (int i = size - 1; i >= 0; i--)
        v = v << 8 | in[i];
    return v;
}

static void amp_store_le(unsigned char *out, uint64_t v, int size)
{
    for (int i = 0; i < size; i++, v >>= 8)
        out[i] = (unsigned char)v;
}

/* Sign- or zero-extends the low `size` bytes. */
static uint64_t amp_extend(uint64_t v, int size, int is_signed)
{
    if (size >= 8)
        return v;
    uint64_t mask = (1ULL << (8 * size)) - 1;
    v &= mask;
    if (is_signed && (v >> (8 * size - 1)) & 1)
        v |= ~mask;
    return v;
}

/* x87 80-bit extended (little-endian, explicit integer bit) <-> IEEE binary128 big-endian. */
static void amp_ldouble_encode(const unsigned char *in, unsigned char *out)
{
    uint64_t mant = amp_load_le(in, 8);
    uint64_t se = amp_load_le(in + 8, 2);
    uint64_t frac63 = mant & ((1ULL << 63) - 1);
    uint64_t hi = se << 48 | frac63 >> 15;
    uint64_t lo = frac63 << 49;
    amp_store_be(out, hi, 8);
    amp_store_be(out + 8, lo, 8);
}

static void amp_ldouble_decode(const unsigned char *in, unsigned char *out)
{
    uint64_t hi = amp_load_be(in, 8), lo = amp_load_be(in + 8, 8);
    uint64_t se = hi >> 48;
    uint64_t frac63 = (hi & ((1ULL << 48) - 1)) << 15 | lo >> 49;
    uint64_t explicit_bit = (se & 0x7fff) != 0 ? 1ULL << 63 : 0;
    memset(out, 0, 16);
    amp_store_le(out, frac63 | explicit_bit, 8);
    amp_store_le(out + 8, se, 2);
}

static int amp_convert_elem(amp_kind_t k, const unsigned char *in, unsigned char *out, int encode)
{
    int cls = AMP_KIND_CLASS(k), ns = AMP_KIND_NSIZE(k), fs = AMP_KIND_FSIZE(k);
    switch (cls) {
    case AMP_KIND_RAW:
        memcpy(out, in, (size_t)ns);
        return MPI_SUCCESS;
    case AMP_KIND_FLOAT:
        for (int i = 0; i < ns; i++)
            out[i] = in[ns - 1 - i];
        return MPI_SUCCESS;
    case AMP_KIND_LDOUBLE:
        if (ns != 16)
            return amp_err(MPI_ERR_CONVERSION, "long double of %d bytes has no external32 form",
                           ns);
        if (encode)
            amp_ldouble_encode(in, out);
        else
            amp_ldouble_decode(in, out);
        return MPI_SUCCESS;
    default: {
        int is_signed = cls == AMP_KIND_INT;
        int from = encode ? ns : fs, to = encode ? fs : ns;
        uint64_t v = encode ? amp_load_le(in, ns) : amp_load_be(in, fs);
        uint64_t wide = amp_extend(v, from, is_signed);
        if (to < from && amp_extend(wide, to, is_signed) != wide)
            return amp_err(
                MPI_ERR_CONVERSION, "%s value does not fit in the %d bytes of its %s form",
                is_signed ? "integer" : "unsigned", to, encode ? "external32" : "native");
        if (encode)
            amp_store_be(out, wide, to);
        else
            amp_store_le(out, wide, to);
        return MPI_SUCCESS;
    }
    }
}

/* Walks the typed runs of `count` items, converting element by element to or from the packed
 * stream. Decoding stops after `limit` stream bytes (whole elements only). */
static int amp_ext32_walk(void *buf, MPI_Datatype type, amp_dt_t *dt, MPI_Count count,
                          unsigned char *stream, MPI_Count limit, int encode)
{
    int rc = amp_dt_runs(dt, type);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Count pos = 0;
    for (MPI_Count i = 0; i < count; i++) {
        for (size_t r = 0; r < dt->runs.n; r++) {
            amp_kind_t k = dt->runs.kind[r];
            int ns = AMP_KIND_NSIZE(k), fs = AMP_KIND_FSIZE(k);
            if (k == AMP_KIND_UNKNOWN)
                return amp_err(MPI_ERR_UNSUPPORTED_DATAREP,
                               "a predefined type in this datatype has no known external32 form");
            unsigned char *mem =
                (unsigned char *)buf + dt->runs.v[r].off + (MPI_Aint)(i * dt->extent);
            MPI_Count n = dt->runs.v[r].len / ns;
            for (MPI_Count e = 0; e < n; e++) {
                if (pos + fs > limit)
                    return MPI_SUCCESS;
                rc = amp_convert_elem(k, encode ? mem + e * ns : stream + pos,
                                      encode ? stream + pos : mem + e * ns, encode);
                if (rc != MPI_SUCCESS)
                    return rc;
                pos += fs;
            }
        }
    }
    return MPI_SUCCESS;
}

int amp_datarep_encode(const amp_datarep_t *rep, const void *buf, MPI_Datatype type, amp_dt_t *dt,
                       MPI_Count count, void *stream)
{
    if (rep->external32)
        return amp_ext32_walk((void *)buf, type, dt, count, stream, INT64_MAX, 1);
#if MPI_VERSION >= 4
    if (rep->write_fn_c)
        return rep->write_fn_c((void *)buf, type, count, stream, 0, rep->extra);
#endif
    if (!rep->write_fn)
        return amp_err(MPI_ERR_CONVERSION,
                       "data representation \"%s\" has no write conversion function", rep->name);
    if (count > INT32_MAX)
        return amp_err(MPI_ERR_COUNT,
                       "%lld items exceed what the conversion function of \"%s\" "
                       "can take",
                       (long long)count, rep->name);
    return rep->write_fn((void *)buf, type, (int)count, stream, 0, rep->extra);
}

int amp_datarep_decode(const amp_datarep_t *rep, void *buf, MPI_Datatype type, amp_dt_t *dt,
                       MPI_Count count, const void *stream, MPI_Count stream_bytes)
{
    if (rep->external32)
        return amp_ext32_walk(buf, type, dt, count, (unsigned char *)stream, stream_bytes, 0);
    MPI_Count item = 0;
    int rc = amp_datarep_size(rep, type, dt, &item);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Count whole = item > 0 ? stream_bytes / item : 0;
    if (whole < count)
        count = whole;
    if (count == 0)
        return MPI_SUCCESS;
#if MPI_VERSION >= 4
    if (rep->read_fn_c)
        return rep->read_fn_c(buf, type, count, (void *)stream, 0, rep->extra);
#endif
    if (!rep->read_fn)
        return amp_err(MPI_ERR_CONVERSION,
                       "data representation \"%s\" has no read conversion function", rep->name);
    if (count > INT32_MAX)
        return amp_err(MPI_ERR_COUNT,
                       "%lld items exceed what the conversion function of \"%s\" "
                       "can take",
                       (long long)count, rep->name);
    return rep->read_fn(buf, type, (int)count, (void *)stream, 0, rep->extra);
}
