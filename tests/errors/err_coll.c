/* Collective calls where the last rank alone passes a bad argument: every rank must return an
 * error (none may wait forever for the failed one), no rank's data may be damaged, and the file
 * must stay usable with the state it had before the failed call: same view, same hints, same
 * atomicity, same size. */
#include "errtest.h"

#define BLOCK 256 /* bytes of each rank's region */

static MPI_File fh;
static int bad; /* whether this rank passes the bad argument */
static unsigned char fresh[BLOCK];

/* Rewrites every region with the old pattern (seed rank + 100) and checks it landed. */
static void reset_regions(void)
{
    unsigned char old[BLOCK];
    for (int i = 0; i < BLOCK; i++)
        old[i] = amptest_byte(amptest_rank + 100, i);
    amptest_ok(MPI_File_write_at_all(fh, (MPI_Offset)amptest_rank * BLOCK, old, BLOCK, MPI_BYTE,
                                     MPI_STATUS_IGNORE),
               "write_at_all of the old pattern");
    amptest_ok(MPI_File_sync(fh), "sync");
}

/* Each region holds wholly the old or wholly the new pattern; the bad rank's the old one. */
static void regions_sound(const char *what)
{
    amptest_ok(MPI_File_sync(fh), "sync");
    unsigned char got[BLOCK];
    MPI_Status st;
    int n = -1;
    /* read with POSIX semantics through the MPI-IO tested: sync made the data visible */
    if (!amptest_ok(
            MPI_File_read_at(fh, (MPI_Offset)amptest_rank * BLOCK, got, BLOCK, MPI_BYTE, &st),
            "read_at of the region"))
        return;
    MPI_Get_count(&st, MPI_BYTE, &n);
    int is_old = n == BLOCK, is_new = n == BLOCK;
    for (int i = 0; i < BLOCK && n == BLOCK; i++) {
        is_old &= got[i] == amptest_byte(amptest_rank + 100, i);
        is_new &= got[i] == fresh[i];
    }
    amptest_check(is_old || (is_new && !bad), "%s: rank %d's region is %s", what, amptest_rank,
                  is_new ? "new although the rank failed" : "damaged");
}

static int bad_count(void)
{
    return bad ? -1 : BLOCK;
}

static MPI_Offset my_offset(void)
{
    return (MPI_Offset)amptest_rank * BLOCK;
}

static void accesses(void)
{
    int rc =
        MPI_File_write_at_all(fh, my_offset(), fresh, bad_count(), MPI_BYTE, MPI_STATUS_IGNORE);
    errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_COUNT, "write_at_all, count -1 on one rank");
    if (rc != MPI_SUCCESS && amptest_under_ampio() && !bad) {
        char rank[32];
        snprintf(rank, sizeof(rank), "rank %d", amptest_size - 1);
        errtest_text_has(rc, rank, "write_at_all, count -1 on one rank");
    }
    regions_sound("write_at_all, count -1 on one rank");
    reset_regions();

    rc = MPI_File_write_at_all(fh, bad ? -BLOCK : my_offset(), fresh, BLOCK, MPI_BYTE,
                               MPI_STATUS_IGNORE);
    errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_ARG, "write_at_all, offset < 0 on one rank");
    regions_sound("write_at_all, offset < 0 on one rank");
    reset_regions();

    amptest_ok(MPI_File_seek(fh, my_offset(), MPI_SEEK_SET), "seek");
    rc =
        MPI_File_write_all(fh, fresh, BLOCK, bad ? MPI_DATATYPE_NULL : MPI_BYTE, MPI_STATUS_IGNORE);
    errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_TYPE, "write_all, no datatype on one rank");
    regions_sound("write_all, no datatype on one rank");
    reset_regions();

    unsigned char got[BLOCK];
    rc = MPI_File_read_at_all(fh, my_offset(), got, bad_count(), MPI_BYTE, MPI_STATUS_IGNORE);
    errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_COUNT, "read_at_all, count -1 on one rank");

    /* a nonblocking collective may report the error at the start or at completion */
    MPI_Request req = MPI_REQUEST_NULL;
    rc = MPI_File_iwrite_at_all(fh, my_offset(), fresh, bad_count(), MPI_BYTE, &req);
    if (rc == MPI_SUCCESS) {
        MPI_Status st;
        rc = MPI_Wait(&req, &st);
        if (rc == MPI_SUCCESS)
            rc = st.MPI_ERROR;
    }
    errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_COUNT, "iwrite_at_all, count -1 on one rank");
    regions_sound("iwrite_at_all, count -1 on one rank");
    reset_regions();

    /* a begin is local, so the error may come at the begin or at the end; a failed begin
     * still needs its end; afterwards split collectives work again */
    rc = MPI_File_write_at_all_begin(fh, my_offset(), fresh, bad_count(), MPI_BYTE);
    int end_rc = MPI_File_write_at_all_end(fh, fresh, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS)
        rc = end_rc;
    errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_COUNT,
                      "write_at_all_begin, count -1 on one rank");
    regions_sound("write_at_all_begin, count -1 on one rank");
    reset_regions();
    amptest_ok(MPI_File_write_at_all_begin(fh, my_offset(), fresh, BLOCK, MPI_BYTE),
               "write_at_all_begin after a failed one");
    amptest_ok(MPI_File_write_at_all_end(fh, fresh, MPI_STATUS_IGNORE),
               "write_at_all_end after a failed one");
    reset_regions();

    rc = MPI_File_write_ordered(fh, fresh, bad_count(), MPI_BYTE, MPI_STATUS_IGNORE);
    errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_COUNT, "write_ordered, count -1 on one rank");
    MPI_Offset shared = -1, low = 0, high = 0;
    amptest_ok(MPI_File_get_position_shared(fh, &shared), "get_position_shared");
    MPI_Allreduce(&shared, &low, 1, MPI_OFFSET, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&shared, &high, 1, MPI_OFFSET, MPI_MAX, MPI_COMM_WORLD);
    amptest_check(low == high, "the shared pointer differs between ranks after a failed "
                               "write_ordered");
}

