/* Fuzzes the datatype decoder (dtype/): random nested datatypes made with the MPI constructors
 * are flattened by ampio and compared with an independent flattening, MPI_Pack of buffers in
 * which every byte tells its own offset (one pack per byte of the offset). Checked: the bytes
 * and their order for 1 to 3 instances (through ampio's iterator, in pieces of random size),
 * size, bounds, the shape flags, and that the typed runs cover the same bytes.
 *
 * The host's MPI_Pack is the oracle; where a host is known to pack wrongly, the generator
 * avoids that shape (docs/TESTING.md lists them). */
#include <stdlib.h>
#include <string.h>

#include "dtype/dt.h"
#include "fuzz.h"

#define MAX_DEPTH   3
#define MAX_SIZE    (1 << 14) /* data bytes of one instance */
#define MAX_SPAN    (1 << 18) /* true extent of one instance */
#define MAX_CREATED 64

static MPI_Datatype created[MAX_CREATED];
static int ncreated;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_mpi_init(argc, argv);
    return 0;
}

static MPI_Datatype keep(MPI_Datatype t)
{
    if (ncreated < MAX_CREATED)
        created[ncreated++] = t;
    return t;
}

/* MPICH 4.0.2 (yaksa) packs an MPI_LONG_DOUBLE that is not part of a contiguous run as its
 * 10 significant x87 bytes and leaves the other 6 bytes of its 16 in the packed buffer
 * unwritten (MPI_Type_vector(2, 1, 2, MPI_LONG_DOUBLE) packs bytes 0-9 and 32-41 and 12
 * bytes of whatever the buffer held): MPI_Pack is no oracle for long double there. */
static MPI_Datatype named(fuzz_in_t *in)
{
    static const MPI_Datatype basic[] = {
        MPI_BYTE,        MPI_CHAR,      MPI_SHORT,
        MPI_INT,         MPI_DOUBLE,    MPI_2INT,
        MPI_FLOAT_INT,   MPI_SHORT_INT, MPI_C_DOUBLE_COMPLEX,
        MPI_DOUBLE_INT,
#ifndef MPICH_VERSION
        MPI_LONG_DOUBLE,
#endif
    };
    unsigned i = fuzz_byte(in) % (sizeof(basic) / sizeof(basic[0]));
    fuzz_note("basic#%u", i);
    return basic[i];
}

/* Whether the oracle cannot take `t`: too large to pack quickly, or, on MPICH 4.0.2, a derived
 * type with no data (blocks of length 0): MPICH's MPI_Pack of a struct with blocks of such a
 * type, e.g. struct {1 MPI_BYTE at 0, 3 E at -64} with E = MPI_Type_create_indexed_block(2,
 * 0, {-4, -4}, any type) or E = MPI_Type_vector(1, 0, -1, any type), divides by zero
 * (SIGFPE). Open MPI runs cover empty types. */
static int too_big(MPI_Datatype t)
{
    MPI_Count size, lb, extent, tlb, textent;
    MPI_Type_size_x(t, &size);
    MPI_Type_get_extent_x(t, &lb, &extent);
    MPI_Type_get_true_extent_x(t, &tlb, &textent);
#ifdef MPICH_VERSION
    if (size == 0)
        return 1;
#endif
    return size > MAX_SIZE || textent > MAX_SPAN || extent > MAX_SPAN || extent < -MAX_SPAN ||
           lb > MAX_SPAN || lb < -MAX_SPAN || tlb > MAX_SPAN || tlb < -MAX_SPAN;
}

static MPI_Datatype build(fuzz_in_t *in, int depth);

static MPI_Aint child_extent(MPI_Datatype t)
{
    MPI_Aint lb, extent;
    MPI_Type_get_extent(t, &lb, &extent);
    return extent;
}

/* Open MPI 4.1 builds a vector or hvector whose stride is -1 byte as if the stride were the
 * child's extent (-1 means "the extent" inside its datatype engine): bounds and MPI_Pack are
 * those of a contiguous type, e.g. MPI_Type_vector(3, 1, -1, MPI_BYTE) packs bytes 0, 1, 2
 * with lb 0 instead of 0, -1, -2 with lb -2. ampio follows the standard there; the generator
 * leaves that stride out on Open MPI. */
static int host_minus_one_bug(MPI_Aint stride_bytes)
{
#ifdef OPEN_MPI
    return stride_bytes == -1;
#else
    (void)stride_bytes;
    return 0;
#endif
}

