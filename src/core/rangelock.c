#include "core/rangelock.h"

void amp_rangelock_init(amp_rangelock_t *l)
{
    pthread_mutex_init(&l->mutex, NULL);
    pthread_cond_init(&l->freed, NULL);
    l->held = NULL;
}

void amp_rangelock_destroy(amp_rangelock_t *l)
{
    pthread_cond_destroy(&l->freed);
    pthread_mutex_destroy(&l->mutex);
}

static int amp_rangelock_free(const amp_rangelock_t *l, MPI_Offset lo, MPI_Offset hi)
{
    for (const amp_range_t *r = l->held; r; r = r->next)
        if (r->lo < hi && lo < r->hi)
            return 0;
    return 1;
}

static void amp_rangelock_hold(amp_rangelock_t *l, amp_range_t *node, MPI_Offset lo, MPI_Offset hi)
{
    node->lo = lo;
    node->hi = hi;
    node->next = l->held;
    l->held = node;
}

void amp_rangelock_acquire(amp_rangelock_t *l, amp_range_t *node, MPI_Offset lo, MPI_Offset hi)
{
    pthread_mutex_lock(&l->mutex);
    while (!amp_rangelock_free(l, lo, hi))
        pthread_cond_wait(&l->freed, &l->mutex);
    amp_rangelock_hold(l, node, lo, hi);
    pthread_mutex_unlock(&l->mutex);
}

int amp_rangelock_try(amp_rangelock_t *l, amp_range_t *node, MPI_Offset lo, MPI_Offset hi)
{
    pthread_mutex_lock(&l->mutex);
    int ok = amp_rangelock_free(l, lo, hi);
    if (ok)
        amp_rangelock_hold(l, node, lo, hi);
    pthread_mutex_unlock(&l->mutex);
    return ok;
}

void amp_rangelock_release(amp_rangelock_t *l, amp_range_t *node)
{
    pthread_mutex_lock(&l->mutex);
    for (amp_range_t **at = &l->held; *at; at = &(*at)->next)
        if (*at == node) {
            *at = node->next;
            break;
        }
    pthread_cond_broadcast(&l->freed);
    pthread_mutex_unlock(&l->mutex);
}