/* The view in effect is still the default one: byte offsets address bytes. */
static void view_unchanged(const char *what)
{
    MPI_Offset disp = -1;
    MPI_Datatype etype, ftype;
    char rep[MPI_MAX_DATAREP_STRING + 1];
    if (!amptest_ok(MPI_File_get_view(fh, &disp, &etype, &ftype, rep), "get_view"))
        return;
    amptest_check(disp == 0 && etype == MPI_BYTE && ftype == MPI_BYTE && strcmp(rep, "native") == 0,
                  "%s changed the view", what);
    reset_regions();
    regions_sound(what);
}

static void views(void)
{
    int rc = MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, bad ? "foo" : "native", MPI_INFO_NULL);
    errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_UNSUPPORTED_DATAREP,
                      "set_view, unknown datarep on one rank");
    view_unchanged("set_view, unknown datarep on one rank");

    rc = MPI_File_set_view(fh, bad ? -1 : 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_ARG, "set_view, disp -1 on one rank");
    view_unchanged("set_view, disp -1 on one rank");

    if (amptest_size > 1) {
        rc = MPI_File_set_view(fh, 0, bad ? MPI_INT : MPI_BYTE, bad ? MPI_INT : MPI_BYTE, "native",
                               MPI_INFO_NULL);
        errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_NOT_SAME,
                          "set_view, etype size differs on one rank");
        view_unchanged("set_view, etype size differs on one rank");
    }
}

static void sizes_and_flags(void)
{
    MPI_Offset before = -1, after = -1;
    amptest_ok(MPI_File_get_size(fh, &before), "get_size");
    int rc = MPI_File_set_size(fh, bad ? -1 : 10);
    errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_ARG, "set_size, -1 on one rank");
    if (amptest_size > 1) {
        rc = MPI_File_set_size(fh, bad ? 20 : 10);
        errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_NOT_SAME, "set_size, differs on one rank");
        rc = MPI_File_preallocate(fh, bad ? 1 << 20 : 1 << 10);
        errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_NOT_SAME, "preallocate, differs on one rank");
        rc = MPI_File_set_atomicity(fh, bad);
        errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_NOT_SAME,
                          "set_atomicity, differs on one rank");
        int flag = -1;
        amptest_ok(MPI_File_get_atomicity(fh, &flag), "get_atomicity");
        amptest_check(flag == 0, "a failed set_atomicity changed the flag to %d", flag);
        rc = MPI_File_seek_shared(fh, bad ? 8 : 0, MPI_SEEK_SET);
        errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_NOT_SAME, "seek_shared, differs on one rank");
        /* offset and whence differ, and offset * 4 + whence is the same on every rank (with
         * MPI_SEEK_SET 600 and MPI_SEEK_END 604): each is compared, not a sum of them */
        MPI_Offset step = (MPI_SEEK_END - MPI_SEEK_SET) / 4;
        rc = MPI_File_seek_shared(fh, bad ? 1 : 1 + step, bad ? MPI_SEEK_END : MPI_SEEK_SET);
        errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_NOT_SAME,
                          "seek_shared, offset and whence differ on one rank");
        MPI_Offset shared = -1;
        amptest_ok(MPI_File_get_position_shared(fh, &shared), "get_position_shared");
        amptest_check(shared == 0, "failed seek_shared calls moved the pointer to %lld",
                      (long long)shared);
    }
    amptest_ok(MPI_File_get_size(fh, &after), "get_size");
    amptest_check(before == after, "failed set_size calls changed the size from %lld to %lld",
                  (long long)before, (long long)after);
    regions_sound("failed set_size calls");
}