/* A derived type made of `child` or of several children; MPI_DATATYPE_NULL when the
 * constructor refused (never expected: arguments are valid by construction). */
static MPI_Datatype derive(fuzz_in_t *in, int depth)
{
    static const char *names[] = {"contiguous", "vector",        "hvector",        "indexed",
                                  "hindexed",   "indexed_block", "hindexed_block", "struct",
                                  "subarray",   "darray",        "resized",        "dup"};
    int rc = MPI_ERR_ARG, which = fuzz_byte(in) % 12;
    fuzz_note("%s(", names[which]);
    MPI_Datatype child = build(in, depth + 1), t = MPI_DATATYPE_NULL;
    int n = (int)fuzz_range(in, 0, 4), blocklens[4], displs[4];
    MPI_Aint adispls[4];
    for (int i = 0; i < 4; i++) {
        blocklens[i] = (int)fuzz_range(in, 0, 3);
        displs[i] = (int)fuzz_range(in, -4, 8);
        adispls[i] = fuzz_range(in, -64, 192);
    }
    fuzz_note("; n %d bl %d,%d,%d,%d d %d,%d,%d,%d ad %ld,%ld,%ld,%ld", n, blocklens[0],
              blocklens[1], blocklens[2], blocklens[3], displs[0], displs[1], displs[2], displs[3],
              (long)adispls[0], (long)adispls[1], (long)adispls[2], (long)adispls[3]);
    switch (which) {
    case 0:
        rc = MPI_Type_contiguous(n, child, &t);
        break;
    case 1:
        if (host_minus_one_bug((MPI_Aint)displs[0] * child_extent(child)))
            break;
        rc = MPI_Type_vector(n, blocklens[0], displs[0], child, &t);
        break;
    case 2:
        if (host_minus_one_bug(adispls[0]))
            break;
        rc = MPI_Type_create_hvector(n, blocklens[0], adispls[0], child, &t);
        break;
    case 3:
        rc = MPI_Type_indexed(n, blocklens, displs, child, &t);
        break;
    case 4:
        rc = MPI_Type_create_hindexed(n, blocklens, adispls, child, &t);
        break;
    case 5:
        rc = MPI_Type_create_indexed_block(n, blocklens[0], displs, child, &t);
        break;
    case 6:
        rc = MPI_Type_create_hindexed_block(n, blocklens[0], adispls, child, &t);
        break;
    case 7: {
        MPI_Datatype kids[4] = {child, child, child, child};
        for (int i = 1; i < 4; i++) {
            fuzz_note(", ");
            kids[i] = build(in, depth + 1);
        }
        rc = MPI_Type_create_struct(n, blocklens, adispls, kids, &t);
        break;
    }
    case 8: {
        int nd = (int)fuzz_range(in, 1, 3), sizes[3], subs[3], starts[3];
        for (int d = 0; d < nd; d++) {
            sizes[d] = (int)fuzz_range(in, 1, 5);
            subs[d] = (int)fuzz_range(in, 1, sizes[d]);
            starts[d] = (int)fuzz_range(in, 0, sizes[d] - subs[d]);
        }
        int order = fuzz_byte(in) & 1 ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
        for (int d = 0; d < nd; d++)
            fuzz_note("[%d %d %d]", sizes[d], subs[d], starts[d]);
        fuzz_note(" order %s ", order == MPI_ORDER_C ? "C" : "F");
        rc = MPI_Type_create_subarray(nd, sizes, subs, starts, order, child, &t);
        break;
    }
    case 9: {
        int nd = (int)fuzz_range(in, 1, 3), gsizes[3], distribs[3], dargs[3], psizes[3];
        int nprocs = 1;
        for (int d = 0; d < nd; d++) {
            gsizes[d] = (int)fuzz_range(in, 1, 6);
            psizes[d] = (int)fuzz_range(in, 1, 3);
            int kind = (int)fuzz_range(in, 0, 2);
            distribs[d] = kind == 0   ? MPI_DISTRIBUTE_BLOCK
                          : kind == 1 ? MPI_DISTRIBUTE_CYCLIC
                                      : MPI_DISTRIBUTE_NONE;
            if (distribs[d] == MPI_DISTRIBUTE_NONE)
                psizes[d] = 1;
            dargs[d] = MPI_DISTRIBUTE_DFLT_DARG;
            if (fuzz_byte(in) & 1 && distribs[d] != MPI_DISTRIBUTE_NONE) {
                int least = distribs[d] == MPI_DISTRIBUTE_BLOCK
                                ? (gsizes[d] + psizes[d] - 1) / psizes[d]
                                : 1; /* a block distribution must cover the array */
                dargs[d] = (int)fuzz_range(in, least, least + 2);
            }
            nprocs *= psizes[d];
        }
        int rank = (int)fuzz_range(in, 0, nprocs - 1);
        int order = fuzz_byte(in) & 1 ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
        for (int d = 0; d < nd; d++)
            fuzz_note("[g %d dist %d darg %d p %d]", gsizes[d], distribs[d], dargs[d], psizes[d]);
        fuzz_note(" rank %d of %d order %s ", rank, nprocs, order == MPI_ORDER_C ? "C" : "F");
        rc = MPI_Type_create_darray(nprocs, rank, nd, gsizes, distribs, dargs, psizes, order, child,
                                    &t);
        break;
    }
    case 10:
        rc = MPI_Type_create_resized(child, adispls[0], adispls[1] < 1 ? 1 : adispls[1], &t);
        break;
    default:
        rc = MPI_Type_dup(child, &t);
    }
    if (rc != MPI_SUCCESS || t == MPI_DATATYPE_NULL) {
        fuzz_note(" refused) ");
        return MPI_DATATYPE_NULL;
    }
    keep(t);
    fuzz_note(too_big(t) ? " refused) " : ") ");
    return too_big(t) ? MPI_DATATYPE_NULL : t;
}

