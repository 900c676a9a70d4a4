#include "io/view.h"

#include <string.h>

#include "core/err.h"
#include "io/datarep.h"

static int amp_view_hold(MPI_Datatype type, MPI_Datatype *held)
{
    amp_dt_t *dt;
    int rc = amp_dt_get(type, &dt);
    if (rc != MPI_SUCCESS)
        return rc;
    int named = dt->named;
    amp_dt_release(dt);
    if (named) {
        *held = type;
        return MPI_SUCCESS;
    }
    return PMPI_Type_dup(type, held);
}

static void amp_view_drop(MPI_Datatype *type)
{
    if (*type == MPI_DATATYPE_NULL)
        return;
    int ni, na, nd, combiner;
    PMPI_Type_get_envelope(*type, &ni, &na, &nd, &combiner);
    if (combiner != MPI_COMBINER_NAMED)
        PMPI_Type_free(type);
    *type = MPI_DATATYPE_NULL;
}

int amp_view_default(amp_view_t *v)
{
    return amp_view_build(v, 0, MPI_BYTE, MPI_BYTE, "native", 1);
}

void amp_view_free(amp_view_t *v)
{
    amp_dt_release(v->ft);
    v->ft = NULL;
    amp_view_drop(&v->etype);
    amp_view_drop(&v->filetype);
}

/* The class of an etype or filetype that no view may use. The standard names none; programs
 * written for one MPI family check the class of its own MPI-IO: ROMIO's MPI_ERR_IO in MPICH,
 * MPI_ERR_TYPE (as OMPIO mostly returns) elsewhere. */
#ifdef MPICH_VERSION
#define AMP_VIEW_ERR_BAD_TYPE MPI_ERR_IO
#else
#define AMP_VIEW_ERR_BAD_TYPE MPI_ERR_TYPE
#endif

static int amp_view_check_type(const amp_dt_t *dt, const char *what, int writable)
{
    if (dt->segs.n > 0 && dt->segs.v[0].off < 0)
        return amp_err(AMP_VIEW_ERR_BAD_TYPE, "the %s has a negative displacement (%lld)", what,
                       (long long)dt->segs.v[0].off);
    if (!dt->nondecreasing)
        return amp_err(AMP_VIEW_ERR_BAD_TYPE,
                       "the displacements of the %s are not monotonically nondecreasing", what);
    if (writable && dt->overlapping)
        return amp_err(AMP_VIEW_ERR_BAD_TYPE,
                       "the %s overlaps itself, which a file opened for writing forbids", what);
    return MPI_SUCCESS;
}

int amp_view_build(amp_view_t *v, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                   const char *datarep, int writable)
{
    memset(v, 0, sizeof(*v));
    v->etype = v->filetype = MPI_DATATYPE_NULL;
    if (disp < 0)
        return amp_err(MPI_ERR_ARG, "the view displacement %lld is negative", (long long)disp);
    int rc = amp_dt_check(etype, "the etype");
    if (rc == MPI_SUCCESS)
        rc = amp_dt_check(filetype, "the filetype");
    if (rc == MPI_SUCCESS)
        rc = amp_datarep_find(datarep, &v->rep);
    if (rc != MPI_SUCCESS)
        return rc;

    amp_dt_t *edt = NULL, *fdt = NULL;
    rc = amp_dt_get(etype, &edt);
    if (rc == MPI_SUCCESS)
        rc = amp_dt_get(filetype, &fdt);
    if (rc == MPI_SUCCESS)
        rc = amp_view_check_type(edt, "etype", writable);
    if (rc == MPI_SUCCESS)
        rc = amp_view_check_type(fdt, "filetype", writable);
    if (rc == MPI_SUCCESS && edt->size == 0)
        rc = amp_err(MPI_ERR_TYPE, "the etype has no data (size 0)");
    if (rc == MPI_SUCCESS && fdt->size % edt->size != 0)
        rc = amp_err(MPI_ERR_TYPE,
                     "the filetype (%lld bytes of data) is not made of whole etypes of %lld bytes",
                     (long long)fdt->size, (long long)edt->size);
    if (rc == MPI_SUCCESS)
        rc = amp_datarep_size(v->rep, etype, edt, &v->esize);
    if (rc == MPI_SUCCESS)
        rc = amp_datarep_layout(v->rep, filetype, fdt, &v->ft);
    if (rc == MPI_SUCCESS && v->esize <= 0)
        rc = amp_err(MPI_ERR_UNSUPPORTED_DATAREP,
                     "the etype has no size in data representation \"%s\"", datarep);
    if (rc == MPI_SUCCESS)
        rc = amp_view_hold(etype, &v->etype);
    if (rc == MPI_SUCCESS)
        rc = amp_view_hold(filetype, &v->filetype);
    amp_dt_release(edt);
    amp_dt_release(fdt);
    if (rc != MPI_SUCCESS) {
        amp_view_free(v);
        return rc;
    }
    v->disp = disp;
    snprintf(v->datarep, sizeof(v->datarep), "%s", datarep);
    return MPI_SUCCESS;
}

