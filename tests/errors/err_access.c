/* Errors of views and data accesses: read-only and write-only files, sequential files, bad
 * offsets, counts, datatypes, data representations and handles. Each error must leave the file
 * usable and its data untouched, which the end of every part checks by reading back. */
#include "errtest.h"

#define BLOCK 64 /* bytes each rank owns in block.dat */

static char block_path[4608];
static unsigned char mine[BLOCK];

static MPI_File open_block(int amode)
{
    MPI_File fh = MPI_FILE_NULL;
    amptest_ok(MPI_File_open(MPI_COMM_WORLD, block_path, amode, MPI_INFO_NULL, &fh), "open");
    return fh;
}

/* Every rank's block is still what it wrote. */
static void blocks_intact(const char *when)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (amptest_rank != 0)
        return;
    size_t n = (size_t)amptest_size * BLOCK;
    unsigned char *model = malloc(n);
    for (int r = 0; r < amptest_size; r++)
        for (int i = 0; i < BLOCK; i++)
            model[(size_t)r * BLOCK + i] = amptest_byte(r, i);
    if (!amptest_compare_file("block.dat", model, n))
        amptest_fail("block.dat changed %s", when);
    free(model);
}

static void make_blocks(void)
{
    snprintf(block_path, sizeof(block_path), "%s", amptest_path("block.dat"));
    for (int i = 0; i < BLOCK; i++)
        mine[i] = amptest_byte(amptest_rank, i);
    MPI_File fh = open_block(MPI_MODE_RDWR | MPI_MODE_CREATE);
    amptest_ok(MPI_File_write_at_all(fh, (MPI_Offset)amptest_rank * BLOCK, mine, BLOCK, MPI_BYTE,
                                     MPI_STATUS_IGNORE),
               "write_at_all");
    amptest_ok(MPI_File_close(&fh), "close");
    blocks_intact("after it was written");
}