static void info_value(const char *key, char *value)
{
    MPI_Info info;
    int flag = 0;
    strcpy(value, "(none)");
    if (amptest_ok(MPI_File_get_info(fh, &info), "get_info")) {
        MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
        MPI_Info_free(&info);
    }
}

/* The collective hints are the same on every rank (a failed call must not leave them apart),
 * and a collective write and read still work. */
static void hints_agree(const char *what)
{
    static const char *keys[] = {"cb_buffer_size", "ampio_fcoll", "cb_nodes", "romio_cb_write"};
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        char value[MPI_MAX_INFO_VAL + 1], first[MPI_MAX_INFO_VAL + 1];
        info_value(keys[k], value);
        strcpy(first, value);
        MPI_Bcast(first, sizeof(first), MPI_CHAR, 0, MPI_COMM_WORLD);
        amptest_check(strcmp(first, value) == 0, "%s: %s is %s on rank %d and %s on rank 0", what,
                      keys[k], value, amptest_rank, first);
    }
    /* interleaved small pieces make every algorithm exchange data */
    MPI_Datatype ft;
    MPI_Type_vector(BLOCK / 8, 8, 8 * amptest_size, MPI_BYTE, &ft);
    MPI_Type_commit(&ft);
    amptest_ok(
        MPI_File_set_view(fh, (MPI_Offset)amptest_rank * 8, MPI_BYTE, ft, "native", MPI_INFO_NULL),
        "set_view");
    amptest_ok(MPI_File_write_all(fh, fresh, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE), what);
    unsigned char got[BLOCK];
    amptest_ok(MPI_File_seek(fh, 0, MPI_SEEK_SET), "seek");
    amptest_ok(MPI_File_read_all(fh, got, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE), what);
    amptest_check(memcmp(got, fresh, BLOCK) == 0, "%s: the interleaved data read back differs",
                  what);
    amptest_ok(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), "set_view");
    MPI_Type_free(&ft);
    reset_regions();
}

static MPI_Info info_of2(const char *k1, const char *v1, const char *k2, const char *v2)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, k1, v1);
    if (k2)
        MPI_Info_set(info, k2, v2);
    return info;
}

static void hints(void)
{
    hints_agree("before set_info");
    char before[MPI_MAX_INFO_VAL + 1], after[MPI_MAX_INFO_VAL + 1];
    info_value("ampio_saturation_k", before);

    /* ampio_ hints are strict (a bad value of another hint is clamped or ignored) */
    MPI_Info info = info_of2("ampio_saturation_k", bad ? "huge" : "1M", NULL, NULL);
    errtest_class_all(MPI_COMM_WORLD, MPI_File_set_info(fh, info), MPI_ERR_INFO,
                      "set_info, bad value on one rank");
    MPI_Info_free(&info);
    info_value("ampio_saturation_k", after);
    amptest_check(strcmp(before, after) == 0,
                  "a failed set_info changed ampio_saturation_k %s -> %s", before, after);
    hints_agree("after set_info with a bad value on one rank");

    /* a good value before the bad one: applied on the good ranks only, unless refused whole */
    info = info_of2("ampio_fcoll", "two_phase", "ampio_num_aggregators", bad ? "many" : "1");
    errtest_class_all(MPI_COMM_WORLD, MPI_File_set_info(fh, info), MPI_ERR_INFO,
                      "set_info, second value bad on one rank");
    MPI_Info_free(&info);
    hints_agree("after set_info with a second value bad on one rank");

    if (amptest_size > 1) {
        info = info_of2("ampio_fcoll", bad ? "static_seg" : "dynamic_seg", NULL, NULL);
        errtest_class_all(MPI_COMM_WORLD, MPI_File_set_info(fh, info), MPI_ERR_NOT_SAME,
                          "set_info, ampio_fcoll differs on one rank");
        MPI_Info_free(&info);
        hints_agree("after set_info with ampio_fcoll differing");

        info = info_of2("cb_buffer_size", bad ? "8K" : "4K", NULL, NULL);
        errtest_class_all(MPI_COMM_WORLD,
                          MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info),
                          MPI_ERR_NOT_SAME, "set_view, cb_buffer_size differs on one rank");
        MPI_Info_free(&info);
        hints_agree("after set_view with cb_buffer_size differing");
    }
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    bad = amptest_rank == amptest_size - 1;
    for (int i = 0; i < BLOCK; i++)
        fresh[i] = amptest_byte(amptest_rank, i);
    if (!amptest_ok(MPI_File_open(MPI_COMM_WORLD, amptest_path("coll.dat"),
                                  MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
                    "open"))
        return amptest_finish();
    reset_regions();
    static const errtest_part_t parts[] = {
        {"access", accesses}, {"view", views}, {"size", sizes_and_flags}, {"hints", hints}};
    errtest_run_parts(argc, argv, parts, sizeof(parts) / sizeof(parts[0]));
    amptest_ok(MPI_File_close(&fh), "close");
    return amptest_finish();
}
