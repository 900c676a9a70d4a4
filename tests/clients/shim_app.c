/* Runs under the pmpi_shim profiling tool (LD_PRELOAD) with or without ampio behind it:
 *   shim_app DIR ampio|native
 * Makes a known number of MPI_File calls and checks that the tool counted each of them once,
 * that the data is right, and that the MPI-IO doing the work is the expected one (ampio's own
 * info keys and entry points are present, or absent on the native MPI-IO). */
#include <dlfcn.h>
#include <string.h>

#include "amptest.h"

enum { N = 1000 };

static int count_of(const char *name)
{
    union {
        void *symbol;
        int (*fn)(const char *);
    } count = {dlsym(RTLD_DEFAULT, "pmpi_shim_count")};
    return count.symbol ? count.fn(name) : -1;
}

static int info_has(MPI_File fh, const char *key)
{
    MPI_Info info;
    char value[64];
    int flag = 0;
    if (!amptest_ok(MPI_File_get_info(fh, &info), "MPI_File_get_info"))
        return 0;
    MPI_Info_get(info, key, sizeof(value) - 1, value, &flag);
    MPI_Info_free(&info);
    return flag;
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    int want_ampio = argc > 2 && strcmp(argv[2], "ampio") == 0;
    int me = amptest_rank, P = amptest_size;
    static unsigned char buf[N], back[N];
    for (int i = 0; i < N; i++)
        buf[i] = amptest_byte(me, i);

    MPI_File fh;
    amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path("shim.dat"),
                             MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
               "open");
    amptest_check(info_has(fh, "ampio_fcoll") == want_ampio, "ampio_fcoll key %s",
                  want_ampio ? "missing under ampio" : "present natively");
    MPI_Datatype ft;
    MPI_Type_vector(N / 10, 10, 10 * P, MPI_BYTE, &ft);
    MPI_Type_commit(&ft);
    amptest_ok(MPI_File_set_view(fh, 10 * me, MPI_BYTE, ft, "native", MPI_INFO_NULL), "view");
    amptest_ok(MPI_File_write_all(fh, buf, N, MPI_BYTE, MPI_STATUS_IGNORE), "write_all");
    amptest_ok(MPI_File_set_view(fh, 10 * me, MPI_BYTE, ft, "native", MPI_INFO_NULL), "view");
    amptest_ok(MPI_File_read_all(fh, back, N, MPI_BYTE, MPI_STATUS_IGNORE), "read_all");
    amptest_check(memcmp(buf, back, N) == 0, "read_all returned other bytes");
    MPI_Type_free(&ft);
    amptest_ok(MPI_File_close(&fh), "close");

    amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path("shim_ind.dat"),
                             MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
               "open");
    for (int k = 0; k < 4; k++)
        amptest_ok(MPI_File_write_at(fh, (MPI_Offset)(k * P + me) * 250, buf + 250 * k, 250,
                                     MPI_BYTE, MPI_STATUS_IGNORE),
                   "write_at");
    MPI_Barrier(MPI_COMM_WORLD);
    amptest_ok(MPI_File_read_at(fh, (MPI_Offset)me * 250, back, 250, MPI_BYTE, MPI_STATUS_IGNORE),
               "read_at");
    amptest_check(memcmp(buf, back, 250) == 0, "read_at returned other bytes");
    amptest_ok(MPI_File_close(&fh), "close");

    amptest_check(amptest_under_ampio() == want_ampio, "ampio is %s",
                  want_ampio ? "not loaded" : "loaded natively");
    struct {
        const char *name;
        int calls;
    } expected[] = {
        {"MPI_File_open", 2},     {"MPI_File_set_view", 2}, {"MPI_File_write_all", 1},
        {"MPI_File_read_all", 1}, {"MPI_File_write_at", 4}, {"MPI_File_read_at", 1},
        {"MPI_File_get_info", 1}, {"MPI_File_close", 2},    {"MPI_File_write_shared", 0}};
    for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
        int got = count_of(expected[i].name);
        amptest_check(got == expected[i].calls, "the tool counted %d calls of %s, made %d", got,
                      expected[i].name, expected[i].calls);
    }
    return amptest_finish();
}
