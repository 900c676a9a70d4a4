/* The flattened form of each datatype, cached on the type with an attribute (so that it dies
 * with the type and is shared by MPI_Type_dup), and in a small table for predefined types,
 * which are never freed. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/fault.h"
#include "dtype/dt_internal.h"

static int amp_dt_keyval = MPI_KEYVAL_INVALID;
static pthread_mutex_t amp_dt_lock = PTHREAD_MUTEX_INITIALIZER;

#define AMP_DT_NAMED_MAX 128
static struct {
    MPI_Datatype type;
    amp_dt_t *dt;
} amp_dt_named_cache[AMP_DT_NAMED_MAX];
static int amp_dt_named_n;

static void amp_dt_destroy(amp_dt_t *dt)
{
    amp_seglist_free(&dt->segs);
    amp_seglist_free(&dt->runs);
    free(dt->prefix);
    free(dt);
}

void amp_dt_release(amp_dt_t *dt)
{
    if (dt && atomic_fetch_sub(&dt->refs, 1) == 1)
        amp_dt_destroy(dt);
}

static int amp_dt_attr_copy(MPI_Datatype old, int keyval, void *extra, void *in, void *out,
                            int *flag)
{
    amp_dt_t *dt = in;
    atomic_fetch_add(&dt->refs, 1);
    *(void **)out = dt;
    *flag = 1;
    return MPI_SUCCESS;
}

static int amp_dt_attr_delete(MPI_Datatype type, int keyval, void *value, void *extra)
{
    amp_dt_release(value);
    return MPI_SUCCESS;
}

static int amp_dt_seg_cmp(const void *a, const void *b)
{
    const amp_seg_t *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Whether some byte appears twice, for segments sorted by offset. */
static int amp_dt_sorted_overlap(const amp_seg_t *v, size_t n)
{
    MPI_Aint end = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && v[i].off < end)
            return 1;
        if (i == 0 || v[i].off + (MPI_Aint)v[i].len > end)
            end = v[i].off + (MPI_Aint)v[i].len;
    }
    return 0;
}

static void amp_dt_shape(amp_dt_t *dt)
{
    const amp_seglist_t *s = &dt->segs;
    dt->nondecreasing = 1;
    for (size_t i = 1; i < s->n; i++)
        if (s->v[i].off < s->v[i - 1].off)
            dt->nondecreasing = 0;
    if (dt->nondecreasing) {
        dt->overlapping = amp_dt_sorted_overlap(s->v, s->n);
    } else {
        amp_seg_t *sorted = amp_malloc(s->n * sizeof(*sorted));
        if (sorted) {
            memcpy(sorted, s->v, s->n * sizeof(*sorted));
            qsort(sorted, s->n, sizeof(*sorted), amp_dt_seg_cmp);
            dt->overlapping = amp_dt_sorted_overlap(sorted, s->n);
            free(sorted);
        } else {
            dt->overlapping = 1; /* cannot tell: assume the worst */
        }
    }
    dt->contiguous = s->n == 0 || (s->n == 1 && s->v[0].off == dt->lb && s->v[0].len == dt->extent);
}

static int amp_dt_build(MPI_Datatype type, amp_dt_t **out)
{
    amp_dt_t *dt = amp_calloc(1, sizeof(*dt));
    if (!dt)
        return amp_err(MPI_ERR_NO_MEM, "out of memory flattening a datatype");
    atomic_init(&dt->refs, 1);
    MPI_Count size;
    PMPI_Type_size_x(type, &size);
    PMPI_Type_get_extent_x(type, &dt->lb, &dt->extent);
    dt->size = size;
    int rc = amp_dt_decode(type, 0, &dt->segs, &dt->named);
    if (rc == MPI_SUCCESS) {
        dt->prefix = amp_malloc((dt->segs.n + 1) * sizeof(MPI_Count));
        if (!dt->prefix)
            rc = amp_err(MPI_ERR_NO_MEM, "out of memory flattening a datatype");
    }
    if (rc != MPI_SUCCESS) {
        amp_dt_destroy(dt);
        return rc;
    }
    MPI_Count sum = 0;
    for (size_t i = 0; i < dt->segs.n; i++) {
        dt->prefix[i] = sum;
        sum += dt->segs.v[i].len;
    }
    dt->prefix[dt->segs.n] = sum;
    if (sum != dt->size) {
        amp_dt_destroy(dt);
        return amp_err(MPI_ERR_TYPE,
                       "datatype decodes to %lld bytes but MPI_Type_size says %lld; "
                       "its constructor is not understood",
                       (long long)sum, (long long)size);
    }
    amp_dt_shape(dt);
    *out = dt;
    return MPI_SUCCESS;
}