int amp_view_has_holes(const amp_view_t *v)
{
    const amp_dt_t *ft = v->ft;
    if (ft->size == 0)
        return 0;
    return !(ft->segs.n == 1 && ft->segs.v[0].len == ft->extent);
}

MPI_Offset amp_view_offset(const amp_view_t *v, MPI_Count pos)
{
    const amp_dt_t *ft = v->ft;
    if (ft->size == 0)
        return v->disp;
    MPI_Count inst = pos / ft->size, rem = pos % ft->size;
    size_t lo = 0, hi = ft->segs.n - 1;
    while (lo < hi) {
        size_t mid = (lo + hi + 1) / 2;
        if (ft->prefix[mid] <= rem)
            lo = mid;
        else
            hi = mid - 1;
    }
    return v->disp + (MPI_Offset)(inst * ft->extent) + ft->segs.v[lo].off +
           (MPI_Offset)(rem - ft->prefix[lo]);
}

/* The offset just past the data of copy `inst` of the filetype, or -1 past MPI_Offset. */
static MPI_Offset amp_view_copy_end(const amp_view_t *v, MPI_Count inst)
{
    const amp_dt_t *ft = v->ft;
    MPI_Offset end = 0, at = 0;
    for (size_t i = 0; i < ft->segs.n; i++)
        if (ft->segs.v[i].off + (MPI_Offset)ft->segs.v[i].len > end)
            end = ft->segs.v[i].off + (MPI_Offset)ft->segs.v[i].len;
    if (__builtin_mul_overflow(inst, (MPI_Offset)ft->extent, &at) ||
        __builtin_add_overflow(at, end, &at) || __builtin_add_overflow(at, v->disp, &at) || at < 0)
        return -1;
    return at;
}

int amp_view_range(const amp_view_t *v, MPI_Offset etypes, MPI_Count bytes, MPI_Count *pos,
                   const char *routine)
{
    MPI_Count end = 0;
    int wrapped = etypes < 0 || __builtin_mul_overflow(etypes, v->esize, pos);
    if (bytes == 0) { /* nothing moves: no offset is computed from the position */
        if (wrapped)
            *pos = 0;
        return MPI_SUCCESS;
    }
    if (wrapped || __builtin_add_overflow(*pos, bytes, &end) ||
        (v->ft->size > 0 && amp_view_copy_end(v, (end - 1) / v->ft->size) < 0))
        return amp_err(MPI_ERR_ARG,
                       "%s: %lld bytes at etype %lld of %lld bytes lie beyond the largest file "
                       "offset (2^63 - 1 bytes)",
                       routine, (long long)bytes, (long long)etypes, (long long)v->esize);
    return MPI_SUCCESS;
}