static void read_only(void)
{
    MPI_File fh = open_block(MPI_MODE_RDONLY);
    unsigned char buf[BLOCK];
    MPI_Offset at = (MPI_Offset)amptest_rank * BLOCK;
    MPI_Request req;
    amptest_class(MPI_File_write_at(fh, at, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE),
                  MPI_ERR_READ_ONLY, "write_at on a RDONLY file");
    amptest_class(MPI_File_write(fh, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_READ_ONLY,
                  "write on a RDONLY file");
    amptest_class(MPI_File_iwrite_at(fh, at, buf, BLOCK, MPI_BYTE, &req), MPI_ERR_READ_ONLY,
                  "iwrite_at on a RDONLY file");
    amptest_class(MPI_File_write_shared(fh, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE),
                  MPI_ERR_READ_ONLY, "write_shared on a RDONLY file");
    errtest_class_all(MPI_COMM_WORLD,
                      MPI_File_write_at_all(fh, at, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE),
                      MPI_ERR_READ_ONLY, "write_at_all on a RDONLY file");
    errtest_class_all(MPI_COMM_WORLD,
                      MPI_File_write_ordered(fh, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE),
                      MPI_ERR_READ_ONLY, "write_ordered on a RDONLY file");
    errtest_class_all(MPI_COMM_WORLD, MPI_File_set_size(fh, 10), MPI_ERR_READ_ONLY,
                      "set_size on a RDONLY file");
    errtest_class_all(MPI_COMM_WORLD, MPI_File_preallocate(fh, 1 << 20), MPI_ERR_READ_ONLY,
                      "preallocate on a RDONLY file");
    /* reading still works */
    MPI_Status st;
    int got = -1;
    if (amptest_ok(MPI_File_read_at_all(fh, at, buf, BLOCK, MPI_BYTE, &st), "read_at_all")) {
        MPI_Get_count(&st, MPI_BYTE, &got);
        amptest_check(got == BLOCK && memcmp(buf, mine, BLOCK) == 0, "read back %d bytes", got);
    }
    amptest_ok(MPI_File_close(&fh), "close");
    blocks_intact("after writes to a RDONLY file");

    fh = open_block(MPI_MODE_WRONLY);
    amptest_class(MPI_File_read_at(fh, at, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_ACCESS,
                  "read_at on a WRONLY file");
    errtest_class_all(MPI_COMM_WORLD,
                      MPI_File_read_all(fh, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE),
                      MPI_ERR_ACCESS, "read_all on a WRONLY file");
    amptest_ok(MPI_File_close(&fh), "close");
}

static void sequential(void)
{
    const char *name = "sequential.dat";
    char path[4608];
    snprintf(path, sizeof(path), "%s", amptest_path(name));
    MPI_File fh;
    if (!amptest_ok(MPI_File_open(MPI_COMM_WORLD, path,
                                  MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_SEQUENTIAL,
                                  MPI_INFO_NULL, &fh),
                    "open SEQUENTIAL"))
        return;
    int U = MPI_ERR_UNSUPPORTED_OPERATION;
    MPI_Offset pos;
    MPI_Request req;
    amptest_class(MPI_File_write_at(fh, 0, mine, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE), U,
                  "write_at on a SEQUENTIAL file");
    amptest_class(MPI_File_write(fh, mine, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE), U,
                  "write on a SEQUENTIAL file");
    amptest_class(MPI_File_iwrite_at(fh, 0, mine, BLOCK, MPI_BYTE, &req), U,
                  "iwrite_at on a SEQUENTIAL file");
    amptest_class(MPI_File_seek(fh, 0, MPI_SEEK_SET), U, "seek on a SEQUENTIAL file");
    amptest_class(MPI_File_get_position(fh, &pos), U, "get_position on a SEQUENTIAL file");
    amptest_class(MPI_File_get_byte_offset(fh, 0, &pos), U, "get_byte_offset on a SEQUENTIAL file");
    errtest_class_all(MPI_COMM_WORLD,
                      MPI_File_write_at_all(fh, 0, mine, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE), U,
                      "write_at_all on a SEQUENTIAL file");
    errtest_class_all(MPI_COMM_WORLD, MPI_File_set_size(fh, 0), U, "set_size on a SEQUENTIAL file");
    /* the shared pointer is what a sequential file is for */
    amptest_ok(MPI_File_write_ordered(fh, mine, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE),
               "write_ordered on a SEQUENTIAL file");
    amptest_ok(MPI_File_close(&fh), "close");
    MPI_Barrier(MPI_COMM_WORLD);
    if (amptest_rank == 0) {
        size_t n = (size_t)amptest_size * BLOCK;
        unsigned char *model = malloc(n);
        for (int r = 0; r < amptest_size; r++)
            for (int i = 0; i < BLOCK; i++)
                model[(size_t)r * BLOCK + i] = amptest_byte(r, i);
        amptest_compare_file(name, model, n);
        free(model);
    }
}

static void offsets_and_counts(void)
{
    MPI_File fh = open_block(MPI_MODE_RDWR);
    unsigned char buf[BLOCK];
    MPI_Offset at = (MPI_Offset)amptest_rank * BLOCK;
    amptest_class(MPI_File_read_at(fh, -1, buf, 1, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_ARG,
                  "read_at offset -1");
    amptest_class(MPI_File_write_at(fh, -BLOCK, mine, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE),
                  MPI_ERR_ARG, "write_at at a negative offset");
    amptest_class(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG, "seek with whence 12345");
    amptest_class(MPI_File_seek(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG, "seek to -1");
    amptest_class(MPI_File_seek(fh, -(1LL << 40), MPI_SEEK_END), MPI_ERR_ARG,
                  "seek before the start from the end");
    MPI_Offset pos = -7;
    amptest_ok(MPI_File_get_position(fh, &pos), "get_position");
    amptest_check(pos == 0, "failed seeks moved the pointer to %lld", (long long)pos);
    amptest_class(MPI_File_get_byte_offset(fh, -3, &pos), MPI_ERR_ARG, "get_byte_offset -3");
    errtest_class_all(MPI_COMM_WORLD, MPI_File_seek_shared(fh, 0, 999), MPI_ERR_ARG,
                      "seek_shared with whence 999");
    errtest_class_all(MPI_COMM_WORLD, MPI_File_set_size(fh, -1), MPI_ERR_ARG, "set_size -1");
    errtest_class_all(MPI_COMM_WORLD, MPI_File_preallocate(fh, -1), MPI_ERR_ARG, "preallocate -1");

    amptest_class(MPI_File_write_at(fh, at, mine, -1, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_COUNT,
                  "write_at count -1");
    amptest_class(MPI_File_read(fh, buf, -5, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_COUNT,
                  "read count -5");
    errtest_class_all(MPI_COMM_WORLD, MPI_File_write_all(fh, mine, -1, MPI_BYTE, MPI_STATUS_IGNORE),
                      MPI_ERR_COUNT, "write_all count -1");
#if MPI_VERSION >= 4
    amptest_class(MPI_File_write_at_c(fh, at, mine, -1, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_COUNT,
                  "write_at_c count -1");
#endif

    /* no data is not an error, with or without a buffer */
    MPI_Status st;
    int got = -1;
    if (amptest_ok(MPI_File_write_at(fh, at, NULL, 0, MPI_BYTE, &st), "write_at of nothing")) {
        MPI_Get_count(&st, MPI_BYTE, &got);
        amptest_check(got == 0, "write_at of nothing counted %d", got);
    }
    amptest_ok(MPI_File_read_at(fh, at, NULL, 0, MPI_INT, MPI_STATUS_IGNORE), "read_at of nothing");
    amptest_ok(MPI_File_write_all(fh, NULL, 0, MPI_BYTE, MPI_STATUS_IGNORE),
               "write_all of nothing");

    /* NULL output arguments */
    amptest_class(MPI_File_get_size(fh, NULL), MPI_ERR_ARG, "get_size with NULL");
    amptest_class(MPI_File_get_position(fh, NULL), MPI_ERR_ARG, "get_position with NULL");
    amptest_class(MPI_File_get_amode(fh, NULL), MPI_ERR_ARG, "get_amode with NULL");
    amptest_class(MPI_File_get_info(fh, NULL), MPI_ERR_ARG, "get_info with NULL");
    amptest_class(MPI_File_iwrite_at(fh, at, mine, BLOCK, MPI_BYTE, NULL), MPI_ERR_ARG,
                  "iwrite_at with a NULL request");
    amptest_ok(MPI_File_close(&fh), "close");
    blocks_intact("after bad offsets and counts");

    if (amptest_under_ampio()) /* a native MPI-IO may crash on it */
        errtest_class_all(
            MPI_COMM_WORLD,
            MPI_File_open(MPI_COMM_WORLD, block_path, MPI_MODE_RDWR, MPI_INFO_NULL, NULL),
            MPI_ERR_ARG, "open with a NULL handle argument");
}

static void datatypes(void)
{
    MPI_File fh = open_block(MPI_MODE_RDWR);
    MPI_Offset at = (MPI_Offset)amptest_rank * BLOCK;
    int T = MPI_ERR_TYPE;
#ifdef MPICH_VERSION
    int V = MPI_ERR_IO; /* an etype or filetype no view may use: ROMIO's class in MPICH */
#else
    int V = MPI_ERR_TYPE;
#endif
    amptest_class(MPI_File_write_at(fh, at, mine, 1, MPI_DATATYPE_NULL, MPI_STATUS_IGNORE), T,
                  "write_at of MPI_DATATYPE_NULL");
    MPI_Datatype loose;
    MPI_Type_contiguous(BLOCK, MPI_BYTE, &loose);
    amptest_class(MPI_File_write_at(fh, at, mine, 1, loose, MPI_STATUS_IGNORE), T,
                  "write_at of an uncommitted datatype");
    MPI_Type_free(&loose);
    errtest_class_all(
        MPI_COMM_WORLD,
        MPI_File_set_view(fh, 0, MPI_DATATYPE_NULL, MPI_BYTE, "native", MPI_INFO_NULL), T,
        "set_view with etype MPI_DATATYPE_NULL");
    errtest_class_all(
        MPI_COMM_WORLD,
        MPI_File_set_view(fh, 0, MPI_BYTE, MPI_DATATYPE_NULL, "native", MPI_INFO_NULL), T,
        "set_view with filetype MPI_DATATYPE_NULL");

    MPI_Datatype six, back, behind, twice;
    MPI_Type_contiguous(6, MPI_BYTE, &six);
    MPI_Type_commit(&six);
    errtest_class_all(MPI_COMM_WORLD,
                      MPI_File_set_view(fh, 0, MPI_INT, six, "native", MPI_INFO_NULL), T,
                      "set_view with a filetype of 6 bytes of 4-byte etypes");
    int lens[2] = {1, 1}, disps[2] = {4, 0};
    MPI_Type_indexed(2, lens, disps, MPI_INT, &back);
    MPI_Type_commit(&back);
    errtest_class_all(MPI_COMM_WORLD,
                      MPI_File_set_view(fh, 0, MPI_INT, back, "native", MPI_INFO_NULL), V,
                      "set_view with decreasing displacements");
    MPI_Aint neg = -4;
    int one = 1;
    MPI_Type_create_hindexed(1, &one, &neg, MPI_INT, &behind);
    MPI_Type_commit(&behind);
    errtest_class_all(MPI_COMM_WORLD,
                      MPI_File_set_view(fh, 16, MPI_INT, behind, "native", MPI_INFO_NULL), V,
                      "set_view with a negative displacement in the filetype");
    int lens2[2] = {2, 2}, disps2[2] = {0, 1};
    MPI_Type_indexed(2, lens2, disps2, MPI_INT, &twice);
    MPI_Type_commit(&twice);
    errtest_class_all(MPI_COMM_WORLD,
                      MPI_File_set_view(fh, 0, MPI_INT, twice, "native", MPI_INFO_NULL), V,
                      "set_view with an overlapping filetype on a writable file");

    /* the accesses must be whole etypes */
    amptest_ok(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL),
               "set_view of ints");
    amptest_class(MPI_File_write_at(fh, 0, mine, 3, MPI_BYTE, MPI_STATUS_IGNORE), T,
                  "write_at of 3 bytes with 4-byte etypes");
    amptest_ok(MPI_File_close(&fh), "close");

    /* reading through an overlapping filetype is allowed */
    fh = open_block(MPI_MODE_RDONLY);
    if (amptest_ok(MPI_File_set_view(fh, 0, MPI_INT, twice, "native", MPI_INFO_NULL),
                   "set_view with an overlapping filetype on a RDONLY file")) {
        int ints[4] = {0};
        amptest_ok(MPI_File_read_at(fh, 0, ints, 4, MPI_INT, MPI_STATUS_IGNORE),
                   "read through an overlapping filetype");
        int first[3];
        for (int i = 0; i < 12; i++)
            ((unsigned char *)first)[i] = amptest_byte(0, i);
        amptest_check(ints[0] == first[0] && ints[1] == first[1] && ints[2] == first[1] &&
                          ints[3] == first[2],
                      "read through an overlapping filetype gave the wrong ints");
    }
    amptest_ok(MPI_File_close(&fh), "close");
    MPI_Type_free(&six);
    MPI_Type_free(&back);
    MPI_Type_free(&behind);
    MPI_Type_free(&twice);
    blocks_intact("after bad datatypes");
}

static int dummy_conversion(void *userbuf, MPI_Datatype type, int count, void *filebuf,
                            MPI_Offset position, void *extra)
{
    (void)userbuf, (void)type, (void)count, (void)filebuf, (void)position, (void)extra;
    return MPI_SUCCESS;
}

static int dummy_extent(MPI_Datatype type, MPI_Aint *extent, void *extra)
{
    (void)extra;
    MPI_Aint lb;
    return MPI_Type_get_extent(type, &lb, extent);
}

static void datareps(void)
{
    MPI_File fh = open_block(MPI_MODE_RDWR);
    int rc = MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "foo", MPI_INFO_NULL);
    if (errtest_class_all(MPI_COMM_WORLD, rc, MPI_ERR_UNSUPPORTED_DATAREP, "datarep \"foo\""))
        errtest_text_has(rc, "foo", "datarep \"foo\"");
    errtest_class_all(MPI_COMM_WORLD,
                      MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "", MPI_INFO_NULL),
                      MPI_ERR_UNSUPPORTED_DATAREP, "datarep \"\"");
    if (amptest_size > 1)
        errtest_class_all(MPI_COMM_WORLD,
                          MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE,
                                            amptest_rank ? "external32" : "native", MPI_INFO_NULL),
                          MPI_ERR_NOT_SAME, "datarep differs between ranks");
    amptest_class(
        MPI_Register_datarep("native", dummy_conversion, dummy_conversion, dummy_extent, NULL),
        MPI_ERR_DUP_DATAREP, "register \"native\"");
    amptest_class(
        MPI_Register_datarep("external32", dummy_conversion, dummy_conversion, dummy_extent, NULL),
        MPI_ERR_DUP_DATAREP, "register \"external32\"");
    if (amptest_ok(MPI_Register_datarep("errtest_rep", dummy_conversion, dummy_conversion,
                                        dummy_extent, NULL),
                   "register a new representation"))
        amptest_class(MPI_Register_datarep("errtest_rep", dummy_conversion, dummy_conversion,
                                           dummy_extent, NULL),
                      MPI_ERR_DUP_DATAREP, "register a representation twice");
    amptest_ok(MPI_File_close(&fh), "close");
    blocks_intact("after bad data representations");
}

static void handles(void)
{
    unsigned char buf[BLOCK];
    MPI_Offset size;
    MPI_Info info;
    int F = MPI_ERR_FILE;
    amptest_class(MPI_File_read_at(MPI_FILE_NULL, 0, buf, 1, MPI_BYTE, MPI_STATUS_IGNORE), F,
                  "read_at on MPI_FILE_NULL");
    amptest_class(MPI_File_write(MPI_FILE_NULL, buf, 1, MPI_BYTE, MPI_STATUS_IGNORE), F,
                  "write on MPI_FILE_NULL");
    amptest_class(MPI_File_get_size(MPI_FILE_NULL, &size), F, "get_size on MPI_FILE_NULL");
    amptest_class(MPI_File_get_info(MPI_FILE_NULL, &info), F, "get_info on MPI_FILE_NULL");
    amptest_class(MPI_File_seek(MPI_FILE_NULL, 0, MPI_SEEK_SET), F, "seek on MPI_FILE_NULL");
    amptest_class(MPI_File_sync(MPI_FILE_NULL), F, "sync on MPI_FILE_NULL");
    MPI_File none = MPI_FILE_NULL;
    amptest_class(MPI_File_close(&none), F, "close of MPI_FILE_NULL");

    /* a handle kept after close is no file any more (ampio can tell; a native MPI-IO may
     * crash on it) */
    MPI_File fh = open_block(MPI_MODE_RDWR), stale = fh;
    amptest_ok(MPI_File_close(&fh), "close");
    amptest_check(fh == MPI_FILE_NULL, "close did not set the handle to MPI_FILE_NULL");
    if (amptest_under_ampio()) {
        amptest_class(MPI_File_read_at(stale, 0, buf, 1, MPI_BYTE, MPI_STATUS_IGNORE), F,
                      "read_at on a closed file");
        amptest_class(MPI_File_close(&stale), F, "second close");
    }
}

/* Offsets whose byte offset does not fit in MPI_Offset: 2^61 etypes of 8 bytes is 2^64, which
 * wrapped round to byte 0. Nothing may be written anywhere, and the pointers stay. */
static void overflow(void)
{
    MPI_File fh = open_block(MPI_MODE_RDWR);
    MPI_Offset big = (MPI_Offset)1 << 61, pos = -1;
    unsigned char buf[BLOCK];
    amptest_ok(MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL),
               "set_view of doubles");
    amptest_class(MPI_File_write_at(fh, big, mine, BLOCK / 8, MPI_DOUBLE, MPI_STATUS_IGNORE),
                  MPI_ERR_ARG, "write_at at 2^61 doubles");
    amptest_class(MPI_File_read_at(fh, big, buf, BLOCK / 8, MPI_DOUBLE, MPI_STATUS_IGNORE),
                  MPI_ERR_ARG, "read_at at 2^61 doubles");
    amptest_class(MPI_File_write_at(fh, ((MPI_Offset)1 << 60) - 1, mine, BLOCK / 8, MPI_DOUBLE,
                                    MPI_STATUS_IGNORE),
                  MPI_ERR_ARG, "write_at whose end passes 2^63 bytes");
    errtest_class_all(MPI_COMM_WORLD,
                      MPI_File_write_at_all(fh, big + amptest_rank, mine, BLOCK / 8, MPI_DOUBLE,
                                            MPI_STATUS_IGNORE),
                      MPI_ERR_ARG, "write_at_all at 2^61 doubles");
    /* one rank past the end: every rank fails (the others may have written their own blocks
     * again) */
    errtest_class_all(MPI_COMM_WORLD,
                      MPI_File_write_at_all(fh, amptest_rank == 0 ? big : amptest_rank * BLOCK / 8,
                                            mine, BLOCK / 8, MPI_DOUBLE, MPI_STATUS_IGNORE),
                      MPI_ERR_ARG, "write_at_all at 2^61 doubles on rank 0");
    amptest_class(MPI_File_get_byte_offset(fh, big, &pos), MPI_ERR_ARG,
                  "get_byte_offset of 2^61 doubles");
    amptest_ok(MPI_File_seek(fh, big, MPI_SEEK_SET), "seek to 2^61 doubles");
    amptest_class(MPI_File_write(fh, mine, BLOCK / 8, MPI_DOUBLE, MPI_STATUS_IGNORE), MPI_ERR_ARG,
                  "write at the pointer 2^61 doubles");
    amptest_ok(MPI_File_get_position(fh, &pos), "get_position");
    amptest_check(pos == big, "a failed write moved the pointer from 2^61 to %lld", (long long)pos);
    amptest_class(MPI_File_seek(fh, INT64_MAX, MPI_SEEK_CUR), MPI_ERR_ARG,
                  "seek whose sum overflows");
    /* a view displacement near the top: the first etype fits, the data does not */
    amptest_ok(MPI_File_set_view(fh, INT64_MAX - 4, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL),
               "set_view near the largest offset");
    amptest_class(MPI_File_write_at(fh, 0, mine, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_ARG,
                  "write_at past the largest offset through the displacement");
    amptest_ok(MPI_File_close(&fh), "close");
    blocks_intact("after offsets past the largest one");
}

int main(int argc, char **argv)
{
    amptest_init(&argc, &argv);
    make_blocks();
    static const errtest_part_t parts[] = {
        {"rdonly", read_only}, {"sequential", sequential}, {"offsets", offsets_and_counts},
        {"types", datatypes},  {"datarep", datareps},      {"handles", handles},
        {"overflow", overflow}};
    errtest_run_parts(argc, argv, parts, sizeof(parts) / sizeof(parts[0]));
    return amptest_finish();
}
