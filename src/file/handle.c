#include "file/handle.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/err.h"
#include "core/fault.h"

/* Slot 0 stands for MPI_FILE_NULL, as both MPI families number it. */
static amp_file_t **amp_handle_slots;
static size_t amp_handle_cap;
static pthread_mutex_t amp_handle_lock = PTHREAD_MUTEX_INITIALIZER;

int amp_handle_add(amp_file_t *f)
{
    pthread_mutex_lock(&amp_handle_lock);
    size_t i = 1;
    while (i < amp_handle_cap && amp_handle_slots[i])
        i++;
    if (i >= amp_handle_cap) {
        size_t cap = amp_handle_cap ? 2 * amp_handle_cap : 64;
        amp_file_t **slots = amp_realloc(amp_handle_slots, cap * sizeof(*slots));
        if (!slots) {
            pthread_mutex_unlock(&amp_handle_lock);
            return amp_err(MPI_ERR_NO_MEM, "out of memory registering a file handle");
        }
        for (size_t k = amp_handle_cap; k < cap; k++)
            slots[k] = NULL;
        amp_handle_slots = slots;
        amp_handle_cap = cap;
        if (i == 0)
            i = 1;
    }
    amp_handle_slots[i] = f;
    f->fint = (MPI_Fint)i;
    pthread_mutex_unlock(&amp_handle_lock);
    return MPI_SUCCESS;
}

void amp_handle_remove(amp_file_t *f)
{
    pthread_mutex_lock(&amp_handle_lock);
    if (f->fint > 0 && (size_t)f->fint < amp_handle_cap && amp_handle_slots[f->fint] == f)
        amp_handle_slots[f->fint] = NULL;
    pthread_mutex_unlock(&amp_handle_lock);
}

amp_file_t *amp_handle_get(MPI_File fh)
{
    if (fh == MPI_FILE_NULL)
        return NULL;
    amp_file_t *found = NULL;
    pthread_mutex_lock(&amp_handle_lock);
    for (size_t i = 1; i < amp_handle_cap; i++) {
        if (amp_handle_slots[i] && amp_file_handle(amp_handle_slots[i]) == fh) {
            found = amp_handle_slots[i];
            break;
        }
    }
    pthread_mutex_unlock(&amp_handle_lock);
    return found && found->magic == AMP_FILE_MAGIC ? found : NULL;
}

MPI_File amp_handle_from_fint(MPI_Fint fint)
{
    MPI_File fh = MPI_FILE_NULL;
    pthread_mutex_lock(&amp_handle_lock);
    if (fint > 0 && (size_t)fint < amp_handle_cap && amp_handle_slots[fint])
        fh = amp_file_handle(amp_handle_slots[fint]);
    pthread_mutex_unlock(&amp_handle_lock);
    return fh;
}

void amp_handle_foreach(void (*fn)(amp_file_t *))
{
    for (size_t i = 1; i < amp_handle_cap; i++) {
        pthread_mutex_lock(&amp_handle_lock);
        amp_file_t *f = i < amp_handle_cap ? amp_handle_slots[i] : NULL;
        pthread_mutex_unlock(&amp_handle_lock);
        if (f)
            fn(f);
    }
}

amp_file_t *amp_handle_find(int (*match)(amp_file_t *, void *), void *ctx)
{
    amp_file_t *found = NULL;
    pthread_mutex_lock(&amp_handle_lock);
    for (size_t i = 1; i < amp_handle_cap && !found; i++)
        if (amp_handle_slots[i] && match(amp_handle_slots[i], ctx))
            found = amp_handle_slots[i];
    pthread_mutex_unlock(&amp_handle_lock);
    return found;
}
