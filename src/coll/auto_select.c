#include "coll/auto_select.h"

#include <stdlib.h>
#include <string.h>

#include "core/fault.h"

const char *const amp_grouping_names[] = {"file view", "cartesian communicator",
                                          "ampio_topology hint", "none"};

int amp_auto_group_by_extents(int nprocs, const int64_t *lo, const int64_t *hi,
                              const int64_t *bytes, int stride, int *first)
{
    int n = 0;
    int64_t glo = 0, ghi = 0; /* extent of the current group's data */
    int has_data = 0;
    first[n++] = 0;
    for (int r = 0; r < nprocs; r++) {
        size_t i = (size_t)r * (size_t)stride;
        if (bytes[i] == 0)
            continue; /* no data: stays with the group it falls in */
        if (has_data && (lo[i] >= ghi || hi[i] <= glo)) {
            first[n++] = r;
            has_data = 0;
        }
        if (!has_data || lo[i] < glo)
            glo = lo[i];
        if (!has_data || hi[i] > ghi)
            ghi = hi[i];
        has_data = 1;
    }
    first[n] = nprocs;
    return n;
}

int amp_auto_group_by_dims(int nprocs, int ndims, const int *dims, int *first)
{
    if (ndims < 1)
        return 0;
    long long total = 1;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] < 1)
            return 0;
        total *= dims[d];
    }
    if (total != nprocs)
        return 0;
    int line = dims[ndims - 1], n = nprocs / line;
    for (int g = 0; g <= n; g++)
        first[g] = g * line;
    return n;
}

int amp_auto_parse_topology(const char *text, int *dims, int max)
{
    int n = 0;
    const char *p = text;
    while (p && *p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > (1L << 30) || n == max)
            return 0;
        dims[n++] = (int)v;
        if (*end == '\0')
            return n;
        if (*end != 'x' && *end != 'X')
            return 0;
        p = end + 1;
    }
    return 0;
}

static int64_t amp_group_bytes(const int64_t *bytes, int stride, int from, int to)
{
    int64_t sum = 0;
    for (int r = from; r < to; r++)
        sum += bytes[(size_t)r * (size_t)stride];
    return sum;
}

static int64_t amp_abs64(int64_t x)
{
    return x < 0 ? -x : x;
}

/* Splits ranks [from, to) holding `total` bytes into m groups of about total/m bytes each,
 * cutting between ranks; stores the starts of groups 2..m in cuts and returns m - 1. */
static int amp_split(const int64_t *bytes, int stride, int from, int to, int64_t total, int m,
                     int *cuts)
{
#define AMP_B(r) bytes[(size_t)(r) * (size_t)stride]
    int at = from;
    int64_t acc = 0;
    for (int j = 1; j < m; j++) {
        int64_t target = total * j / m;
        acc += AMP_B(at++); /* every group gets a rank; the rest one each at least */
        while (at < to - (m - j) &&
               (AMP_B(at) == 0 || amp_abs64(acc + AMP_B(at) - target) < amp_abs64(acc - target)))
            acc += AMP_B(at++);
        cuts[j - 1] = at;
    }
    return m - 1;
#undef AMP_B
}

int amp_auto_refine(int nprocs, const int64_t *bytes, int stride, int64_t k,
                    const amp_groups_t *initial, amp_groups_t *out)
{
    if (k < 1)
        k = 1;
    out->n = 0;
    out->first = amp_malloc(((size_t)nprocs + 1) * sizeof(int));
    int64_t *gb = amp_malloc(((size_t)nprocs + 1) * sizeof(int64_t));
    int *cuts = amp_malloc(((size_t)nprocs + 1) * sizeof(int));
    if (!out->first || !gb || !cuts) {
        free(out->first);
        out->first = NULL;
        free(gb);
        free(cuts);
        return -1;
    }
    int n = 0;
    int64_t total = amp_group_bytes(bytes, stride, 0, nprocs);
    if (total >= (int64_t)nprocs * k) {
        /* far more data than the processes can saturate: every process aggregates, in cycles */
        for (int r = 0; r < nprocs; r++) {
            out->first[r] = r;
            gb[r] = bytes[(size_t)r * (size_t)stride];
        }
        n = nprocs;
    } else {
        /* split groups above k into balanced subgroups */
        for (int g = 0; g < initial->n; g++) {
            int from = initial->first[g], to = initial->first[g + 1];
            int64_t b = amp_group_bytes(bytes, stride, from, to);
            int64_t want = (b + k / 2) / k; /* the nearest count, so pieces stay near k */
            int m = want > to - from ? to - from : (int)want;
            out->first[n] = from;
            if (m <= 1) {
                gb[n++] = b;
                continue;
            }
            int ncut = amp_split(bytes, stride, from, to, b, m, cuts);
            for (int c = 0; c <= ncut; c++) {
                int start = c == 0 ? from : cuts[c - 1], end = c == ncut ? to : cuts[c];
                out->first[n] = start;
                gb[n++] = amp_group_bytes(bytes, stride, start, end);
            }
        }
        /* merge groups below k with the next while that brings them closer to k */
        int m = 0;
        for (int g = 0; g < n; g++) {
            if (m > 0 && gb[m - 1] < k &&
                amp_abs64(gb[m - 1] + gb[g] - k) <= amp_abs64(gb[m - 1] - k)) {
                gb[m - 1] += gb[g];
                continue;
            }
            out->first[m] = out->first[g];
            gb[m++] = gb[g];
        }
        n = m;
        /* a group left far below k joins its smaller neighbour */
        for (int g = 0; n > 1 && g < n;) {
            if (gb[g] * 2 >= k) {
                g++;
                continue;
            }
            int into = g == 0 ? 1 : g == n - 1 ? g - 1 : gb[g - 1] <= gb[g + 1] ? g - 1 : g + 1;
            int lo = into < g ? into : g;
            gb[lo] = gb[g] + gb[into];
            memmove(&out->first[lo + 1], &out->first[lo + 2], (size_t)(n - lo - 2) * sizeof(int));
            memmove(&gb[lo + 1], &gb[lo + 2], (size_t)(n - lo - 2) * sizeof(int64_t));
            n--;
            g = lo; /* the groups before lo are unchanged and at least k/2 */
        }
    }
    out->first[n] = nprocs;
    out->n = n;
    free(gb);
    free(cuts);
    return 0;
}

void amp_groups_free(amp_groups_t *g)
{
    free(g->first);
    g->first = NULL;
    g->n = 0;
}
