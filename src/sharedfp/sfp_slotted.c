/* The components whose pointer is a slot of a pool the group's files share (sfp_pool.h), so
 * that an open pays for one small reduction: "shm" and "rma" (sfp_window.c) and "addproc"
 * (sfp_addproc.c). */
#include "core/cfg.h"
#include "sharedfp/sfp_impl.h"
#include "sharedfp/sfp_pool.h"

static int amp_sfp_slotted_take(amp_sfp_t *s, amp_sfp_pool_kind_t kind)
{
    return amp_sfp_slot_take(s->comm, kind, &s->slot);
}

static int amp_sfp_shm_create(amp_sfp_t *s)
{
    return amp_sfp_slotted_take(s, AMP_SFP_POOL_SHM);
}

static int amp_sfp_rma_create(amp_sfp_t *s)
{
    return amp_sfp_slotted_take(s, AMP_SFP_POOL_RMA);
}

/* The keeper the hint ampio_sharedfp_addproc asks for ("auto": spawned, else a thread). */
static int amp_sfp_addproc_create(amp_sfp_t *s)
{
    static const amp_sfp_pool_kind_t kinds[] = {AMP_SFP_POOL_KEEPER, AMP_SFP_POOL_SPAWN,
                                                AMP_SFP_POOL_THREAD};
    return amp_sfp_slotted_take(s, kinds[amp_cfg_num(&s->f->cfg, AMP_CFG_AMPIO_SHAREDFP_ADDPROC)]);
}

static void amp_sfp_slotted_destroy(amp_sfp_t *s, int how)
{
    amp_sfp_slot_release(&s->slot, how);
}

static int amp_sfp_slotted_fetch_add(amp_sfp_t *s, MPI_Offset delta, MPI_Offset *before)
{
    return amp_sfp_slot_fetch_add(&s->slot, delta, before);
}

static int amp_sfp_slotted_get(amp_sfp_t *s, MPI_Offset *value)
{
    return amp_sfp_slot_get(&s->slot, value);
}

static int amp_sfp_slotted_set(amp_sfp_t *s, MPI_Offset value)
{
    return amp_sfp_slot_set(&s->slot, value);
}

/* A component whose pointer is a slot; the create step picks the pool. */
#define AMP_SFP_SLOTTED_OPS(label, make)                                                           \
    {                                                                                              \
        .name = label, .create = make, .agreed = 1, .destroy = amp_sfp_slotted_destroy,            \
        .fetch_add = amp_sfp_slotted_fetch_add, .get = amp_sfp_slotted_get,                        \
        .set = amp_sfp_slotted_set                                                                 \
    }

const amp_sfp_ops_t amp_sfp_shm_ops = AMP_SFP_SLOTTED_OPS("shm", amp_sfp_shm_create);

const amp_sfp_ops_t amp_sfp_rma_ops = AMP_SFP_SLOTTED_OPS("rma", amp_sfp_rma_create);

static int amp_sfp_any_create(amp_sfp_t *s)
{
    return amp_sfp_slotted_take(s, AMP_SFP_POOL_ANY);
}

/* Stands for shm or rma until the pool's kind is known. */
static const amp_sfp_ops_t amp_sfp_any_ops = {
    .name = "window",
    .create = amp_sfp_any_create,
    .agreed = 1,
    .destroy = amp_sfp_slotted_destroy,
};

const amp_sfp_ops_t amp_sfp_addproc_ops = AMP_SFP_SLOTTED_OPS("addproc", amp_sfp_addproc_create);

static void amp_sfp_window_kind(amp_sfp_t *s)
{
    s->ops = amp_sfp_slot_kind(&s->slot) == AMP_SFP_POOL_SHM ? &amp_sfp_shm_ops : &amp_sfp_rma_ops;
}

int amp_sfp_create_window(amp_sfp_t *s)
{
    int rc = amp_sfp_try(s, &amp_sfp_any_ops);
    if (rc == MPI_SUCCESS)
        amp_sfp_window_kind(s);
    return rc;
}

void amp_sfp_offer_window(amp_sfp_t *s, uint64_t *words)
{
    amp_sfp_slot_offer(s->comm, AMP_SFP_POOL_ANY, &s->slot, words);
}

void amp_sfp_withdraw_window(amp_sfp_t *s)
{
    amp_sfp_slot_withdraw(&s->slot);
}

int amp_sfp_accept_window(amp_sfp_t *s, const uint64_t *words)
{
    s->ops = &amp_sfp_any_ops; /* as amp_sfp_try would: create's outcome is agreed */
    int rc = amp_sfp_slot_accept(s->comm, AMP_SFP_POOL_ANY, &s->slot, words);
    if (rc == MPI_SUCCESS)
        amp_sfp_window_kind(s);
    return rc;
}
