/* Fuzzes the external32 converters (io/datarep.c) against a model written here from the
 * standard's table of external32 sizes (MPI-4.0 section 14.5.2): big-endian integers (long and
 * unsigned long in 4 bytes, wchar in 2), IEEE floats byte-reversed, long double as binary128.
 * A struct of random fields, gaps and instances is filled with random bytes; encoding must
 * give the model's stream, or MPI_ERR_CONVERSION exactly when some integer does not fit;
 * decoding the model's stream, whole or cut anywhere, must store the model's values in the
 * whole elements read and leave every other byte alone. */
#include <string.h>
#include <wchar.h>

#include "fuzz.h"
#include "io/datarep.h"

enum { RAW, SINT, UINT, FLT, LDBL };

typedef struct {
    MPI_Datatype type;
    int cls, nsize, fsize, elems;
    int align;
} model_type_t;

#define T(t, cls, c, fsize, elems)                                                                 \
    {                                                                                              \
        t, cls, sizeof(c), fsize, elems, _Alignof(c)                                               \
    }
/* nsize and fsize are those of one element; a complex number is two */
static const model_type_t types[] = {
    T(MPI_BYTE, RAW, char, 1, 1),
    T(MPI_CHAR, RAW, char, 1, 1),
    T(MPI_SHORT, SINT, short, 2, 1),
    T(MPI_UNSIGNED_SHORT, UINT, short, 2, 1),
    T(MPI_INT, SINT, int, 4, 1),
    T(MPI_UNSIGNED, UINT, int, 4, 1),
    T(MPI_LONG, SINT, long, 4, 1),
    T(MPI_UNSIGNED_LONG, UINT, long, 4, 1),
    T(MPI_LONG_LONG, SINT, long long, 8, 1),
    T(MPI_UNSIGNED_LONG_LONG, UINT, long long, 8, 1),
    T(MPI_INT8_T, SINT, int8_t, 1, 1),
    T(MPI_UINT16_T, UINT, uint16_t, 2, 1),
    T(MPI_INT32_T, SINT, int32_t, 4, 1),
    T(MPI_UINT64_T, UINT, uint64_t, 8, 1),
    T(MPI_C_BOOL, UINT, _Bool, 1, 1),
    T(MPI_WCHAR, UINT, wchar_t, 2, 1),
    T(MPI_AINT, SINT, MPI_Aint, 8, 1),
    T(MPI_OFFSET, SINT, MPI_Offset, 8, 1),
    T(MPI_FLOAT, FLT, float, 4, 1),
    T(MPI_DOUBLE, FLT, double, 8, 1),
    T(MPI_C_DOUBLE_COMPLEX, FLT, double, 8, 2),
    T(MPI_LONG_DOUBLE, LDBL, long double, 16, 1),
};
#define NTYPES (sizeof(types) / sizeof(types[0]))

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_mpi_init(argc, argv);
    return 0;
}

/* ---- the model of one element ---- */

static uint64_t get_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void put_be(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
}

/* Native to external32: 0, or -1 when the value does not fit. */
static int model_encode(const model_type_t *t, const unsigned char *in, unsigned char *out)
{
    switch (t->cls) {
    case RAW:
        memcpy(out, in, (size_t)t->nsize);
        return 0;
    case FLT:
        for (int i = 0; i < t->nsize; i++)
            out[i] = in[t->nsize - 1 - i];
        return 0;
    case LDBL: { /* x87: 64-bit significand with explicit integer bit, then sign and exponent */
        uint64_t sig = get_le(in, 8);
        unsigned se = (unsigned)get_le(in + 8, 2);
        /* binary128: sign and exponent (same bias), then the 112-bit fraction whose top 63
         * bits are the significand's fraction */
        memset(out, 0, 16);
        out[0] = (unsigned char)(se >> 8);
        out[1] = (unsigned char)se;
        uint64_t frac = sig << 1; /* fraction, left-aligned */
        put_be(out + 2, frac, 8);
        return 0;
    }
    default: {
        int bits = 8 * t->nsize, fbits = 8 * t->fsize;
        uint64_t u = get_le(in, t->nsize);
        if (t->cls == SINT) {
            int64_t s =
                bits == 64 ? (int64_t)u : (int64_t)(u << (64 - bits)) >> (64 - bits); /* extend */
            if (fbits < 64 && (s < -((int64_t)1 << (fbits - 1)) || s >= (int64_t)1 << (fbits - 1)))
                return -1;
            put_be(out, (uint64_t)s, t->fsize);
        } else {
            if (fbits < 64 && u >> fbits)
                return -1;
            put_be(out, u, t->fsize);
        }
        return 0;
    }
    }
}

