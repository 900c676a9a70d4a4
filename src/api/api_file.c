/* Entry points for files: open, close, delete, size, hints, views, pointers, atomicity. */
#include "api/api.h"
#include "io/datarep.h"

#pragma GCC visibility push(default)

int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    const char *routine = "MPI_File_open";
    int rc = amp_init();
    if (rc != MPI_SUCCESS)
        return rc;
    if (!fh)
        return amp_errh_raise(NULL, amp_err(MPI_ERR_ARG, "%s: fh is NULL", routine), routine);
    *fh = MPI_FILE_NULL;
    amp_file_t *f;
    rc = amp_file_open(comm, filename, amode, info, &f);
    if (rc != MPI_SUCCESS)
        return amp_errh_raise(NULL, rc, routine);
    *fh = amp_file_handle(f);
    return MPI_SUCCESS;
}
AMP_WEAK(open)

int PMPI_File_close(MPI_File *fh)
{
    const char *routine = "MPI_File_close";
    amp_file_t *f;
    int rc = amp_api_file(fh ? *fh : MPI_FILE_NULL, routine, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Errhandler eh = f->errhandler;
    rc = amp_file_close(f);
    *fh = MPI_FILE_NULL;
    if (rc == MPI_SUCCESS)
        return rc;
    /* the file is gone: raise on a stand-in that carries its handler */
    amp_file_t gone = {.errhandler = eh, .path = "(closed file)"};
    return amp_errh_raise(&gone, rc, routine);
}
AMP_WEAK(close)

int PMPI_File_delete(const char *filename, MPI_Info info)
{
    int rc = amp_init();
    if (rc != MPI_SUCCESS)
        return rc;
    return amp_errh_raise(NULL, amp_file_delete(filename, info), "MPI_File_delete");
}
AMP_WEAK(delete)

int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    AMP_API_ON_FILE(fh, "MPI_File_set_size", amp_file_set_size(f, size));
}
AMP_WEAK(set_size)

int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    AMP_API_ON_FILE(fh, "MPI_File_preallocate", amp_file_preallocate(f, size));
}
AMP_WEAK(preallocate)

static int amp_api_get_size(amp_file_t *f, MPI_Offset *size)
{
    int rc = AMP_API_NEED(size, "MPI_File_get_size", "size");
    return rc != MPI_SUCCESS ? rc : amp_file_get_size(f, size);
}

int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    AMP_API_ON_FILE(fh, "MPI_File_get_size", amp_api_get_size(f, size));
}
AMP_WEAK(get_size)

static int amp_api_get_group(amp_file_t *f, MPI_Group *group)
{
    int rc = AMP_API_NEED(group, "MPI_File_get_group", "group");
    return rc != MPI_SUCCESS ? rc : PMPI_Comm_group(f->comm, group);
}

int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    AMP_API_ON_FILE(fh, "MPI_File_get_group", amp_api_get_group(f, group));
}
AMP_WEAK(get_group)

static int amp_api_get_int(int value, int *out, const char *routine)
{
    int rc = AMP_API_NEED(out, routine, "output");
    if (rc == MPI_SUCCESS)
        *out = value;
    return rc;
}

int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    AMP_API_ON_FILE(fh, "MPI_File_get_amode",
                    amp_api_get_int(f->amode, amode, "MPI_File_get_amode"));
}
AMP_WEAK(get_amode)

int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
    AMP_API_ON_FILE(fh, "MPI_File_get_atomicity",
                    amp_api_get_int(__atomic_load_n(&f->atomic, __ATOMIC_ACQUIRE), flag,
                                    "MPI_File_get_atomicity"));
}
AMP_WEAK(get_atomicity)

int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    AMP_API_ON_FILE(fh, "MPI_File_set_atomicity", amp_file_set_atomicity(f, flag));
}
AMP_WEAK(set_atomicity)

int PMPI_File_sync(MPI_File fh)
{
    AMP_API_ON_FILE(fh, "MPI_File_sync", amp_file_sync(f));
}
AMP_WEAK(sync)

int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    AMP_API_ON_FILE(fh, "MPI_File_set_info", amp_file_set_info(f, info));
}
AMP_WEAK(set_info)

static int amp_api_get_info(amp_file_t *f, MPI_Info *info)
{
    int rc = AMP_API_NEED(info, "MPI_File_get_info", "info");
    return rc != MPI_SUCCESS ? rc : amp_file_get_info(f, info);
}

