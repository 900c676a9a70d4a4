#include "coll/stripe_map.h"

static int64_t amp_min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t amp_max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

int amp_stripe_naggr(int64_t want, int nprocs, int64_t count, int64_t co_ratio)
{
    int64_t n = want;
    if (co_ratio < 1)
        co_ratio = 1;
    n = amp_min64(n, count * co_ratio);
    n = amp_min64(n, nprocs);
    return n < 1 ? 1 : (int)n;
}

void amp_stripe_map_init(amp_stripe_map_t *m, int64_t unit, int64_t count, int naggr, int64_t lo,
                         int64_t hi, int64_t piece)
{
    m->unit = unit > 0 ? unit : 1;
    m->count = count > 0 ? count : 1;
    m->naggr = naggr > 0 ? naggr : 1;
    m->lo = lo;
    m->hi = hi > lo ? hi : lo;
    int64_t width = m->unit * m->count;
    m->row_lo = lo / width;
    m->nrows = m->hi > m->lo ? (m->hi - 1) / width + 1 - m->row_lo : 0;
    m->piece = piece > 0 ? piece : m->unit;
}

/* naggr > count: aggregator a is the j-th of the m aggregators of its target; its rows. */
static void amp_stripe_rows(const amp_stripe_map_t *m, int a, int64_t *first, int64_t *n)
{
    int64_t t = a % m->count, j = a / m->count;
    int64_t share = (m->naggr - t + m->count - 1) / m->count; /* aggregators of target t */
    *first = m->row_lo + j * m->nrows / share;
    *n = m->row_lo + (j + 1) * m->nrows / share - *first;
}

void amp_stripe_targets(const amp_stripe_map_t *m, int a, int64_t *first, int64_t *n)
{
    if (m->naggr <= m->count) {
        *first = (int64_t)a * m->count / m->naggr;
        *n = (int64_t)(a + 1) * m->count / m->naggr - *first;
    } else {
        *first = a % m->count;
        *n = 1;
    }
}

int amp_stripe_owner(const amp_stripe_map_t *m, int64_t off)
{
    int64_t stripe = off / m->unit, t = stripe % m->count, row = stripe / m->count;
    if (m->naggr <= m->count) /* the last aggregator whose first target is at most t */
        return (int)(((t + 1) * m->naggr - 1) / m->count);
    for (int a = (int)t; a < m->naggr; a += (int)m->count) {
        int64_t first, n;
        amp_stripe_rows(m, a, &first, &n);
        if (row < first + n)
            return a;
    }
    return (int)t; /* past the call's rows: the first aggregator of the target */
}

/* The range of aggregator a in row `row`: its targets' stripes, side by side. */
static void amp_stripe_share(const amp_stripe_map_t *m, int a, int64_t row, int64_t *lo,
                             int64_t *hi)
{
    int64_t first, n;
    amp_stripe_targets(m, a, &first, &n);
    *lo = row * m->unit * m->count + first * m->unit;
    *hi = *lo + n * m->unit;
}

/* Pieces per row of aggregator a. */
static int64_t amp_stripe_pieces(const amp_stripe_map_t *m, int a)
{
    int64_t first, n;
    amp_stripe_targets(m, a, &first, &n);
    return (n * m->unit + m->piece - 1) / m->piece;
}

int64_t amp_stripe_rounds(const amp_stripe_map_t *m, int a)
{
    int64_t rows = m->nrows, first;
    if (m->naggr > m->count)
        amp_stripe_rows(m, a, &first, &rows);
    return rows * amp_stripe_pieces(m, a);
}

void amp_stripe_round(const amp_stripe_map_t *m, int a, int64_t r, int64_t *lo, int64_t *hi)
{
    int64_t per = amp_stripe_pieces(m, a), row = m->row_lo + r / per, n;
    if (m->naggr > m->count) {
        amp_stripe_rows(m, a, &row, &n);
        row += r / per;
    }
    int64_t slo, shi;
    amp_stripe_share(m, a, row, &slo, &shi);
    int64_t plo = slo + r % per * m->piece, phi = amp_min64(plo + m->piece, shi);
    *lo = amp_max64(plo, m->lo);
    *hi = amp_max64(amp_min64(phi, m->hi), *lo);
}

int amp_stripe_touches(const amp_stripe_map_t *m, int a, int64_t lo, int64_t hi)
{
    lo = amp_max64(lo, m->lo);
    hi = amp_min64(hi, m->hi);
    if (lo >= hi)
        return 0;
    int64_t width = m->unit * m->count, row = lo / width, last = m->row_lo + m->nrows, first, n;
    if (m->naggr > m->count) {
        amp_stripe_rows(m, a, &first, &n);
        row = amp_max64(row, first);
        last = first + n;
    }
    for (int k = 0; k < 2 && row < last; k++, row++) { /* this row, else the next one */
        int64_t slo, shi;
        amp_stripe_share(m, a, row, &slo, &shi);
        if (shi > lo)
            return slo < hi;
    }
    return 0;
}
