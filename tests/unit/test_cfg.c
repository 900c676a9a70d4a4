/* Parsing of parameter values and the precedence of their sources. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "core/cfg.h"
#include "unit.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int64_t v = 0;
    UNIT_EQ(amp_cfg_parse_size("4096", &v), 0);
    UNIT_EQ(v, 4096);
    UNIT_EQ(amp_cfg_parse_size("4M", &v), 0);
    UNIT_EQ(v, 4 << 20);
    UNIT_EQ(amp_cfg_parse_size("1GiB", &v), 0);
    UNIT_EQ(v, 1 << 30);
    UNIT_EQ(amp_cfg_parse_size("512k", &v), 0);
    UNIT_EQ(v, 512 << 10);
    UNIT_EQ(amp_cfg_parse_size("16MB", &v), 0);
    UNIT_EQ(v, 16 << 20);
    UNIT_CHECK(amp_cfg_parse_size("abc", &v) != 0);
    UNIT_CHECK(amp_cfg_parse_size("4Q", &v) != 0);
    UNIT_CHECK(amp_cfg_parse_size("-1", &v) != 0);

    /* default < environment < hint < AMPIO_HINTS */
    unsetenv("AMPIO_HINTS");
    setenv("AMPIO_CONFIG", "/nonexistent/ampio.conf", 1);
    amp_cfg_t cfg;
    UNIT_EQ(amp_cfg_load(&cfg, MPI_INFO_NULL), MPI_SUCCESS);
    UNIT_EQ(amp_cfg_num(&cfg, AMP_CFG_CB_BUFFER_SIZE), 0); /* the cycle buffer follows from k */
    UNIT_EQ(cfg.src[AMP_CFG_CB_BUFFER_SIZE], AMP_CFG_SRC_DEFAULT);
    UNIT_EQ(amp_cfg_num(&cfg, AMP_CFG_ROMIO_DS_WRITE), AMP_CFG_AUTOMATIC);
    amp_cfg_free(&cfg);

    setenv("AMPIO_CB_BUFFER_SIZE", "8M", 1);
    setenv("AMPIO_FCOLL", "individual", 1);
    UNIT_EQ(amp_cfg_load(&cfg, MPI_INFO_NULL), MPI_SUCCESS);
    UNIT_EQ(amp_cfg_num(&cfg, AMP_CFG_CB_BUFFER_SIZE), 8 << 20);
    UNIT_EQ(cfg.src[AMP_CFG_CB_BUFFER_SIZE], AMP_CFG_SRC_ENV);
    UNIT_CHECK(strcmp(amp_cfg_word(&cfg, AMP_CFG_AMPIO_FCOLL), "individual") == 0);
    amp_cfg_free(&cfg);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "1048576");
    MPI_Info_set(info, "romio_ds_write", "disable");
    MPI_Info_set(info, "some_other_library_hint", "whatever");
    UNIT_EQ(amp_cfg_load(&cfg, info), MPI_SUCCESS);
    UNIT_EQ(amp_cfg_num(&cfg, AMP_CFG_CB_BUFFER_SIZE), 1 << 20);
    UNIT_EQ(cfg.src[AMP_CFG_CB_BUFFER_SIZE], AMP_CFG_SRC_HINT);
    UNIT_EQ(amp_cfg_num(&cfg, AMP_CFG_ROMIO_DS_WRITE), AMP_CFG_DISABLE);
    amp_cfg_free(&cfg);

    setenv("AMPIO_HINTS", "cb_buffer_size=2M; romio_ds_write=enable", 1);
    UNIT_EQ(amp_cfg_load(&cfg, info), MPI_SUCCESS);
    UNIT_EQ(amp_cfg_num(&cfg, AMP_CFG_CB_BUFFER_SIZE), 2 << 20);
    UNIT_EQ(cfg.src[AMP_CFG_CB_BUFFER_SIZE], AMP_CFG_SRC_OVERRIDE);
    UNIT_EQ(amp_cfg_num(&cfg, AMP_CFG_ROMIO_DS_WRITE), AMP_CFG_ENABLE);
    /* the collective hash follows the parsed value, not its spelling */
    uint64_t h = amp_cfg_coll_hash(&cfg);
    amp_cfg_free(&cfg);
    setenv("AMPIO_HINTS", "cb_buffer_size=2097152; romio_ds_write=enable", 1);
    UNIT_EQ(amp_cfg_load(&cfg, info), MPI_SUCCESS);
    UNIT_CHECK(amp_cfg_coll_hash(&cfg) == h);
    amp_cfg_free(&cfg);

    /* bad values are errors of class MPI_ERR_INFO */
    int cls = 0;
    setenv("AMPIO_HINTS", "cb_buffer_size=lots", 1);
    int rc = amp_cfg_load(&cfg, MPI_INFO_NULL);
    MPI_Error_class(rc, &cls);
    UNIT_EQ(cls, MPI_ERR_INFO);
    setenv("AMPIO_HINTS", "no_such_parameter=1", 1);
    rc = amp_cfg_load(&cfg, MPI_INFO_NULL);
    MPI_Error_class(rc, &cls);
    UNIT_EQ(cls, MPI_ERR_INFO);
    unsetenv("AMPIO_HINTS");
    MPI_Info_set(info, "ampio_fcoll", "sometimes");
    rc = amp_cfg_load(&cfg, info);
    MPI_Error_class(rc, &cls);
    UNIT_EQ(cls, MPI_ERR_INFO);
    MPI_Info_free(&info);

    /* a value ampio cannot use of a hint that is not ampio's own: ignored or clamped, noted */
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_read", "sometimes");
    MPI_Info_set(info, "ind_wr_buffer_size", "8");
    MPI_Info_set(info, "cb_buffer_size", "100");
    UNIT_EQ(amp_cfg_load(&cfg, info), MPI_SUCCESS);
    UNIT_EQ(amp_cfg_num(&cfg, AMP_CFG_ROMIO_DS_READ), AMP_CFG_AUTOMATIC);
    UNIT_EQ(amp_cfg_num(&cfg, AMP_CFG_IND_WR_BUFFER_SIZE), 8);
    UNIT_EQ(amp_cfg_num(&cfg, AMP_CFG_CB_BUFFER_SIZE), 4096);
    UNIT_CHECK(strstr(cfg.notes, "romio_ds_read=sometimes ignored") != NULL);
    UNIT_CHECK(strstr(cfg.notes, "cb_buffer_size=100 is out of ampio's range") != NULL);
    UNIT_CHECK(strstr(cfg.notes, "ind_wr_buffer_size") == NULL);
    amp_cfg_free(&cfg);
    MPI_Info_free(&info);

    rc = unit_report("test_cfg");
    MPI_Finalize();
    return rc;
}