int amp_dt_contiguous(MPI_Count bytes, amp_dt_t **out)
{
    amp_dt_t *dt = amp_calloc(1, sizeof(*dt));
    if (!dt || !(dt->prefix = amp_malloc(2 * sizeof(MPI_Count)))) {
        free(dt);
        return amp_err(MPI_ERR_NO_MEM, "out of memory describing a file layout");
    }
    atomic_init(&dt->refs, 1);
    dt->size = dt->extent = bytes;
    int rc = amp_seglist_push(&dt->segs, 0, bytes, 0);
    if (rc != MPI_SUCCESS) {
        amp_dt_destroy(dt);
        return rc;
    }
    dt->prefix[0] = 0;
    dt->prefix[dt->segs.n] = bytes;
    amp_dt_shape(dt);
    *out = dt;
    return MPI_SUCCESS;
}

static int amp_dt_is_named(MPI_Datatype type)
{
    int ni, na, nd, combiner;
    if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return 1;
    return combiner == MPI_COMBINER_NAMED;
}

static int amp_dt_check_null(MPI_Datatype type, const char *what)
{
    if (type == MPI_DATATYPE_NULL)
        return amp_err(MPI_ERR_TYPE, "%s is MPI_DATATYPE_NULL", what);
    return MPI_SUCCESS;
}

/* MPI offers no query for commitment, but packing nothing fails on an uncommitted type in
 * every MPI; the communicator only carries the error back (it returns errors). */
static int amp_dt_committed(MPI_Datatype type)
{
    static MPI_Comm quiet = MPI_COMM_NULL;
    pthread_mutex_lock(&amp_dt_lock);
    if (quiet == MPI_COMM_NULL && PMPI_Comm_dup(MPI_COMM_SELF, &quiet) == MPI_SUCCESS)
        PMPI_Comm_set_errhandler(quiet, MPI_ERRORS_RETURN);
    pthread_mutex_unlock(&amp_dt_lock);
    if (quiet == MPI_COMM_NULL)
        return 1;
    char none[1];
    int position = 0;
    return PMPI_Pack(none, 0, type, none, 0, &position, quiet) == MPI_SUCCESS;
}

int amp_dt_check(MPI_Datatype type, const char *what)
{
    int rc = amp_dt_check_null(type, what);
    if (rc == MPI_SUCCESS && !amp_dt_is_named(type) && !amp_dt_committed(type))
        rc = amp_err(MPI_ERR_TYPE, "%s is not committed (MPI_Type_commit)", what);
    return rc;
}

