/* A minimal harness for the unit tests of ampio's internal layers. */
#ifndef AMPIO_UNIT_H
#define AMPIO_UNIT_H

#include <stdio.h>

static int unit_failures;

#define UNIT_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            unit_failures++;                                                                       \
        }                                                                                          \
    } while (0)

#define UNIT_EQ(a, b)                                                                              \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_) {                                                                            \
            fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, #a,    \
                    a_, #b, b_);                                                                   \
            unit_failures++;                                                                       \
        }                                                                                          \
    } while (0)

static inline int unit_report(const char *name)
{
    if (unit_failures)
        fprintf(stderr, "%s: %d check(s) failed\n", name, unit_failures);
    else
        printf("%s: all checks passed\n", name);
    return unit_failures ? 1 : 0;
}

#endif
