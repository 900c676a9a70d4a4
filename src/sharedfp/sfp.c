/* Shared file pointers: choosing the component of a file and dispatching to it. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "core/cfg.h"
#include "core/err.h"
#include "core/fault.h"
#include "sharedfp/sfp.h"
#include "sharedfp/sfp_impl.h"

static const amp_sfp_ops_t *amp_sfp_named[] = {
    [AMP_SFP_SHM] = &amp_sfp_shm_ops,
    [AMP_SFP_RMA] = &amp_sfp_rma_ops,
    [AMP_SFP_LOCKEDFILE] = &amp_sfp_lockedfile_ops,
    [AMP_SFP_ADDPROC] = &amp_sfp_addproc_ops,
    [AMP_SFP_INDIVIDUAL] = &amp_sfp_individual_ops,
    [AMP_SFP_SINGLE] = &amp_sfp_single_ops,
};

/* A rank that succeeded alone undoes it locally. */
int amp_sfp_try(amp_sfp_t *s, const amp_sfp_ops_t *ops)
{
    s->ops = ops;
    int rc = ops->create(s), ok = rc == MPI_SUCCESS, all = 0;
    if (ops->agreed)
        return rc;
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, s->comm) != MPI_SUCCESS)
        all = 0; /* not known to be everywhere: nowhere */
    if (ok && !all)
        ops->destroy(s, AMP_SFP_DESTROY_LOCAL);
    return all ? MPI_SUCCESS : (rc != MPI_SUCCESS ? rc : MPI_ERR_OTHER);
}

/* Rank 0's name for this open, one no other open of any process shares, in two words. */
static void amp_sfp_token_make(uint64_t words[2])
{
    static unsigned long opens;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long n = __atomic_fetch_add(&opens, 1, __ATOMIC_RELAXED);
    words[0] = (uint64_t)getpid() << 32 | (n & 0xffffffffu);
    words[1] = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20);
}

static void amp_sfp_token_set(amp_sfp_t *s, const uint64_t words[2])
{
    snprintf(s->token, sizeof(s->token), "%lx-%lx-%lx", (unsigned long)(words[0] >> 32),
             (unsigned long)(words[0] & 0xffffffffu), (unsigned long)words[1]);
}

/* The name of this open, agreed by every rank: from the open's reduction (`offered`), else
 * rank 0's, broadcast. */
static int amp_sfp_token(amp_sfp_t *s, const uint64_t *offered)
{
    uint64_t words[2] = {0, 0};
    if (offered) {
        amp_sfp_token_set(s, offered);
        return MPI_SUCCESS;
    }
    if (s->rank == 0)
        amp_sfp_token_make(words);
    int rc = PMPI_Bcast(words, 2, MPI_UINT64_T, 0, s->comm);
    amp_sfp_token_set(s, words);
    return rc;
}

int amp_sfp_prepare(amp_file_t *f)
{
    amp_sfp_t *s = amp_calloc(1, sizeof(*s));
    if (!s)
        return amp_err(MPI_ERR_NO_MEM, "out of memory for a shared file pointer");
    s->f = f;
    s->comm = f->comm;
    s->rank = f->rank;
    s->nprocs = f->nprocs;
    f->sfp = s;
    return MPI_SUCCESS;
}

/* Frees the file's pointer; its component, if one was made, first (amp_sfp_destroy_t). */
static void amp_sfp_free(amp_file_t *f, amp_sfp_destroy_t how)
{
    amp_sfp_t *s = f->sfp;
    if (s && s->ops)
        s->ops->destroy(s, how);
    free(s);
    f->sfp = NULL;
}

/* The open's words: a slot offered (automatic choice), then the open's name (rank 0's). */
enum { AMP_SFP_OPEN_SLOT = 0, AMP_SFP_OPEN_TOKEN = AMP_SFP_SLOT_WORDS };
_Static_assert(AMP_SFP_OPEN_WORDS == AMP_SFP_SLOT_WORDS + 2, "a slot's words and a token");

void amp_sfp_open_offer(amp_file_t *f, uint64_t *words)
{
    for (int i = 0; i < AMP_SFP_OPEN_WORDS; i++)
        words[i] = 0;
    if (f->sfp && f->rank == 0)
        amp_sfp_token_make(words + AMP_SFP_OPEN_TOKEN);
    if (f->sfp && amp_cfg_num(&f->cfg, AMP_CFG_AMPIO_SHAREDFP) == AMP_SFP_AUTO)
        amp_sfp_offer_window(f->sfp, words + AMP_SFP_OPEN_SLOT);
}

void amp_sfp_open_withdraw(amp_file_t *f)
{
    if (f->sfp && amp_cfg_num(&f->cfg, AMP_CFG_AMPIO_SHAREDFP) == AMP_SFP_AUTO)
        amp_sfp_withdraw_window(f->sfp);
}