int amp_view_etype_offset(const amp_view_t *v, MPI_Offset etypes, MPI_Offset *off,
                          const char *routine)
{
    MPI_Count pos = 0;
    int rc = amp_view_range(v, etypes, 1, &pos, routine);
    if (rc == MPI_SUCCESS)
        *off = amp_view_offset(v, pos);
    return rc;
}

/* Bytes of one copy of the filetype that lie below `r` (relative to the copy). */
static MPI_Count amp_view_bytes_below(const amp_dt_t *ft, MPI_Offset r)
{
    if (ft->segs.v[0].off >= r)
        return 0;
    size_t lo = 0, hi = ft->segs.n - 1;
    while (lo < hi) {
        size_t mid = (lo + hi + 1) / 2;
        if (ft->segs.v[mid].off < r)
            lo = mid;
        else
            hi = mid - 1;
    }
    MPI_Count in_seg = r - ft->segs.v[lo].off;
    if (in_seg > ft->segs.v[lo].len)
        in_seg = ft->segs.v[lo].len;
    return ft->prefix[lo] + in_seg;
}

static MPI_Count amp_view_clip(MPI_Count lo, MPI_Count hi, MPI_Count from, MPI_Count to)
{
    lo = lo > from ? lo : from;
    hi = hi < to ? hi : to;
    return hi > lo ? hi - lo : 0;
}

MPI_Count amp_view_bytes_before_in(const amp_view_t *v, MPI_Offset off, MPI_Count from,
                                   MPI_Count to)
{
    const amp_dt_t *ft = v->ft;
    MPI_Offset rel = off - v->disp;
    if (rel <= 0 || ft->size == 0 || ft->segs.n == 0 || to <= from)
        return 0;
    if (ft->extent <= 0)
        return amp_view_clip(0, ft->size, from, to);
    /* Copy k holds the type map shifted by k * extent. A copy's data may reach past its extent
     * and even into the next copies' (PnetCDF's struct of header bytes and a subarray-based
     * record type, whose sticky lb lies above the header bytes), so count, among the view
     * positions [from, to), those of the copies wholly below `rel`, then those of the few
     * copies that straddle it. */
    MPI_Offset first = ft->segs.v[0].off, end = first;
    for (size_t i = 0; i < ft->segs.n; i++)
        if (ft->segs.v[i].off + (MPI_Offset)ft->segs.v[i].len > end)
            end = ft->segs.v[i].off + (MPI_Offset)ft->segs.v[i].len;
    MPI_Count k0 = from / ft->size, k1 = (to - 1) / ft->size;
    MPI_Count below = rel >= end ? (rel - end) / ft->extent + 1 : 0; /* copies 0..below-1 */
    MPI_Count total = 0, k = k0;
    if (below > k0) {
        MPI_Count k_end = below <= k1 ? below : k1 + 1;
        total += amp_view_clip(k0 * ft->size, k_end * ft->size, from, to);
        k = k_end;
    }
    for (; k <= k1 && (MPI_Offset)(k * ft->extent) + first < rel; k++) {
        MPI_Count b = amp_view_bytes_below(ft, rel - (MPI_Offset)(k * ft->extent));
        total += amp_view_clip(k * ft->size, k * ft->size + b, from, to);
    }
    return total;
}

MPI_Count amp_view_bytes_before(const amp_view_t *v, MPI_Offset off)
{
    const amp_dt_t *ft = v->ft;
    MPI_Offset rel = off - v->disp;
    if (rel <= 0 || ft->size == 0 || ft->segs.n == 0)
        return 0;
    if (ft->extent <= 0)
        return ft->size;
    /* The copy whose first data byte is the last at or before `rel`: a copy's data may reach
     * past its extent (a positive lb, or a resized type), but never into the next copy's,
     * because view displacements never decrease. */
    MPI_Offset first = ft->segs.v[0].off;
    if (rel <= first)
        return 0;
    MPI_Count inst = (rel - first) / ft->extent;
    return inst * ft->size + amp_view_bytes_below(ft, rel - (MPI_Offset)(inst * ft->extent));
}