/* External32 to native. */
static void model_decode(const model_type_t *t, const unsigned char *in, unsigned char *out)
{
    uint64_t u = 0;
    switch (t->cls) {
    case RAW:
        memcpy(out, in, (size_t)t->nsize);
        return;
    case FLT:
        for (int i = 0; i < t->nsize; i++)
            out[i] = in[t->nsize - 1 - i];
        return;
    case LDBL: {
        unsigned se = (unsigned)in[0] << 8 | in[1];
        for (int i = 0; i < 8; i++)
            u = u << 8 | in[2 + i];
        /* the fraction's top 63 bits; the integer bit is 1 for every nonzero exponent */
        uint64_t sig = u >> 1 | ((se & 0x7fff) ? (uint64_t)1 << 63 : 0);
        memset(out, 0, 16);
        for (int i = 0; i < 8; i++)
            out[i] = (unsigned char)(sig >> (8 * i));
        out[8] = (unsigned char)se;
        out[9] = (unsigned char)(se >> 8);
        return;
    }
    default:
        for (int i = 0; i < t->fsize; i++)
            u = u << 8 | in[i];
        if (t->cls == SINT && t->fsize < 8 && (u >> (8 * t->fsize - 1)) & 1)
            u |= ~(uint64_t)0 << (8 * t->fsize); /* sign */
        for (int i = 0; i < t->nsize; i++)
            out[i] = (unsigned char)(u >> (8 * i));
    }
}

/* ---- one input ---- */

typedef struct {
    const model_type_t *t;
    int blocklen;
    MPI_Aint disp;
} field_t;

