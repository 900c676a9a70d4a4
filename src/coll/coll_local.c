/* A rank's own data in a collective call: where its bytes lie in the file, and copying ranges
 * of them between memory and packed buffers. Views are monotone, so the data of any file range
 * is one contiguous range of the rank's bytes. */
#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "core/err.h"
#include "core/fault.h"
#include "io/view.h"

MPI_Count amp_coll_bytes_before(const amp_coll_call_t *c, MPI_Offset off)
{
    return amp_view_bytes_before_in(&c->f->view, off, c->io->pos, c->io->pos + c->io->nbytes);
}

int64_t amp_coll_count_runs(const amp_view_t *v, MPI_Count pos, MPI_Count nbytes)
{
    amp_dt_iter_t it;
    amp_dt_iter_init(&it, v->ft, (MPI_Aint)v->disp, pos);
    int64_t n = 0;
    MPI_Aint end = -1;
    for (MPI_Count left = nbytes; left > 0;) {
        MPI_Aint off;
        MPI_Count len;
        amp_dt_iter_next(&it, left, &off, &len);
        n += off != end;
        end = off + (MPI_Aint)len;
        left -= len;
    }
    return n;
}

int amp_coll_runs(const amp_coll_call_t *c, MPI_Count s_lo, MPI_Count s_hi, int64_t **runs,
                  size_t *nruns)
{
    size_t n = 0, cap = 16;
    int64_t *v = amp_malloc(2 * cap * sizeof(int64_t));
    if (!v)
        return amp_err(MPI_ERR_NO_MEM, "out of memory listing file runs");
    amp_dt_iter_t it;
    amp_dt_iter_init(&it, c->f->view.ft, (MPI_Aint)c->f->view.disp, c->io->pos + s_lo);
    for (MPI_Count left = s_hi - s_lo; left > 0;) {
        MPI_Aint off;
        MPI_Count len;
        amp_dt_iter_next(&it, left, &off, &len);
        left -= len;
        if (n > 0 && v[2 * n - 2] + v[2 * n - 1] == off) {
            v[2 * n - 1] += len;
            continue;
        }
        if (n == cap) {
            cap *= 2;
            int64_t *grown = amp_realloc(v, 2 * cap * sizeof(int64_t));
            if (!grown) {
                free(v);
                return amp_err(MPI_ERR_NO_MEM, "out of memory listing file runs");
            }
            v = grown;
        }
        v[2 * n] = off;
        v[2 * n + 1] = len;
        n++;
    }
    *runs = v;
    *nruns = n;
    return MPI_SUCCESS;
}

char *amp_coll_direct(const amp_coll_call_t *c, MPI_Count s)
{
    const amp_dt_t *m = c->io->mdt;
    if (!m->contiguous)
        return NULL;
    return (char *)c->io->mem + m->lb + s;
}

static void amp_coll_copy(const amp_coll_call_t *c, MPI_Count s_lo, MPI_Count s_hi, char *packed,
                          int to_memory)
{
    amp_dt_iter_t it;
    amp_dt_iter_init(&it, c->io->mdt, (MPI_Aint)c->io->mem, s_lo);
    for (MPI_Count left = s_hi - s_lo; left > 0;) {
        MPI_Aint addr;
        MPI_Count len;
        amp_dt_iter_next(&it, left, &addr, &len);
        if (to_memory)
            memcpy((char *)addr, packed, (size_t)len);
        else
            memcpy(packed, (char *)addr, (size_t)len);
        packed += len;
        left -= len;
    }
}

void amp_coll_pack(const amp_coll_call_t *c, MPI_Count s_lo, MPI_Count s_hi, void *packed)
{
    amp_coll_copy(c, s_lo, s_hi, packed, 0);
}

void amp_coll_unpack(const amp_coll_call_t *c, MPI_Count s_lo, MPI_Count s_hi, const void *packed)
{
    amp_coll_copy(c, s_lo, s_hi, (char *)packed, 1);
}