int amp_sfp_open(amp_file_t *f, const uint64_t *offered)
{
    amp_sfp_t *s = f->sfp;
    int method = (int)amp_cfg_num(&f->cfg, AMP_CFG_AMPIO_SHAREDFP), rc = MPI_ERR_OTHER;
    const uint64_t *token = offered ? offered + AMP_SFP_OPEN_TOKEN : NULL;
    if (method == AMP_SFP_LOCKEDFILE || method == AMP_SFP_INDIVIDUAL || method == AMP_SFP_SINGLE)
        if ((rc = amp_sfp_token(s, token)) != MPI_SUCCESS)
            method = AMP_SFP_AUTO;
    /* a component that cannot serve this file (addproc where the MPI can neither spawn nor host
     * a keeper thread, shm across nodes) gives way to the automatic choice rather than failing
     * the open */
    if (method != AMP_SFP_AUTO)
        rc = amp_sfp_try(s, amp_sfp_named[method]);
    int named_failed = method != AMP_SFP_AUTO && rc != MPI_SUCCESS;
    if (method == AMP_SFP_AUTO || rc != MPI_SUCCESS) {
        /* lockedfile is right wherever the pointer's side file is (sfp_lockedfile.c) */
        rc = method == AMP_SFP_AUTO && offered
                 ? amp_sfp_accept_window(s, offered + AMP_SFP_OPEN_SLOT)
                 : amp_sfp_create_window(s);
        if (rc != MPI_SUCCESS && (rc = amp_sfp_token(s, token)) == MPI_SUCCESS)
            rc = amp_sfp_try(s, &amp_sfp_lockedfile_ops);
    }
    if (named_failed && rc == MPI_SUCCESS)
        amp_cfg_note(&f->cfg, "ampio_sharedfp=%s cannot serve this file: %s used",
                     amp_sfp_named[method]->name, s->ops->name);
    if (rc != MPI_SUCCESS) {
        s->ops = NULL; /* every attempt undid itself */
        amp_sfp_free(f, AMP_SFP_DESTROY_LOCAL);
        return amp_err(amp_err_class(rc), "cannot create a shared file pointer for \"%s\"",
                       f->path);
    }
    return MPI_SUCCESS;
}

int amp_sfp_close(amp_file_t *f)
{
    if (!f->sfp)
        return MPI_SUCCESS;
    int rc = f->sfp->ops ? amp_sfp_sync(f) : MPI_SUCCESS;
    amp_sfp_free(f, AMP_SFP_DESTROY_COLLECTIVE);
    return rc;
}

int amp_sfp_close_sync(amp_file_t *f)
{
    return f->sfp && f->sfp->ops ? amp_sfp_sync(f) : MPI_SUCCESS;
}

void amp_sfp_close_free(amp_file_t *f)
{
    amp_sfp_free(f, AMP_SFP_DESTROY_ORDERED);
}

void amp_sfp_reap(amp_file_t *f)
{
    amp_sfp_free(f, AMP_SFP_DESTROY_LOCAL);
}

static void amp_sfp_note_moved(amp_sfp_t *s)
{
    __atomic_store_n(&s->moved, 1, __ATOMIC_RELAXED);
}

int amp_sfp_fetch_add(amp_file_t *f, MPI_Offset delta, MPI_Offset *before)
{
    amp_sfp_note_moved(f->sfp);
    return f->sfp->ops->fetch_add(f->sfp, delta, before);
}

int amp_sfp_fetch_add_collective(amp_file_t *f, MPI_Offset delta, MPI_Offset *before)
{
    amp_sfp_note_moved(f->sfp);
    const amp_sfp_ops_t *ops = f->sfp->ops;
    return (ops->fetch_add_collective ? ops->fetch_add_collective : ops->fetch_add)(f->sfp, delta,
                                                                                    before);
}

int amp_sfp_get(amp_file_t *f, MPI_Offset *value)
{
    return f->sfp->ops->get(f->sfp, value);
}

int amp_sfp_set(amp_file_t *f, MPI_Offset value)
{
    amp_sfp_note_moved(f->sfp);
    return f->sfp->ops->set(f->sfp, value);
}

int amp_sfp_moved(const amp_file_t *f)
{
    return f->sfp && __atomic_load_n(&f->sfp->moved, __ATOMIC_RELAXED);
}

int amp_sfp_reset(amp_file_t *f, int moved)
{
    if (!moved)
        return MPI_SUCCESS; /* still where it was reset last on every rank */
    int rc = f->rank == 0 ? amp_sfp_set(f, 0) : MPI_SUCCESS;
    __atomic_store_n(&f->sfp->moved, 0, __ATOMIC_RELAXED);
    return rc;
}

int amp_sfp_sync(amp_file_t *f)
{
    amp_sfp_t *s = f->sfp;
    return s && s->ops->sync ? s->ops->sync(s) : MPI_SUCCESS;
}

int amp_sfp_write_deferred(amp_file_t *f, const void *buf, MPI_Count count, MPI_Datatype type,
                           amp_dt_t *mdt, MPI_Count bytes, int *deferred)
{
    amp_sfp_t *s = f->sfp;
    *deferred = s->ops->write != NULL;
    if (*deferred)
        amp_sfp_note_moved(s);
    return *deferred ? s->ops->write(s, buf, count, type, mdt, bytes) : MPI_SUCCESS;
}

const char *amp_sfp_method(const amp_file_t *f)
{
    return f->sfp ? f->sfp->ops->name : "none";
}
