/* Errors of MPI_File_open and MPI_File_delete: access modes, missing and existing files, bad
 * names, permissions, files in use, bad and differing hints. Every failing collective open must
 * fail on every rank, leave no handle behind and not touch the file; the message names the
 * file. */
#include <errno.h>
#include <sys/stat.h>

#include "errtest.h"

static char dir[4096];

static const char *in_dir(const char *name)
{
    static char path[4608];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return path;
}

/* Opens on every rank and expects class `cls` everywhere, no handle, and a message naming
 * `needle` (NULL: not checked). */
static void open_fails(const char *path, int amode, MPI_Info info, int cls, const char *needle,
                       const char *what)
{
    MPI_File fh;
    memset(&fh, 0x5a, sizeof(fh));
    int rc = MPI_File_open(MPI_COMM_WORLD, path, amode, info, &fh);
    if (errtest_class_all(MPI_COMM_WORLD, rc, cls, what) && needle)
        errtest_text_has(rc, needle, what);
    if (rc == MPI_SUCCESS)
        MPI_File_close(&fh);
    else if (amptest_under_ampio())
        amptest_check(fh == MPI_FILE_NULL, "%s: the handle is not MPI_FILE_NULL", what);
}

static void open_works(const char *path, int amode, const char *what)
{
    MPI_File fh;
    if (amptest_ok(MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh), what))
        amptest_ok(MPI_File_close(&fh), what);
}

static void access_modes(void)
{
    const char *path = in_dir("amode.dat");
    if (amptest_rank == 0)
        errtest_make_file(path, 1, 100);
    MPI_Barrier(MPI_COMM_WORLD);
    int R = MPI_MODE_RDONLY, W = MPI_MODE_WRONLY, RW = MPI_MODE_RDWR, C = MPI_MODE_CREATE;
    int X = MPI_MODE_EXCL, S = MPI_MODE_SEQUENTIAL;
    open_fails(path, R | RW, MPI_INFO_NULL, MPI_ERR_AMODE, NULL, "RDONLY|RDWR");
    open_fails(path, R | W, MPI_INFO_NULL, MPI_ERR_AMODE, NULL, "RDONLY|WRONLY");
    open_fails(path, W | RW, MPI_INFO_NULL, MPI_ERR_AMODE, NULL, "WRONLY|RDWR");
    open_fails(path, 0, MPI_INFO_NULL, MPI_ERR_AMODE, NULL, "no access mode");
    open_fails(path, C, MPI_INFO_NULL, MPI_ERR_AMODE, NULL, "CREATE alone");
    open_fails(path, R | C, MPI_INFO_NULL, MPI_ERR_AMODE, NULL, "RDONLY|CREATE");
    open_fails(path, R | X, MPI_INFO_NULL, MPI_ERR_AMODE, NULL, "RDONLY|EXCL");
    open_fails(path, R | C | X, MPI_INFO_NULL, MPI_ERR_AMODE, NULL, "RDONLY|CREATE|EXCL");
    /* MPI-3.1 13.2.1: "it is erroneous to specify MPI_MODE_SEQUENTIAL together with
     * MPI_MODE_RDWR" */
    open_fails(path, RW | S, MPI_INFO_NULL, MPI_ERR_AMODE, NULL, "RDWR|SEQUENTIAL");
    int known =
        R | W | RW | C | X | S | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_APPEND;
    int stray = 1;
    while (stray & known)
        stray <<= 1;
    open_fails(path, RW | stray, MPI_INFO_NULL, MPI_ERR_AMODE, NULL, "an unknown mode bit");

    /* one rank with a bad mode: everyone fails */
    open_fails(path, amptest_rank == amptest_size - 1 ? R | RW : R, MPI_INFO_NULL, MPI_ERR_AMODE,
               NULL, "RDONLY|RDWR on the last rank only");

    open_works(path, R | S, "RDONLY|SEQUENTIAL");
    open_works(path, W | S, "WRONLY|SEQUENTIAL");
    open_works(path, RW | MPI_MODE_APPEND, "RDWR|APPEND");
    open_works(path, RW | MPI_MODE_UNIQUE_OPEN, "RDWR|UNIQUE_OPEN");
    MPI_Barrier(MPI_COMM_WORLD);
    if (amptest_rank == 0)
        errtest_file_is(path, 1, 100, "after the failed opens");
}

