/* Growable lists of segments, merging a piece into the previous one when they touch. */
#include <stdlib.h>

#include "core/err.h"
#include "core/fault.h"
#include "dtype/dt.h"

/* 2^28 segments of 16 bytes is 4 GiB of description: past that, refuse rather than thrash. */
#define AMP_SEGLIST_MAX ((size_t)1 << 28)

int amp_seglist_push(amp_seglist_t *l, MPI_Aint off, MPI_Count len, amp_kind_t kind)
{
    if (len <= 0)
        return MPI_SUCCESS;
    if (l->n > 0) {
        amp_seg_t *last = &l->v[l->n - 1];
        if (last->off + last->len == off && (!l->typed || l->kind[l->n - 1] == kind)) {
            last->len += len;
            return MPI_SUCCESS;
        }
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        if (cap > AMP_SEGLIST_MAX)
            return amp_err(MPI_ERR_NO_MEM,
                           "datatype has more than %zu noncontiguous pieces; "
                           "describe the data with fewer, larger blocks",
                           AMP_SEGLIST_MAX);
        amp_seg_t *v = amp_realloc(l->v, cap * sizeof(*v));
        if (!v)
            return amp_err(MPI_ERR_NO_MEM, "out of memory flattening a datatype");
        l->v = v;
        if (l->typed) {
            amp_kind_t *k = amp_realloc(l->kind, cap * sizeof(*k));
            if (!k)
                return amp_err(MPI_ERR_NO_MEM, "out of memory flattening a datatype");
            l->kind = k;
        }
        l->cap = cap;
    }
    l->v[l->n].off = off;
    l->v[l->n].len = len;
    if (l->typed)
        l->kind[l->n] = kind;
    l->n++;
    return MPI_SUCCESS;
}

void amp_seglist_free(amp_seglist_t *l)
{
    free(l->v);
    free(l->kind);
    l->v = NULL;
    l->kind = NULL;
    l->n = l->cap = 0;
}
