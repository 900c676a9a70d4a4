/* Entry points for Fortran handle conversion and data representations, and the ampio_ API. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ampio.h"
#include "api/api.h"
#include "coll/coll.h"
#include "core/mount.h"
#include "io/datarep.h"

#pragma GCC visibility push(default)

MPI_Fint PMPI_File_c2f(MPI_File fh)
{
    if (fh == MPI_FILE_NULL)
        return 0;
    amp_file_t *f = amp_handle_get(fh);
    return f ? f->fint : -1;
}
AMP_WEAK(c2f)

MPI_File PMPI_File_f2c(MPI_Fint fh)
{
    return amp_handle_from_fint(fh);
}
AMP_WEAK(f2c)

int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    int rc = amp_init();
    if (rc != MPI_SUCCESS)
        return rc;
    amp_datarep_fns_t fns = {.read_fn = read_conversion_fn, .write_fn = write_conversion_fn};
    rc = amp_datarep_register(datarep, &fns, dtype_file_extent_fn, extra_state);
    return amp_errh_raise(NULL, rc, "MPI_Register_datarep");
}
AMP_ALIAS(MPI_Register_datarep, PMPI_Register_datarep)

#if MPI_VERSION >= 4
int PMPI_Register_datarep_c(const char *datarep,
                            MPI_Datarep_conversion_function_c *read_conversion_fn,
                            MPI_Datarep_conversion_function_c *write_conversion_fn,
                            MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    int rc = amp_init();
    if (rc != MPI_SUCCESS)
        return rc;
    amp_datarep_fns_t fns = {.read_fn_c = read_conversion_fn, .write_fn_c = write_conversion_fn};
    rc = amp_datarep_register(datarep, &fns, dtype_file_extent_fn, extra_state);
    return amp_errh_raise(NULL, rc, "MPI_Register_datarep_c");
}
AMP_ALIAS(MPI_Register_datarep_c, PMPI_Register_datarep_c)
#endif

const char *ampio_version(void)
{
    return AMPIO_VERSION;
}

const char *ampio_mpi_family(void)
{
#if defined(OPEN_MPI)
    return "openmpi";
#elif defined(MPICH_VERSION)
    return "mpich";
#else
    return "other";
#endif
}

int ampio_print_config(FILE *out, MPI_Info hints)
{
    return ampio_print_file_config(out, NULL, hints);
}

/* The file system of `path`, and the layout the file has (or what a new one would ask for). */
static void amp_print_layout(FILE *out, const char *path, const amp_cfg_t *cfg)
{
    char mount[4096] = "?", type[256] = "?", text[256];
    amp_mount_of(path, mount, sizeof(mount), type, sizeof(type));
    int p = amp_fs_select(path, AMP_FS_CAN_GET);
    fprintf(out, "file: %s\nfile system: %s (%s), provider %s\n", path, mount, type,
            amp_fs_provider(p)->name);
    amp_fs_want_t want = amp_file_want(cfg);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(out, "layout: no such file yet (a new file asks for unit %lld, count %lld)\n",
                (long long)want.unit, (long long)want.count);
        return;
    }
    struct stat st;
    amp_fs_layout_t l;
    amp_fs_layout_of(p, fd, &want, fstat(fd, &st) == 0 ? st.st_blksize : 4096, &l);
    close(fd);
    amp_fs_layout_describe(&l, text, sizeof(text));
    fprintf(out, "layout: %s\ncycle buffer: %lld bytes\n", text,
            (long long)amp_coll_cycle_buffer(cfg, &l));
}

int ampio_print_file_config(FILE *out, const char *path, MPI_Info hints)
{
    amp_cfg_t cfg;
    int rc = amp_cfg_load_for(&cfg, hints, path);
    if (rc != MPI_SUCCESS)
        return rc;
    amp_cfg_print(&cfg, out);
    if (path)
        amp_print_layout(out, path, &cfg);
    amp_cfg_free(&cfg);
    return MPI_SUCCESS;
}

#pragma GCC visibility pop