static void missing_and_existing(void)
{
    const char *missing = in_dir("missing.dat");
    char keep[8192];
    snprintf(keep, sizeof(keep), "%s", missing);
    open_fails(keep, MPI_MODE_RDONLY, MPI_INFO_NULL, MPI_ERR_NO_SUCH_FILE, "missing.dat",
               "RDONLY of a missing file");
    open_fails(keep, MPI_MODE_RDWR, MPI_INFO_NULL, MPI_ERR_NO_SUCH_FILE, "missing.dat",
               "RDWR of a missing file");
    amptest_check(!errtest_exists(keep), "a failed open created %s", keep);
    snprintf(keep, sizeof(keep), "%s", in_dir("nodir/new.dat"));
    open_fails(keep, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, MPI_ERR_NO_SUCH_FILE,
               "nodir/new.dat", "CREATE in a missing directory");

    /* delete is not collective: each rank its own missing file */
    char mine[64];
    snprintf(mine, sizeof(mine), "gone.%d", amptest_rank);
    snprintf(keep, sizeof(keep), "%s", in_dir(mine));
    int rc = MPI_File_delete(keep, MPI_INFO_NULL);
    if (amptest_class(rc, MPI_ERR_NO_SUCH_FILE, "delete of a missing file"))
        errtest_text_has(rc, mine, "delete of a missing file");

    snprintf(keep, sizeof(keep), "%s", in_dir("exists.dat"));
    if (amptest_rank == 0)
        errtest_make_file(keep, 2, 333);
    MPI_Barrier(MPI_COMM_WORLD);
    open_fails(keep, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, MPI_INFO_NULL,
               MPI_ERR_FILE_EXISTS, "exists.dat", "CREATE|EXCL of an existing file");
    open_fails(keep, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL, MPI_INFO_NULL,
               MPI_ERR_FILE_EXISTS, "exists.dat", "WRONLY|CREATE|EXCL of an existing file");
    MPI_Barrier(MPI_COMM_WORLD);
    if (amptest_rank == 0)
        errtest_file_is(keep, 2, 333, "CREATE|EXCL must not truncate");

    /* a name that exists for some ranks only: nobody may be left waiting */
    snprintf(keep, sizeof(keep), "%s",
             amptest_rank == amptest_size - 1 && amptest_size > 1 ? in_dir("missing.dat")
                                                                  : in_dir("exists.dat"));
    if (amptest_size > 1)
        open_fails(keep, MPI_MODE_RDONLY, MPI_INFO_NULL, MPI_ERR_NO_SUCH_FILE, NULL,
                   "a missing file on the last rank only");
}

static void bad_names(void)
{
    open_fails("", MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, MPI_ERR_BAD_FILE, NULL,
               "an empty name");

    char path[8192];
    snprintf(path, sizeof(path), "%s", in_dir("plain.dat"));
    if (amptest_rank == 0)
        errtest_make_file(path, 3, 10);
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(path, sizeof(path), "%s", in_dir("plain.dat/below.dat"));
    open_fails(path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, MPI_ERR_BAD_FILE,
               "plain.dat/below.dat", "a regular file used as a directory");
    open_fails(dir, MPI_MODE_RDWR, MPI_INFO_NULL, MPI_ERR_BAD_FILE, NULL,
               "a directory opened for writing");

    /* a name of many non-ASCII characters (UTF-8) keeps its class: MPICH's error stack once
     * turned the message into a code of no predefined class */
    char accented[1024] = "";
    for (int i = 0; i < 100; i++)
        strcat(accented, "\xc3\xa9");
    snprintf(path, sizeof(path), "%s/%s", in_dir("no-such-dir"), accented);
    open_fails(path, MPI_MODE_RDONLY, MPI_INFO_NULL, MPI_ERR_NO_SUCH_FILE, NULL,
               "a missing file of a long UTF-8 name");

    /* a prefix that names no file system is part of a name whose directory does not exist */
    snprintf(path, sizeof(path), "nosuchfs:%s", in_dir("prefixed.dat"));
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    amptest_check(cls == MPI_ERR_NO_SUCH_FILE || cls == MPI_ERR_BAD_FILE,
                  "open of \"nosuchfs:...\": class %d, expected MPI_ERR_NO_SUCH_FILE or "
                  "MPI_ERR_BAD_FILE",
                  cls);
    if (rc == MPI_SUCCESS)
        MPI_File_close(&fh);

    /* the prefix of a file system ROMIO knows is accepted and removed */
    snprintf(path, sizeof(path), "ufs:%s", in_dir("plain.dat"));
    open_works(path, MPI_MODE_RDONLY, "open of \"ufs:...\"");
}

