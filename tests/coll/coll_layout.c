/* Striping hints set the layout of a file MPI_File_open creates, and get_info reports the layout
 * the file has: on CephFS read back through the ceph.file.layout attribute; on a file system
 * without striping the hints are what collective access plans with. An existing file with data
 * keeps its layout whatever the hints of a later open ask. Data written through every collective
 * algorithm under the layout are checked against a model (and the native MPI-IO's file).
 *
 *   coll_layout OUTDIR [UNIT COUNT OBJECT]   default 65536 3 1048576 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "amptest.h"

static long long info_num(MPI_Info info, const char *key)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    return flag ? atoll(value) : -1;
}

static void info_text(MPI_Info info, const char *key, char *value)
{
    int flag = 0;
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    if (!flag)
        strcpy(value, "(absent)");
}

/* The layout get_info reports, against the expected one; on CephFS also the attribute. */
static void check_layout(MPI_File fh, const char *name, long long unit, long long count,
                         long long object, const char *hints_say)
{
    if (!amptest_under_ampio())
        return;
    MPI_Info used;
    char layout[MPI_MAX_INFO_VAL + 1], hints[MPI_MAX_INFO_VAL + 1];
    amptest_ok(MPI_File_get_info(fh, &used), "get_info");
    info_text(used, "ampio_layout", layout);
    info_text(used, "ampio_striping_hints", hints);
    int ceph = strncmp(layout, "cephfs", 6) == 0;
    amptest_check(info_num(used, "striping_unit") == unit, "%s: striping_unit %lld, expected %lld",
                  name, info_num(used, "striping_unit"), unit);
    amptest_check(info_num(used, "striping_factor") == count,
                  "%s: striping_factor %lld, expected %lld", name,
                  info_num(used, "striping_factor"), count);
    if (ceph)
        amptest_check(info_num(used, "ampio_object_size") == object,
                      "%s: ampio_object_size %lld, expected %lld", name,
                      info_num(used, "ampio_object_size"), object);
    amptest_check(strstr(hints, ceph ? hints_say : "no striping") != NULL,
                  "%s: ampio_striping_hints \"%s\"", name, hints);
    MPI_Info_free(&used);
    char text[256] = "";
    ssize_t n =
        ceph ? getxattr(amptest_path(name), "ceph.file.layout", text, sizeof(text) - 1) : -1;
    if (ceph && amptest_check(n > 0, "%s: no ceph.file.layout attribute", name)) {
        char want[128];
        text[n] = '\0';
        snprintf(want, sizeof(want), "stripe_unit=%lld stripe_count=%lld object_size=%lld", unit,
                 count, object);
        amptest_check(strncmp(text, want, strlen(want)) == 0, "%s: the file's layout is \"%s\"",
                      name, text);
    }
}

/* Every collective algorithm writes and reads back records of 1000 bytes interleaved between
 * ranks, crossing every stripe boundary. */
static void write_all_ways(MPI_File fh, const char *name)
{
    const char *fcolls[] = {"auto", "two_phase", "dynamic_seg", "static_seg", "stripe"};
    int P = amptest_size, r = amptest_rank, n = 700;
    MPI_Datatype rec, ft;
    MPI_Type_contiguous(1000, MPI_BYTE, &rec);
    MPI_Type_create_resized(rec, 0, 1000L * P, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&rec);
    unsigned char *buf = malloc(1000L * n), *back = malloc(1000L * n);
    for (int f = 0; f < 5; f++) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "ampio_fcoll", fcolls[f]);
        MPI_Info_set(info, "romio_lustre_co_ratio", "2");
        amptest_ok(
            MPI_File_set_view(fh, 1000L * r + 1000L * n * P * f, MPI_BYTE, ft, "native", info),
            "set_view");
        for (long i = 0; i < 1000L * n; i++)
            buf[i] = amptest_byte(r * 8 + f, i);
        MPI_Status st;
        amptest_ok(MPI_File_write_all(fh, buf, 1000 * n, MPI_BYTE, &st), "write_all");
        memset(back, 0, 1000L * n);
        amptest_ok(MPI_File_read_at_all(fh, 0, back, 1000 * n, MPI_BYTE, &st), "read_at_all");
        amptest_check(memcmp(buf, back, 1000L * n) == 0, "%s: %s read back other bytes", name,
                      fcolls[f]);
        MPI_Info_free(&info);
    }
    MPI_Type_free(&ft);
    free(buf);
    free(back);
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    const char *unit = argc > 2 ? argv[2] : "65536", *count = argc > 3 ? argv[3] : "3",
               *object = argc > 4 ? argv[4] : "1048576";
    long long u = atoll(unit), c = atoll(count), o = atoll(object);
    const char *name = "layout.dat";
    MPI_Info hints;
    MPI_Info_create(&hints);
    MPI_Info_set(hints, "striping_unit", unit);
    MPI_Info_set(hints, "striping_factor", count);
    MPI_Info_set(hints, "ampio_object_size", object);
    MPI_File fh;
    if (amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name),
                                 MPI_MODE_CREATE | MPI_MODE_RDWR, hints, &fh),
                   "open")) {
        check_layout(fh, name, u, c, o, "set on the new file");
        write_all_ways(fh, name);
        amptest_ok(MPI_File_close(&fh), "close");
    }
    /* the file has data now: other hints leave its layout as it is */
    char text[32];
    snprintf(text, sizeof(text), "%lld", 2 * u);
    MPI_Info_set(hints, "striping_unit", text);
    MPI_Info_set(hints, "striping_factor", "1");
    MPI_Info_set(hints, "ampio_object_size", text);
    if (amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path(name),
                                 MPI_MODE_CREATE | MPI_MODE_RDWR, hints, &fh),
                   "reopen")) {
        if (amptest_under_ampio()) {
            MPI_Info used;
            char layout[MPI_MAX_INFO_VAL + 1];
            MPI_File_get_info(fh, &used);
            info_text(used, "ampio_layout", layout);
            MPI_Info_free(&used);
            if (strncmp(layout, "cephfs", 6) == 0)
                check_layout(fh, name, u, c, o, "not applied");
        }
        amptest_ok(MPI_File_close(&fh), "close");
    }
    MPI_Info_free(&hints);
    return amptest_finish();
}
