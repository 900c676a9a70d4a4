/* Atomic mode: every rank writes the same noncontiguous region at once, over and over, while
 * others read it. Each access must behave as if the accesses were serialized: a read sees one
 * writer's values throughout, and the final file holds one writer's values throughout. The
 * outcome depends on timing, so this runs under ampio only, judged by that rule. */
#include <stdlib.h>
#include <string.h>

#include "amptest.h"

#define N      (32 * 1024) /* ints in the region */
#define PASSES 6

static int uniform(const int *v, int n, int *first)
{
    *first = v[0];
    for (int k = 1; k < n; k++)
        if (v[k] != v[0])
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    int r = amptest_rank;
    const char *name = "atomic.dat";
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_write", "enable"); /* sieving would break atomicity unlocked */
    MPI_File fh;
    if (!amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name),
                                  MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
                    name))
        return amptest_finish();
    amptest_ok(MPI_File_set_atomicity(fh, 1), "set_atomicity");
    MPI_Datatype ft, t; /* two ints of every three */
    MPI_Type_vector(1, 2, 3, MPI_INT, &t);
    MPI_Type_create_resized(t, 0, 12, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&t);
    amptest_ok(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", info), "set_view");

    int *mine = malloc(sizeof(int) * N), *seen = malloc(sizeof(int) * N);
    for (int k = 0; k < N; k++)
        mine[k] = r + 1;
    MPI_Status st;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int pass = 0; pass < PASSES; pass++) {
        amptest_ok(MPI_File_write_at(fh, 0, mine, N, MPI_INT, &st), "atomic write_at");
        if (r % 2 == 1 || amptest_size == 1) {
            int first = 0;
            amptest_ok(MPI_File_read_at(fh, 0, seen, N, MPI_INT, &st), "atomic read_at");
            amptest_check(uniform(seen, N, &first),
                          "pass %d: a read saw a mix of writers (first %d)", pass, first);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int first = 0;
    amptest_ok(MPI_File_read_at(fh, 0, seen, N, MPI_INT, &st), "final read");
    amptest_check(uniform(seen, N, &first) && first >= 1 && first <= amptest_size,
                  "the final file mixes writers (first %d)", first);
    amptest_ok(MPI_File_close(&fh), "close");
    MPI_Type_free(&ft);
    MPI_Info_free(&info);
    free(mine);
    free(seen);
    return amptest_finish();
}