/* Long paths make long messages, which must still reach the caller intact. */
static void long_paths(void)
{
    char path[8192];
    int n = snprintf(path, sizeof(path), "%s/", dir);
    memset(path + n, 'x', 300);
    path[n + 300] = '\0';
    open_fails(path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, MPI_ERR_BAD_FILE, NULL,
               "a name of 300 characters");
    /* rank 0 creates alone, the others learn its error */
    n = snprintf(path, sizeof(path), "%s/no-such-dir/", dir);
    memset(path + n, 'y', 150);
    path[n + 150] = '\0';
    open_fails(path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, MPI_ERR_NO_SUCH_FILE,
               "no-such-dir", "CREATE in a missing directory, 150-character name");
    open_fails(path, MPI_MODE_RDONLY, MPI_INFO_NULL, MPI_ERR_NO_SUCH_FILE, "no-such-dir",
               "RDONLY in a missing directory, 150-character name");
}

/* Permissions do not stop root: the checks run with the effective user id of nobody. */
static int become_nobody(int on)
{
    if (getuid() != 0)
        return 1;
    return on ? seteuid(65534) == 0 : seteuid(0) == 0;
}

static void permissions(void)
{
    char base[64] = "/tmp/ampio-perm.XXXXXX", saved[4096];
    snprintf(saved, sizeof(saved), "%s", dir);
    int ready = 1;
    if (amptest_rank == 0) {
        ready = mkdtemp(base) != NULL && chmod(base, 0755) == 0;
        if (ready) {
            snprintf(dir, sizeof(dir), "%s", base);
            errtest_make_file(in_dir("readonly.dat"), 4, 50);
            errtest_make_file(in_dir("writeonly.dat"), 5, 50);
            chmod(in_dir("readonly.dat"), 0444);
            chmod(in_dir("writeonly.dat"), 0222);
            mkdir(in_dir("closed"), 0555);
            errtest_make_file(in_dir("closed/victim.dat"), 6, 20);
            chmod(in_dir("closed"), 0555);
        }
    }
    MPI_Bcast(&ready, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(base, sizeof(base), MPI_CHAR, 0, MPI_COMM_WORLD);
    if (!ready) {
        if (amptest_rank == 0)
            printf("SKIP permissions: cannot make a directory in /tmp\n");
        return;
    }
    snprintf(dir, sizeof(dir), "%s", base);

    int nobody = become_nobody(1), all = 0;
    MPI_Allreduce(&nobody, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (all) {
        char path[8192];
        snprintf(path, sizeof(path), "%s", in_dir("readonly.dat"));
        open_fails(path, MPI_MODE_RDWR, MPI_INFO_NULL, MPI_ERR_ACCESS, "readonly.dat",
                   "RDWR of a file of mode 0444");
        open_fails(path, MPI_MODE_WRONLY, MPI_INFO_NULL, MPI_ERR_ACCESS, "readonly.dat",
                   "WRONLY of a file of mode 0444");
        open_works(path, MPI_MODE_RDONLY, "RDONLY of a file of mode 0444");
        snprintf(path, sizeof(path), "%s", in_dir("writeonly.dat"));
        open_fails(path, MPI_MODE_RDONLY, MPI_INFO_NULL, MPI_ERR_ACCESS, "writeonly.dat",
                   "RDONLY of a file of mode 0222");
        /* write-only access to a write-only file works, and reading it is refused */
        MPI_File fh;
        int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
        if (amptest_ok(rc, "WRONLY of a file of mode 0222")) {
            char c = 'w';
            if (amptest_rank == 0)
                amptest_ok(MPI_File_write_at(fh, 0, &c, 1, MPI_CHAR, MPI_STATUS_IGNORE),
                           "write to a file of mode 0222");
            amptest_class(MPI_File_read_at(fh, 0, &c, 1, MPI_CHAR, MPI_STATUS_IGNORE),
                          MPI_ERR_ACCESS, "read of a file opened WRONLY");
            amptest_ok(MPI_File_close(&fh), "close");
        }
        snprintf(path, sizeof(path), "%s", in_dir("closed/new.dat"));
        open_fails(path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, MPI_ERR_ACCESS, "new.dat",
                   "CREATE in a directory of mode 0555");
        snprintf(path, sizeof(path), "%s", in_dir("closed/victim.dat"));
        if (amptest_rank == 0)
            amptest_class(MPI_File_delete(path, MPI_INFO_NULL), MPI_ERR_ACCESS,
                          "delete in a directory of mode 0555");
    } else if (amptest_rank == 0) {
        printf("SKIP permissions: cannot change the effective user id\n");
    }
    if (nobody)
        amptest_check(become_nobody(0), "cannot return to root");
    MPI_Barrier(MPI_COMM_WORLD);
    if (amptest_rank == 0) {
        char path[8192];
        snprintf(path, sizeof(path), "%s", in_dir("closed/victim.dat"));
        amptest_check(errtest_exists(path), "a refused delete removed the file");
        chmod(in_dir("closed"), 0755);
        unlink(in_dir("closed/victim.dat"));
        rmdir(in_dir("closed"));
        unlink(in_dir("readonly.dat"));
        unlink(in_dir("writeonly.dat"));
        rmdir(base);
    }
    snprintf(dir, sizeof(dir), "%s", saved);
}

static void in_use(void)
{
    char name[64], path[8192];
    snprintf(name, sizeof(name), "busy.%d", amptest_rank);
    snprintf(path, sizeof(path), "%s", in_dir(name));
    MPI_File fh;
    if (!amptest_ok(
            MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
            "open on MPI_COMM_SELF"))
        return;
    int rc = MPI_File_delete(path, MPI_INFO_NULL);
    if (amptest_class(rc, MPI_ERR_FILE_IN_USE, "delete of an open file"))
        errtest_text_has(rc, name, "delete of an open file");
    amptest_check(errtest_exists(path), "a refused delete removed %s", path);
    int v = 42;
    amptest_ok(MPI_File_write_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE),
               "write after a refused delete");
    amptest_ok(MPI_File_close(&fh), "close");
    amptest_ok(MPI_File_delete(path, MPI_INFO_NULL), "delete after close");
    amptest_check(!errtest_exists(path), "delete left %s", path);
    amptest_class(MPI_File_delete(path, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE, "second delete");
}

static MPI_Info info_of(const char *key, const char *value)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, key, value);
    return info;
}

