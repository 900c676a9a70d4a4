#include "core/nodes.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/fault.h"
#include "core/task.h"

typedef struct amp_layout {
    struct amp_layout *next;
    int n, nnodes;
    int *world; /* world rank of each rank: the key */
    int *node;
} amp_layout_t;

/* Layouts of the groups files were opened on, most recently used first. A program that opens
 * files on ever new communicators keeps only the last few. */
#define AMP_NODES_KEEP 16
static amp_layout_t *amp_layouts;
static pthread_mutex_t amp_layouts_lock = PTHREAD_MUTEX_INITIALIZER;

int *amp_nodes_world_ranks(MPI_Comm comm, int n)
{
    int *world = amp_malloc(2 * (size_t)n * sizeof(int));
    if (!world)
        return NULL;
    MPI_Group g = MPI_GROUP_NULL, wg = MPI_GROUP_NULL;
    int rc = PMPI_Comm_group(comm, &g);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int r = 0; r < n; r++)
        world[n + r] = r;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Group_translate_ranks(g, n, world + n, wg, world);
    if (g != MPI_GROUP_NULL)
        PMPI_Group_free(&g);
    if (wg != MPI_GROUP_NULL)
        PMPI_Group_free(&wg);
    for (int r = 0; r < n; r++)
        if (rc != MPI_SUCCESS || world[r] == MPI_UNDEFINED) {
            free(world);
            return NULL;
        }
    return world;
}

static int amp_nodes_find(const int *world, int n, int *node, int *nnodes)
{
    int found = 0;
    pthread_mutex_lock(&amp_layouts_lock);
    for (amp_layout_t **at = &amp_layouts; *at && !found; at = &(*at)->next) {
        amp_layout_t *l = *at;
        if (l->n == n && memcmp(l->world, world, (size_t)n * sizeof(int)) == 0) {
            memcpy(node, l->node, (size_t)n * sizeof(int));
            *nnodes = l->nnodes;
            found = 1;
            *at = l->next; /* to the front */
            l->next = amp_layouts;
            amp_layouts = l;
            break;
        }
    }
    pthread_mutex_unlock(&amp_layouts_lock);
    return found;
}

int amp_nodes_lookup(MPI_Comm comm, int nprocs, int *node, int *nnodes)
{
    int *world = amp_nodes_world_ranks(comm, nprocs);
    int found = world && amp_nodes_find(world, nprocs, node, nnodes);
    free(world);
    return found;
}

static void amp_nodes_keep(int *world, int n, const int *node, int nnodes)
{
    amp_layout_t *l = amp_malloc(sizeof(*l));
    int *copy = amp_malloc((size_t)n * sizeof(int));
    if (!l || !copy) { /* not kept: the next open on this group splits again */
        free(l);
        free(copy);
        free(world);
        return;
    }
    memcpy(copy, node, (size_t)n * sizeof(int));
    *l = (amp_layout_t){.n = n, .nnodes = nnodes, .world = world, .node = copy};
    pthread_mutex_lock(&amp_layouts_lock);
    l->next = amp_layouts;
    amp_layouts = l;
    amp_layout_t *old = l;
    for (int kept = 1; old && kept < AMP_NODES_KEEP; kept++)
        old = old->next;
    amp_layout_t *drop = old ? old->next : NULL;
    if (old)
        old->next = NULL;
    pthread_mutex_unlock(&amp_layouts_lock);
    while (drop) {
        amp_layout_t *next = drop->next;
        free(drop->world);
        free(drop->node);
        free(drop);
        drop = next;
    }
}

/* The lowest rank of each rank's node, from MPI_Comm_split_type. */
static int amp_nodes_leaders_split(MPI_Comm comm, int *node)
{
    int rank = 0, leader;
    int rc = PMPI_Comm_rank(comm, &rank);
    leader = rank;
    MPI_Comm local;
    /* without a node communicator each rank is a node of its own: a layout, not a failure */
    if (PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) == MPI_SUCCESS) {
        if (PMPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, local) != MPI_SUCCESS)
            leader = rank;
        PMPI_Comm_free(&local);
    }
    int grc = PMPI_Allgather(&leader, 1, MPI_INT, node, 1, MPI_INT, comm);
    return rc != MPI_SUCCESS ? rc : grc;
}

/* The same inside a task, where no blocking collective may run (MPI_Comm_split_type has no
 * nonblocking form): ranks whose processor names are equal share a node. One allgather. */
static int amp_nodes_leaders_named(MPI_Comm comm, int nprocs, int *node)
{
    char mine[MPI_MAX_PROCESSOR_NAME] = "";
    int len = 0;
    char *names = amp_malloc((size_t)nprocs * MPI_MAX_PROCESSOR_NAME);
    if (!names)
        return amp_err(MPI_ERR_NO_MEM, "out of memory for the node layout");
    int world = 0;
    if (PMPI_Get_processor_name(mine, &len) != MPI_SUCCESS &&
        PMPI_Comm_rank(MPI_COMM_WORLD, &world) == MPI_SUCCESS)
        snprintf(mine, sizeof(mine), "\001%d", world); /* a node of its own */
    int rc = amp_task_allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names,
                                MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm);
    for (int r = 0; r < nprocs && rc == MPI_SUCCESS; r++) {
        node[r] = r;
        for (int q = 0; q < r; q++)
            if (strncmp(names + (size_t)q * MPI_MAX_PROCESSOR_NAME,
                        names + (size_t)r * MPI_MAX_PROCESSOR_NAME, MPI_MAX_PROCESSOR_NAME) == 0) {
                node[r] = q;
                break;
            }
    }
    free(names);
    return rc;
}

int amp_nodes_get(MPI_Comm comm, int nprocs, int *node, int *nnodes)
{
    int *world = amp_nodes_world_ranks(comm, nprocs);
    int found = world && amp_nodes_find(world, nprocs, node, nnodes);
    /* one rank without the layout (it ran out of memory) makes every rank split again */
    int all = 0;
    int arc = amp_task_agree_allreduce(&found, &all, 1, MPI_INT, MPI_LAND, comm);
    if (arc != MPI_SUCCESS) {
        free(world);
        return arc;
    }
    if (all) {
        free(world);
        return MPI_SUCCESS;
    }
    int rc = amp_task_inside() ? amp_nodes_leaders_named(comm, nprocs, node)
                               : amp_nodes_leaders_split(comm, node);
    if (rc != MPI_SUCCESS) {
        free(world);
        return rc;
    }
    /* number nodes in order of their lowest rank: a leader's node is its own rank's index */
    int *index = amp_malloc((size_t)nprocs * sizeof(int));
    if (!index) {
        free(world);
        return amp_err(MPI_ERR_NO_MEM, "out of memory for the node layout");
    }
    for (int r = 0; r < nprocs; r++)
        index[r] = -1;
    *nnodes = 0;
    for (int r = 0; r < nprocs; r++) {
        if (index[node[r]] < 0)
            index[node[r]] = (*nnodes)++;
        node[r] = index[node[r]];
    }
    free(index);
    if (world && !found)
        amp_nodes_keep(world, nprocs, node, *nnodes);
    else
        free(world);
    return MPI_SUCCESS;
}

void amp_nodes_free(void)
{
    pthread_mutex_lock(&amp_layouts_lock);
    while (amp_layouts) {
        amp_layout_t *l = amp_layouts;
        amp_layouts = l->next;
        free(l->world);
        free(l->node);
        free(l);
    }
    pthread_mutex_unlock(&amp_layouts_lock);
}