int amp_dt_get(MPI_Datatype type, amp_dt_t **out)
{
    int rc = amp_dt_check_null(type, "datatype"); /* parts of a type need no commit */
    if (rc != MPI_SUCCESS)
        return rc;
    if (amp_dt_is_named(type)) {
        pthread_mutex_lock(&amp_dt_lock);
        for (int i = 0; i < amp_dt_named_n; i++) {
            if (amp_dt_named_cache[i].type == type) {
                *out = amp_dt_named_cache[i].dt;
                atomic_fetch_add(&(*out)->refs, 1);
                pthread_mutex_unlock(&amp_dt_lock);
                return MPI_SUCCESS;
            }
        }
        rc = amp_dt_build(type, out);
        if (rc == MPI_SUCCESS && amp_dt_named_n < AMP_DT_NAMED_MAX) {
            atomic_fetch_add(&(*out)->refs, 1);
            amp_dt_named_cache[amp_dt_named_n].type = type;
            amp_dt_named_cache[amp_dt_named_n++].dt = *out;
        }
        pthread_mutex_unlock(&amp_dt_lock);
        return rc;
    }

    pthread_mutex_lock(&amp_dt_lock);
    if (amp_dt_keyval == MPI_KEYVAL_INVALID)
        PMPI_Type_create_keyval(amp_dt_attr_copy, amp_dt_attr_delete, &amp_dt_keyval, NULL);
    pthread_mutex_unlock(&amp_dt_lock);

    void *value = NULL;
    int found = 0;
    PMPI_Type_get_attr(type, amp_dt_keyval, &value, &found);
    if (found) {
        *out = value;
        atomic_fetch_add(&(*out)->refs, 1);
        return MPI_SUCCESS;
    }
    rc = amp_dt_build(type, out);
    if (rc != MPI_SUCCESS)
        return rc;
    atomic_fetch_add(&(*out)->refs, 1); /* the attribute's reference */
    if (PMPI_Type_set_attr(type, amp_dt_keyval, *out) != MPI_SUCCESS)
        atomic_fetch_sub(&(*out)->refs, 1);
    return MPI_SUCCESS;
}

int amp_dt_runs(amp_dt_t *dt, MPI_Datatype type)
{
    pthread_mutex_lock(&amp_dt_lock);
    int built = dt->runs_built;
    pthread_mutex_unlock(&amp_dt_lock);
    if (built)
        return MPI_SUCCESS;
    amp_seglist_t runs = {.typed = 1};
    int named;
    int rc = amp_dt_decode(type, 1, &runs, &named);
    if (rc != MPI_SUCCESS) {
        amp_seglist_free(&runs);
        return rc;
    }
    pthread_mutex_lock(&amp_dt_lock);
    if (!dt->runs_built) {
        dt->runs = runs;
        dt->runs_built = 1;
    } else {
        amp_seglist_free(&runs);
    }
    pthread_mutex_unlock(&amp_dt_lock);
    return MPI_SUCCESS;
}

void amp_dt_finalize(void)
{
    pthread_mutex_lock(&amp_dt_lock);
    for (int i = 0; i < amp_dt_named_n; i++)
        amp_dt_release(amp_dt_named_cache[i].dt);
    amp_dt_named_n = 0;
    if (amp_dt_keyval != MPI_KEYVAL_INVALID)
        PMPI_Type_free_keyval(&amp_dt_keyval);
    pthread_mutex_unlock(&amp_dt_lock);
}

/* ---- iteration ---- */

void amp_dt_iter_init(amp_dt_iter_t *it, const amp_dt_t *dt, MPI_Aint base, MPI_Count skip)
{
    it->dt = dt;
    it->base = base;
    it->inst = 0;
    it->seg = 0;
    it->used = 0;
    if (dt->size == 0)
        return;
    if (dt->contiguous) {
        it->used = skip; /* one unbounded segment */
        return;
    }
    it->inst = skip / dt->size;
    MPI_Count rem = skip % dt->size;
    size_t lo = 0, hi = dt->segs.n - 1; /* last segment whose prefix <= rem */
    while (lo < hi) {
        size_t mid = (lo + hi + 1) / 2;
        if (dt->prefix[mid] <= rem)
            lo = mid;
        else
            hi = mid - 1;
    }
    it->seg = lo;
    it->used = rem - dt->prefix[lo];
}

void amp_dt_iter_next(amp_dt_iter_t *it, MPI_Count max, MPI_Aint *addr, MPI_Count *len)
{
    const amp_dt_t *dt = it->dt;
    if (dt->contiguous) {
        *addr = it->base + dt->lb + (MPI_Aint)it->used;
        *len = max;
        it->used += max;
        return;
    }
    const amp_seg_t *s = &dt->segs.v[it->seg];
    MPI_Count avail = s->len - it->used;
    MPI_Count n = avail < max ? avail : max;
    *addr = it->base + (MPI_Aint)(it->inst * dt->extent) + s->off + (MPI_Aint)it->used;
    *len = n;
    it->used += n;
    if (it->used == s->len) {
        it->used = 0;
        if (++it->seg == dt->segs.n) {
            it->seg = 0;
            it->inst++;
        }
    }
}