static void hints(void)
{
    char path[8192];
    snprintf(path, sizeof(path), "%s", in_dir("hints.dat"));
    /* ampio_ hints, asked of ampio by name, are strict */
    static const char *bad[][2] = {
        {"ampio_fcoll", "fastest"},          {"ampio_sharedfp", "disk"},
        {"ampio_num_aggregators", "-1"},     {"ampio_saturation_k", "abc"},
        {"ampio_saturation_k", "16Q"},       {"ampio_pipeline", "2"},
        {"ampio_sharedfp_addproc", "maybe"}, {"ampio_write_chunk", "-4"},
        {"ampio_shared_cores", "sometimes"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char what[128];
        snprintf(what, sizeof(what), "hint %s=%s", bad[i][0], bad[i][1]);
        MPI_Info info = info_of(bad[i][0], bad[i][1]);
        open_fails(path, MPI_MODE_RDWR | MPI_MODE_CREATE, info, MPI_ERR_INFO, bad[i][0], what);
        MPI_Info_free(&info);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    amptest_check(!errtest_exists(path), "an open refused for its hints created the file");

    /* a bad value on one rank only fails everywhere */
    MPI_Info info = info_of("ampio_fcoll", amptest_rank == amptest_size - 1 ? "lots" : "two_phase");
    open_fails(path, MPI_MODE_RDWR | MPI_MODE_CREATE, info, MPI_ERR_INFO, NULL,
               "a bad hint on the last rank only");
    MPI_Info_free(&info);

    /* hints of other libraries are not errors, nor are values ampio cannot use of hints that are
     * not ampio's own (clamped or ignored: tests/config checks how) */
    static const char *foreign[][2] = {{"some_other_library_hint", "whatever"},
                                       {"cb_buffer_size", "abc"},
                                       {"cb_buffer_size", "-4"},
                                       {"cb_nodes", "-1"},
                                       {"romio_ds_write", "maybe"},
                                       {"collective_buffering", "2"},
                                       {"ind_wr_buffer_size", "8"},
                                       {"striping_factor", "x"}};
    MPI_File fh;
    for (size_t i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++) {
        char what[128];
        snprintf(what, sizeof(what), "open with hint %s=%s", foreign[i][0], foreign[i][1]);
        info = info_of(foreign[i][0], foreign[i][1]);
        if (amptest_ok(
                MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, info, &fh),
                what))
            MPI_File_close(&fh);
        MPI_Info_free(&info);
    }

    if (amptest_size < 2)
        return;
    /* collective hints must agree: mismatches are errors on every rank, never a hang */
    info = info_of("cb_buffer_size", amptest_rank == 0 ? "1M" : "2M");
    open_fails(path, MPI_MODE_RDWR, info, MPI_ERR_NOT_SAME, NULL, "cb_buffer_size differs");
    MPI_Info_free(&info);
    info = info_of("ampio_fcoll", amptest_rank == 0 ? "two_phase" : "static_seg");
    open_fails(path, MPI_MODE_RDWR, info, MPI_ERR_NOT_SAME, NULL, "ampio_fcoll differs");
    MPI_Info_free(&info);
    /* the same value written two ways is the same value */
    info = info_of("cb_buffer_size", amptest_rank == 0 ? "1M" : "1048576");
    if (amptest_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, info, &fh),
                   "cb_buffer_size 1M and 1048576"))
        MPI_File_close(&fh);
    MPI_Info_free(&info);
    /* local hints may differ */
    info = info_of("ind_rd_buffer_size", amptest_rank == 0 ? "64K" : "128K");
    if (amptest_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, info, &fh),
                   "ind_rd_buffer_size differs"))
        MPI_File_close(&fh);
    MPI_Info_free(&info);
    open_fails(path, amptest_rank == 0 ? MPI_MODE_RDWR : MPI_MODE_RDONLY, MPI_INFO_NULL,
               MPI_ERR_NOT_SAME, NULL, "the access mode differs");
    /* some ranks create and some do not: the two take different steps, and must still fail
     * alike, either way round */
    int C = MPI_MODE_CREATE | MPI_MODE_RDWR;
    open_fails(path, amptest_rank == 0 ? C : MPI_MODE_RDWR, MPI_INFO_NULL, MPI_ERR_NOT_SAME, NULL,
               "rank 0 alone creates");
    open_fails(path, amptest_rank == 0 ? MPI_MODE_RDWR : C, MPI_INFO_NULL, MPI_ERR_NOT_SAME, NULL,
               "all but rank 0 create");
    /* a file that does not exist is not made by an open that fails */
    const char *absent = in_dir("never_made.dat");
    if (amptest_rank == 0)
        unlink(absent);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int first = 0; first < 2; first++) {
        int creates = (amptest_rank == 0) == (first == 0);
        MPI_File f2;
        int rc =
            MPI_File_open(MPI_COMM_WORLD, absent, creates ? C : MPI_MODE_RDWR, MPI_INFO_NULL, &f2);
        int cls = -1, lo = 0, hi = 0;
        MPI_Error_class(rc, &cls);
        MPI_Allreduce(&cls, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&cls, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        amptest_check(rc != MPI_SUCCESS && lo == hi,
                      "create on %s: every rank must fail with one class (classes %d..%d)",
                      first == 0 ? "rank 0 alone" : "all but rank 0", lo, hi);
        if (rc == MPI_SUCCESS)
            MPI_File_close(&f2);
        MPI_Barrier(MPI_COMM_WORLD);
        if (amptest_rank == 0)
            amptest_check(access(absent, F_OK) != 0, "create on %s: the failed open made the file",
                          first == 0 ? "rank 0 alone" : "all but rank 0");
        if (amptest_rank == 0)
            unlink(absent);
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    snprintf(dir, sizeof(dir), "%s", amptest_path(""));
    size_t n = strlen(dir);
    if (n > 1 && dir[n - 1] == '/')
        dir[n - 1] = '\0';
    static const errtest_part_t parts[] = {{"amode", access_modes}, {"exist", missing_and_existing},
                                           {"names", bad_names},    {"longpath", long_paths},
                                           {"perm", permissions},   {"inuse", in_use},
                                           {"hints", hints}};
    errtest_run_parts(argc, argv, parts, sizeof(parts) / sizeof(parts[0]));
    return amptest_finish();
}