static MPI_Datatype build(fuzz_in_t *in, int depth)
{
    if (depth >= MAX_DEPTH || fuzz_byte(in) % 3 == 0)
        return named(in);
    MPI_Datatype t = derive(in, depth);
    return t == MPI_DATATYPE_NULL ? named(in) : t;
}

/* ---- the oracle ---- */

/* The offset (from `first`) of every data byte of `count` instances, in typemap order, from
 * three packs of a buffer whose bytes hold one byte of their offset each. Instances are packed
 * one at a time, at their displacements: Open MPI 4.1 packs count > 1 instances of a struct
 * whose bounds come from blocks of empty types with the true extent as stride instead of the
 * extent. */
static uint32_t *pack_offsets(MPI_Datatype t, int count, MPI_Count extent, MPI_Count first,
                              size_t span, int size)
{
    unsigned char *buf = malloc(span), *packed = malloc((size_t)size * count + 1);
    uint32_t *off = calloc((size_t)size * count + 1, sizeof(uint32_t));
    FUZZ_CHECK(buf && packed && off, "out of memory");
    for (int plane = 0; plane < 3; plane++) {
        for (size_t i = 0; i < span; i++)
            buf[i] = (unsigned char)(i >> (8 * plane));
        for (int j = 0; j < count; j++) {
            int position = 0;
            int rc = MPI_Pack(buf - first + j * extent, 1, t, packed + j * size, size, &position,
                              MPI_COMM_SELF);
            FUZZ_CHECK(rc == MPI_SUCCESS && position == size, "MPI_Pack: rc %d, %d of %d bytes", rc,
                       position, size);
        }
        for (int i = 0; i < size * count; i++)
            off[i] |= (uint32_t)packed[i] << (8 * plane);
    }
    free(buf);
    free(packed);
    return off;
}

