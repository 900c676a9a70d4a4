#include "core/next.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static amp_next_t amp_next_table;
static pthread_once_t amp_next_once = PTHREAD_ONCE_INIT;

/* The next definition of `name` after ampio's own: the MPI library's. */
static void *amp_next_find(const char *name)
{
    void *sym = dlsym(RTLD_NEXT, name);
    if (!sym) {
        fprintf(stderr, "ampio: the MPI library defines no %s\n", name);
        abort();
    }
    return sym;
}

#define AMP_NEXT_FIND(field, name)                                                                 \
    do {                                                                                           \
        void *sym_ = amp_next_find(name);                                                          \
        memcpy(&amp_next_table.field, &sym_, sizeof(sym_)); /* as POSIX allows */                  \
    } while (0)

static void amp_next_resolve(void)
{
    AMP_NEXT_FIND(wait, "PMPI_Wait");
    AMP_NEXT_FIND(waitall, "PMPI_Waitall");
    AMP_NEXT_FIND(waitany, "PMPI_Waitany");
    AMP_NEXT_FIND(waitsome, "PMPI_Waitsome");
    AMP_NEXT_FIND(test, "PMPI_Test");
    AMP_NEXT_FIND(testall, "PMPI_Testall");
    AMP_NEXT_FIND(testany, "PMPI_Testany");
    AMP_NEXT_FIND(testsome, "PMPI_Testsome");
    AMP_NEXT_FIND(request_get_status, "PMPI_Request_get_status");
    AMP_NEXT_FIND(request_free, "PMPI_Request_free");
}

const amp_next_t *amp_next(void)
{
    pthread_once(&amp_next_once, amp_next_resolve);
    return &amp_next_table;
}