#define MAX_FIELDS 6
#define MAX_BYTES  4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in_t in = {data, size};
    field_t f[MAX_FIELDS];
    int nf = (int)fuzz_range(&in, 1, MAX_FIELDS), fit = fuzz_byte(&in) & 1;
    MPI_Aint at = 0;
    fuzz_what[0] = '\0';
    int blocklens[MAX_FIELDS];
    MPI_Aint disps[MAX_FIELDS];
    MPI_Datatype mtypes[MAX_FIELDS];
    for (int i = 0; i < nf; i++) {
        f[i].t = &types[fuzz_byte(&in) % NTYPES];
        f[i].blocklen = (int)fuzz_range(&in, 1, 4);
        at += fuzz_range(&in, 0, 8); /* a gap */
        at = (at + f[i].t->align - 1) / f[i].t->align * f[i].t->align;
        f[i].disp = at;
        at += (MPI_Aint)f[i].blocklen * f[i].t->nsize * f[i].t->elems;
        blocklens[i] = f[i].blocklen;
        disps[i] = f[i].disp;
        mtypes[i] = f[i].t->type;
        size_t w = strlen(fuzz_what);
        snprintf(fuzz_what + w, sizeof(fuzz_what) - w, "field %d: type #%d x%d at %ld; ", i,
                 (int)(f[i].t - types), f[i].blocklen, (long)f[i].disp);
    }
    MPI_Datatype st, type;
    MPI_Type_create_struct(nf, blocklens, disps, mtypes, &st);
    MPI_Aint lb, extent;
    MPI_Type_get_extent(st, &lb, &extent);
    MPI_Type_create_resized(st, 0, extent + fuzz_range(&in, 0, 16), &type);
    MPI_Type_free(&st);
    MPI_Type_commit(&type);
    MPI_Type_get_extent(type, &lb, &extent);
    int count = (int)fuzz_range(&in, 0, 3);

    static unsigned char buf[4 * MAX_BYTES], stream[4 * MAX_BYTES], want[4 * MAX_BYTES];
    static unsigned char back[4 * MAX_BYTES], expect[4 * MAX_BYTES];
    size_t bytes = (size_t)(count * extent);
    FUZZ_CHECK(bytes <= sizeof(buf), "buffer of %zu bytes", bytes);
    for (size_t i = 0; i < bytes; i++)
        buf[i] = (unsigned char)fuzz_byte(&in);

    /* the model's stream; with `fit` set, integers are first made to fit their external32 size
     * (sign- or zero-extended from it) so that most inputs also exercise success */
    size_t pos = 0;
    int fails = 0;
    for (int c = 0; c < count; c++)
        for (int i = 0; i < nf; i++)
            for (int e = 0; e < f[i].blocklen * f[i].t->elems; e++) {
                const model_type_t *t = f[i].t;
                unsigned char *mem = buf + c * extent + f[i].disp + e * t->nsize;
                if (fit && (t->cls == SINT || t->cls == UINT) && t->fsize < t->nsize) {
                    unsigned char fill = t->cls == SINT && (mem[t->fsize - 1] & 0x80) ? 0xff : 0;
                    memset(mem + t->fsize, fill, (size_t)(t->nsize - t->fsize));
                }
                if (t->cls == UINT && t->nsize == 1 && t->type == MPI_C_BOOL)
                    mem[0] &= 1; /* a _Bool holds 0 or 1 */
                if (model_encode(t, mem, want + pos) != 0)
                    fails = 1;
                pos += (size_t)t->fsize;
            }

    const amp_datarep_t *rep;
    FUZZ_CHECK(amp_datarep_find("external32", &rep) == MPI_SUCCESS && rep, "external32");
    amp_dt_t *dt;
    FUZZ_CHECK(amp_dt_get(type, &dt) == MPI_SUCCESS, "amp_dt_get");
    MPI_Count item;
    FUZZ_CHECK(amp_datarep_size(rep, type, dt, &item) == MPI_SUCCESS, "size");
    FUZZ_CHECK((size_t)(item * count) == pos, "external32 size %lld, model %zu",
               (long long)(item * count), pos);

    memset(stream, 0xee, sizeof(stream));
    int rc = amp_datarep_encode(rep, buf, type, dt, count, stream), cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    FUZZ_CHECK(fails ? cls == MPI_ERR_CONVERSION : rc == MPI_SUCCESS, "encode: class %d, model %s",
               cls, fails ? "a value that does not fit" : "success");
    for (size_t i = 0; i < pos && !fails; i++)
        FUZZ_CHECK(stream[i] == want[i], "encoded byte %zu is %#x, model %#x", i, stream[i],
                   want[i]);

    /* decode the model's stream, cut after `limit` bytes */
    size_t limit = pos ? (size_t)fuzz_range(&in, 0, (long)pos) : 0;
    if (fuzz_byte(&in) & 1)
        limit = pos;
    memset(back, 0xa5, bytes);
    memset(expect, 0xa5, bytes);
    pos = 0;
    for (int c = 0; c < count; c++)
        for (int i = 0; i < nf; i++)
            for (int e = 0; e < f[i].blocklen * f[i].t->elems; e++) {
                const model_type_t *t = f[i].t;
                if (pos + (size_t)t->fsize <= limit)
                    model_decode(t, want + pos, expect + c * extent + f[i].disp + e * t->nsize);
                pos += (size_t)t->fsize;
            }
    if (!fails) {
        rc = amp_datarep_decode(rep, back, type, dt, count, want, (MPI_Count)limit);
        FUZZ_CHECK(rc == MPI_SUCCESS, "decode failed");
        for (size_t i = 0; i < bytes; i++)
            FUZZ_CHECK(back[i] == expect[i], "decoded byte %zu is %#x, model %#x (limit %zu)", i,
                       back[i], expect[i], limit);
    }
    amp_dt_release(dt);
    MPI_Type_free(&type);
    return 0;
}
