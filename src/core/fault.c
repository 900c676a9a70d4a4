#include "core/fault.h"

#include <errno.h>
#include <execinfo.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int amp_fault_on;

static const char *const amp_fault_names[AMP_FAULT_KINDS] = {"allocation", "file system",
                                                             "communication"};
static long long amp_fault_at[AMP_FAULT_KINDS]; /* the call that fails, 0: none */
static atomic_llong amp_fault_count[AMP_FAULT_KINDS];
static atomic_int amp_fault_fired[AMP_FAULT_KINDS];
static int amp_fault_fs_kind = EIO; /* or AMP_FAULT_SHORT */
static int amp_fault_report_on, amp_fault_rank;

static long long amp_fault_env(const char *name, const char **rest)
{
    const char *v = getenv(name);
    *rest = "";
    if (!v || !*v)
        return 0;
    char *end = NULL;
    long long n = strtoll(v, &end, 10);
    *rest = end;
    return n > 0 ? n : 0;
}

void amp_fault_init(int world_rank)
{
    const char *rest = "";
    amp_fault_rank = world_rank;
    amp_fault_report_on = getenv("AMPIO_FAULT_REPORT") && atoi(getenv("AMPIO_FAULT_REPORT")) > 0;
    const char *only = getenv("AMPIO_FAULT_RANK");
    int mine = !only || !*only || atoi(only) == world_rank;
    amp_fault_at[AMP_FAULT_ALLOC] = mine ? amp_fault_env("AMPIO_FAULT_ALLOC", &rest) : 0;
    amp_fault_at[AMP_FAULT_COMM] = mine ? amp_fault_env("AMPIO_FAULT_COMM", &rest) : 0;
    amp_fault_at[AMP_FAULT_FS] = mine ? amp_fault_env("AMPIO_FAULT_FS", &rest) : 0;
    if (*rest == ':') {
        const char *kind = rest + 1;
        amp_fault_fs_kind = strcmp(kind, "enospc") == 0  ? ENOSPC
                            : strcmp(kind, "eintr") == 0 ? EINTR
                            : strcmp(kind, "short") == 0 ? AMP_FAULT_SHORT
                                                         : EIO;
    }
    for (int k = 0; k < AMP_FAULT_KINDS; k++) {
        atomic_store(&amp_fault_count[k], 0);
        atomic_store(&amp_fault_fired[k], 0);
    }
    amp_fault_on = amp_fault_report_on || amp_fault_at[AMP_FAULT_ALLOC] > 0 ||
                   amp_fault_at[AMP_FAULT_COMM] > 0 || amp_fault_at[AMP_FAULT_FS] > 0;
}

void amp_fault_report(void)
{
    if (!amp_fault_report_on)
        return;
    char line[256];
    int at = snprintf(line, sizeof(line), "ampio: fault report rank %d:", amp_fault_rank);
    for (int k = 0; k < AMP_FAULT_KINDS && at > 0 && (size_t)at < sizeof(line); k++)
        at += snprintf(line + at, sizeof(line) - (size_t)at, " %s %lld%s", amp_fault_names[k],
                       (long long)atomic_load(&amp_fault_count[k]),
                       atomic_load(&amp_fault_fired[k]) ? " (fired)" : "");
    fprintf(stderr, "%s\n", line); /* one write: the ranks' lines do not interleave */
}

int amp_fault_hit(int kind)
{
    if (!amp_fault_on)
        return 0;
    long long n = atomic_fetch_add(&amp_fault_count[kind], 1) + 1;
    if (n != amp_fault_at[kind])
        return 0;
    atomic_store(&amp_fault_fired[kind], 1);
    if (amp_fault_report_on) { /* where: the sweep prints it when a run fails */
        fprintf(stderr, "ampio: fault injected: %s call %lld on rank %d\n", amp_fault_names[kind],
                n, amp_fault_rank);
        void *frames[16];
        backtrace_symbols_fd(frames, backtrace(frames, 16), 2);
    }
    return 1;
}

int amp_fault_fs_call(int transfer)
{
    /* a short transfer is a fault of data transfers only: other calls are not counted */
    if (amp_fault_fs_kind == AMP_FAULT_SHORT && !transfer)
        return 0;
    return amp_fault_hit(AMP_FAULT_FS) ? amp_fault_fs_kind : 0;
}

void *amp_malloc(size_t size)
{
    return amp_fault_hit(AMP_FAULT_ALLOC) ? NULL : malloc(size);
}

void *amp_calloc(size_t n, size_t size)
{
    return amp_fault_hit(AMP_FAULT_ALLOC) ? NULL : calloc(n, size);
}

void *amp_realloc(void *p, size_t size)
{
    return amp_fault_hit(AMP_FAULT_ALLOC) ? NULL : realloc(p, size);
}

char *amp_strdup(const char *s)
{
    return amp_fault_hit(AMP_FAULT_ALLOC) ? NULL : strdup(s);
}

char *amp_strndup(const char *s, size_t n)
{
    return amp_fault_hit(AMP_FAULT_ALLOC) ? NULL : strndup(s, n);
}