int PMPI_File_get_info(MPI_File fh, MPI_Info *info)
{
    AMP_API_ON_FILE(fh, "MPI_File_get_info", amp_api_get_info(f, info));
}
AMP_WEAK(get_info)

int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char *datarep, MPI_Info info)
{
    AMP_API_ON_FILE(fh, "MPI_File_set_view",
                    amp_file_set_view(f, disp, etype, filetype, datarep, info));
}
AMP_WEAK(set_view)

static int amp_api_get_view(amp_file_t *f, MPI_Offset *disp, MPI_Datatype *etype,
                            MPI_Datatype *filetype, char *datarep)
{
    if (!disp || !etype || !filetype || !datarep)
        return amp_err(MPI_ERR_ARG, "MPI_File_get_view: an output argument is NULL");
    return amp_file_get_view(f, disp, etype, filetype, datarep);
}

int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                       char *datarep)
{
    AMP_API_ON_FILE(fh, "MPI_File_get_view", amp_api_get_view(f, disp, etype, filetype, datarep));
}
AMP_WEAK(get_view)

int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    AMP_API_ON_FILE(fh, "MPI_File_seek", amp_file_seek(f, offset, whence));
}
AMP_WEAK(seek)

static int amp_api_get_position(amp_file_t *f, MPI_Offset *offset)
{
    if (!offset)
        return amp_err(MPI_ERR_ARG, "MPI_File_get_position: offset is NULL");
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return amp_err(MPI_ERR_UNSUPPORTED_OPERATION,
                       "MPI_File_get_position: \"%s\" was opened MPI_MODE_SEQUENTIAL", f->path);
    pthread_mutex_lock(&f->fp_lock);
    *offset = f->fp;
    pthread_mutex_unlock(&f->fp_lock);
    return MPI_SUCCESS;
}

int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    AMP_API_ON_FILE(fh, "MPI_File_get_position", amp_api_get_position(f, offset));
}
AMP_WEAK(get_position)

int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    AMP_API_ON_FILE(fh, "MPI_File_seek_shared", amp_file_seek_shared(f, offset, whence));
}
AMP_WEAK(seek_shared)

static int amp_api_get_position_shared(amp_file_t *f, MPI_Offset *offset)
{
    int rc = AMP_API_NEED(offset, "MPI_File_get_position_shared", "offset");
    return rc != MPI_SUCCESS ? rc : amp_file_get_position_shared(f, offset);
}

int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    AMP_API_ON_FILE(fh, "MPI_File_get_position_shared", amp_api_get_position_shared(f, offset));
}
AMP_WEAK(get_position_shared)

static int amp_api_get_byte_offset(amp_file_t *f, MPI_Offset offset, MPI_Offset *disp)
{
    int rc = AMP_API_NEED(disp, "MPI_File_get_byte_offset", "disp");
    return rc != MPI_SUCCESS ? rc : amp_file_get_byte_offset(f, offset, disp);
}

int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    AMP_API_ON_FILE(fh, "MPI_File_get_byte_offset", amp_api_get_byte_offset(f, offset, disp));
}
AMP_WEAK(get_byte_offset)

static int amp_api_type_extent(amp_file_t *f, MPI_Datatype type, MPI_Count *extent)
{
    int rc = AMP_API_NEED(extent, "MPI_File_get_type_extent", "extent");
    if (rc == MPI_SUCCESS)
        rc = amp_dt_check(type, "the datatype");
    return rc != MPI_SUCCESS ? rc : amp_datarep_extent(f->view.rep, type, extent);
}

static int amp_api_type_extent_aint(amp_file_t *f, MPI_Datatype type, MPI_Aint *extent)
{
    MPI_Count wide = 0;
    int rc = AMP_API_NEED(extent, "MPI_File_get_type_extent", "extent");
    if (rc == MPI_SUCCESS)
        rc = amp_api_type_extent(f, type, &wide);
    if (rc == MPI_SUCCESS)
        *extent = (MPI_Aint)wide;
    return rc;
}

int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    AMP_API_ON_FILE(fh, "MPI_File_get_type_extent", amp_api_type_extent_aint(f, datatype, extent));
}
AMP_WEAK(get_type_extent)

#if MPI_VERSION >= 4
int PMPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent)
{
    AMP_API_ON_FILE(fh, "MPI_File_get_type_extent_c", amp_api_type_extent(f, datatype, extent));
}
AMP_WEAK(get_type_extent_c)
#endif

#pragma GCC visibility pop
