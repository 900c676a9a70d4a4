/* Stripe-contiguous file domains: the mapping from a layout (the stripe unit and count a Lustre
 * or CephFS file reports) to aggregators, targets and rounds, against hand-computed cases, then
 * exhaustively: the rounds of all aggregators cover the call's extent exactly once, every byte's
 * owner serves the target of its stripe, and no stripe has two owners. */
#include <stdlib.h>

#include "coll/stripe_map.h"
#include "unit.h"

static void round_is(const amp_stripe_map_t *m, int a, int64_t r, int64_t lo, int64_t hi)
{
    int64_t l, h;
    amp_stripe_round(m, a, r, &l, &h);
    UNIT_EQ(l, lo);
    UNIT_EQ(h, hi);
}

static void hand_computed(void)
{
    amp_stripe_map_t m;
    /* 3 targets of 4-byte stripes, 3 aggregators, 3 rows: one target each */
    amp_stripe_map_init(&m, 4, 3, 3, 0, 36, 4);
    UNIT_EQ(m.nrows, 3);
    int64_t first, n;
    amp_stripe_targets(&m, 1, &first, &n);
    UNIT_EQ(first, 1);
    UNIT_EQ(n, 1);
    UNIT_EQ(amp_stripe_rounds(&m, 1), 3);
    round_is(&m, 1, 0, 4, 8);
    round_is(&m, 1, 1, 16, 20);
    round_is(&m, 1, 2, 28, 32);
    UNIT_EQ(amp_stripe_owner(&m, 17), 1);
    UNIT_EQ(amp_stripe_owner(&m, 35), 2);

    /* 2 aggregators over 3 targets: {0} and {1, 2}, side by side in each row */
    amp_stripe_map_init(&m, 4, 3, 2, 0, 24, 4);
    amp_stripe_targets(&m, 1, &first, &n);
    UNIT_EQ(first, 1);
    UNIT_EQ(n, 2);
    UNIT_EQ(amp_stripe_rounds(&m, 0), 2);
    UNIT_EQ(amp_stripe_rounds(&m, 1), 4);
    round_is(&m, 1, 0, 4, 8);
    round_is(&m, 1, 3, 20, 24);
    UNIT_EQ(amp_stripe_owner(&m, 3), 0);
    UNIT_EQ(amp_stripe_owner(&m, 5), 1);
    UNIT_EQ(amp_stripe_owner(&m, 13), 0);
    /* pieces of 8 bytes: a whole share of a row per round */
    amp_stripe_map_init(&m, 4, 3, 2, 0, 24, 8);
    UNIT_EQ(amp_stripe_rounds(&m, 1), 2);
    round_is(&m, 1, 1, 16, 24);

    /* 5 aggregators over 2 targets of 10 bytes (client/OST ratio 3): target 0 has aggregators
     * 0, 2, 4 with rows [0,3), [3,6), [6,10); target 1 has 1, 3 with rows [0,5), [5,10) */
    amp_stripe_map_init(&m, 10, 2, 5, 0, 200, 10);
    UNIT_EQ(m.nrows, 10);
    UNIT_EQ(amp_stripe_rounds(&m, 0), 3);
    UNIT_EQ(amp_stripe_rounds(&m, 2), 3);
    UNIT_EQ(amp_stripe_rounds(&m, 4), 4);
    UNIT_EQ(amp_stripe_rounds(&m, 1), 5);
    UNIT_EQ(amp_stripe_rounds(&m, 3), 5);
    round_is(&m, 4, 1, 140, 150);
    round_is(&m, 3, 0, 110, 120);
    round_is(&m, 2, 0, 60, 70);
    UNIT_EQ(amp_stripe_owner(&m, 145), 4);
    UNIT_EQ(amp_stripe_owner(&m, 115), 3);
    UNIT_EQ(amp_stripe_owner(&m, 55), 1);
    UNIT_EQ(amp_stripe_owner(&m, 60), 2);
    amp_stripe_targets(&m, 3, &first, &n);
    UNIT_EQ(first, 1);
    UNIT_EQ(n, 1);

    /* an extent that starts and ends inside rows: rounds outside it are empty */
    amp_stripe_map_init(&m, 4, 3, 3, 6, 30, 4);
    UNIT_EQ(m.row_lo, 0);
    UNIT_EQ(m.nrows, 3);
    round_is(&m, 0, 0, 6, 6);
    round_is(&m, 1, 0, 6, 8);
    round_is(&m, 0, 2, 24, 28);
    round_is(&m, 2, 2, 32, 32);
    UNIT_CHECK(!amp_stripe_touches(&m, 0, 6, 12));
    UNIT_CHECK(amp_stripe_touches(&m, 0, 6, 13));
    UNIT_CHECK(amp_stripe_touches(&m, 2, 8, 9));
    UNIT_CHECK(!amp_stripe_touches(&m, 2, 12, 20));

    /* the count: about k bytes each, at most co_ratio per target and one per process */
    UNIT_EQ(amp_stripe_naggr(8, 16, 3, 1), 3);
    UNIT_EQ(amp_stripe_naggr(8, 16, 3, 2), 6);
    UNIT_EQ(amp_stripe_naggr(8, 4, 3, 4), 4);
    UNIT_EQ(amp_stripe_naggr(0, 4, 3, 1), 1);
    UNIT_EQ(amp_stripe_naggr(2, 4, 1, 1), 1);
}

