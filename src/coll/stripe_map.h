/* Stripe-contiguous file domains (the method of the Lustre collective write driver): a stripe of
 * `unit` bytes lies on target (offset / unit) mod count, and a row is one stripe of every target,
 * count x unit bytes. Each aggregator owns whole stripes of a fixed set of targets, so that no
 * two aggregators ever touch one stripe and each talks to as few targets as possible:
 *
 *   naggr <= count: aggregator a owns the targets [a*count/naggr, (a+1)*count/naggr), which lie
 *     side by side in every row: its share of a row is one range of the file;
 *   naggr > count: aggregator a serves target a mod count, together with the other aggregators of
 *     that target (at most the client/OST ratio of them); they split the call's rows into
 *     consecutive blocks, so that each writes one contiguous part of the target's object.
 *
 * An aggregator's rounds take its share of one row (or its stripe of one row), cut into pieces of
 * at most `piece` bytes; round r of every aggregator lies in the same row when naggr <= count.
 * Pure computation, free of MPI: every rank maps alike and the unit tests need no MPI. */
#ifndef AMP_STRIPE_MAP_H
#define AMP_STRIPE_MAP_H

#include <stdint.h>

typedef struct amp_stripe_map {
    int64_t unit, count; /* the layout */
    int naggr;
    int64_t lo, hi;        /* the call's extent */
    int64_t row_lo, nrows; /* rows of the call */
    int64_t piece;         /* most bytes of one round */
} amp_stripe_map_t;

/* The number of aggregators: `want` (the data over k, or a hint), at most `nprocs` and at most
 * co_ratio per target, at least 1. */
int amp_stripe_naggr(int64_t want, int nprocs, int64_t count, int64_t co_ratio);

void amp_stripe_map_init(amp_stripe_map_t *m, int64_t unit, int64_t count, int naggr, int64_t lo,
                         int64_t hi, int64_t piece);

/* The targets of aggregator a: [*first, *first + *n). */
void amp_stripe_targets(const amp_stripe_map_t *m, int a, int64_t *first, int64_t *n);

/* The aggregator that owns file offset `off` (within the call's rows). */
int amp_stripe_owner(const amp_stripe_map_t *m, int64_t off);

/* Rounds of aggregator a, and the file range [*lo, *hi) of its round r (empty, lo == hi, where
 * the range falls outside the call's extent). */
int64_t amp_stripe_rounds(const amp_stripe_map_t *m, int a);
void amp_stripe_round(const amp_stripe_map_t *m, int a, int64_t r, int64_t *lo, int64_t *hi);

/* Whether aggregator a owns any byte of [lo, hi). */
int amp_stripe_touches(const amp_stripe_map_t *m, int a, int64_t lo, int64_t hi);

#endif