static void check(MPI_Datatype t, fuzz_in_t *in)
{
    if (getenv("FUZZ_SHOW")) /* what a crash inside MPI was made of */
        fprintf(stderr, "input: %s\n", fuzz_what);
    MPI_Count size, lb, extent, tlb, textent;
    MPI_Type_size_x(t, &size);
    MPI_Type_get_extent_x(t, &lb, &extent);
    MPI_Type_get_true_extent_x(t, &tlb, &textent);

    amp_dt_t *dt;
    int rc = amp_dt_get(t, &dt);
    FUZZ_CHECK(rc == MPI_SUCCESS, "amp_dt_get failed");
    FUZZ_CHECK(dt->size == size && dt->lb == lb && dt->extent == extent,
               "size %lld lb %lld extent %lld, MPI says %lld %lld %lld", (long long)dt->size,
               (long long)dt->lb, (long long)dt->extent, (long long)size, (long long)lb,
               (long long)extent);

    /* MPICH gives an empty type a negative true extent (indexed_block of blocks of length 0
     * at displacement -4: -4): nothing is packed from it */
    FUZZ_CHECK(size == 0 || textent >= 0, "true extent %lld", (long long)textent);
    if (textent < 0)
        textent = 0;
    /* one instance: the segments, and the flags from the bytes */
    uint32_t *off = pack_offsets(t, 1, extent, tlb, (size_t)textent, (int)size);
    MPI_Count k = 0;
    for (size_t s = 0; s < dt->segs.n; s++)
        for (MPI_Count b = 0; b < dt->segs.v[s].len; b++, k++)
            FUZZ_CHECK(k < size && dt->segs.v[s].off + b - tlb == off[k],
                       "byte %lld of the typemap: ampio offset %lld, MPI_Pack %lld", (long long)k,
                       (long long)(dt->segs.v[s].off + b), (long long)(off[k] + tlb));
    FUZZ_CHECK(k == size, "ampio has %lld bytes, MPI_Pack %lld", (long long)k, (long long)size);
    int nondecreasing = 1, overlapping = 0, contiguous = 1;
    unsigned char *seen = calloc((size_t)textent + 1, 1);
    for (MPI_Count i = 0; i < size; i++) {
        if (i > 0 && off[i] != off[i - 1] + 1 && off[i] < off[i - 1] + 1) {
            /* a new run starting before the previous run's start */
            MPI_Count start = i - 1;
            while (start > 0 && off[start] == off[start - 1] + 1)
                start--;
            if (off[i] < off[start])
                nondecreasing = 0;
        }
        overlapping |= seen[off[i]]++ > 0;
        contiguous &= off[i] + tlb == lb + i;
    }
    contiguous &= size == 0 || size == extent;
    free(seen);
    FUZZ_CHECK(dt->nondecreasing == nondecreasing, "nondecreasing %d, model %d", dt->nondecreasing,
               nondecreasing);
    FUZZ_CHECK(dt->overlapping == overlapping, "overlapping %d, model %d", dt->overlapping,
               overlapping);
    FUZZ_CHECK(dt->contiguous == contiguous, "contiguous %d, model %d", dt->contiguous, contiguous);

    /* the typed runs hold the same bytes in the same order */
    FUZZ_CHECK(amp_dt_runs(dt, t) == MPI_SUCCESS, "amp_dt_runs failed");
    k = 0;
    for (size_t r = 0; r < dt->runs.n; r++)
        for (MPI_Count b = 0; b < dt->runs.v[r].len; b++, k++)
            FUZZ_CHECK(k < size && dt->runs.v[r].off + b - tlb == off[k], "typed run byte %lld",
                       (long long)k);
    FUZZ_CHECK(k == size, "typed runs have %lld bytes, not %lld", (long long)k, (long long)size);
    free(off);

    /* several instances through the iterator, from a random start, in random pieces */
    int count = (int)fuzz_range(in, 1, 3);
    MPI_Count span = textent + (count - 1) * (extent < 0 ? -extent : extent);
    MPI_Count first = extent < 0 ? tlb + (count - 1) * extent : tlb;
    if (size > 0 && span <= 4 * MAX_SPAN) {
        off = pack_offsets(t, count, extent, first, (size_t)span, (int)size);
        MPI_Count skip = fuzz_range(in, 0, (long)(size * count - 1));
        amp_dt_iter_t it;
        amp_dt_iter_init(&it, dt, 0, skip);
        for (MPI_Count done = skip; done < size * count;) {
            MPI_Count max = fuzz_range(in, 1, 64), len;
            if (max > size * count - done)
                max = size * count - done;
            MPI_Aint addr;
            amp_dt_iter_next(&it, max, &addr, &len);
            FUZZ_CHECK(len >= 1 && len <= max, "iterator piece of %lld bytes", (long long)len);
            for (MPI_Count b = 0; b < len; b++)
                FUZZ_CHECK(addr + b - first == off[done + b],
                           "instance byte %lld: ampio %lld, MPI_Pack %lld", (long long)(done + b),
                           (long long)(addr + b), (long long)(off[done + b] + first));
            done += len;
        }
        free(off);
    }
    amp_dt_release(dt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in_t in = {data, size};
    ncreated = 0;
    fuzz_what[0] = '\0';
    MPI_Datatype t = derive(&in, 0);
    if (t != MPI_DATATYPE_NULL) {
        MPI_Datatype top;
        MPI_Type_dup(t, &top); /* committed apart from its parts, which stay uncommitted */
        MPI_Type_commit(&top);
        check(top, &in);
        MPI_Type_free(&top);
    }
    for (int i = 0; i < ncreated; i++)
        MPI_Type_free(&created[i]);
    return 0;
}