/* Every byte of [lo, hi) in exactly one round of exactly one aggregator, that aggregator its
 * owner, serving the byte's target; rounds of an aggregator ascend. */
static void exhaustive(int64_t unit, int64_t count, int naggr, int64_t lo, int64_t hi,
                       int64_t piece)
{
    amp_stripe_map_t m;
    amp_stripe_map_init(&m, unit, count, naggr, lo, hi, piece);
    int64_t len = hi - lo;
    int *seen = calloc((size_t)len + 1, sizeof(int));
    int *by = calloc((size_t)len + 1, sizeof(int));
    for (int a = 0; a < naggr; a++) {
        int64_t prev = lo, first, n;
        amp_stripe_targets(&m, a, &first, &n);
        for (int64_t r = 0; r < amp_stripe_rounds(&m, a); r++) {
            int64_t l, h;
            amp_stripe_round(&m, a, r, &l, &h);
            UNIT_CHECK(l <= h && l >= prev);
            UNIT_CHECK(h - l <= piece);
            prev = h;
            for (int64_t off = l; off < h; off++) {
                seen[off - lo]++;
                by[off - lo] = a;
                int64_t t = off / unit % count;
                UNIT_CHECK(t >= first && t < first + n);
            }
            if (h > l)
                UNIT_CHECK(amp_stripe_touches(&m, a, l, h));
        }
    }
    int bad = 0;
    for (int64_t off = lo; off < hi && bad < 3; off++) {
        if (seen[off - lo] != 1 || amp_stripe_owner(&m, off) != by[off - lo]) {
            bad++;
            UNIT_EQ(seen[off - lo], 1);
            UNIT_EQ(amp_stripe_owner(&m, off), by[off - lo]);
        }
        /* one owner per stripe */
        if (off > lo && off / unit == (off - 1) / unit && by[off - lo] != by[off - lo - 1]) {
            bad++;
            UNIT_CHECK(!"a stripe with two owners");
        }
    }
    free(seen);
    free(by);
}

int main(void)
{
    hand_computed();
    srand(7);
    for (int i = 0; i < 400; i++) {
        int64_t unit = 1 + rand() % 9, count = 1 + rand() % 6;
        int naggr = 1 + rand() % 9;
        int64_t lo = rand() % 50, hi = lo + rand() % 300, piece = 1 + rand() % 20;
        exhaustive(unit, count, naggr, lo, hi, piece);
    }
    return unit_report("test_stripe_map");
}
