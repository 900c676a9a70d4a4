/* The one table of ampio parameters. Each is an MPI_Info hint of this name, an environment
 * variable AMPIO_<NAME IN UPPER CASE> and a key in the config file.
 *
 * X(id, name, type, default, min, max, choices, scope, doc)
 *   type   : BOOL, INT, SIZE (accepts units: 4M, 1GiB), ENUM, STRING
 *   choices: for ENUM, the accepted words separated by commas; the value is the word's index
 *   scope: COLL (must be identical on every rank of the file's communicator) or LOCAL */
#ifndef AMP_CFG_TABLE_H
#define AMP_CFG_TABLE_H

#define AMP_CFG_PARAMS(X)                                                                          \
    X(CB_BUFFER_SIZE, "cb_buffer_size", SIZE, "0", 4096, 1LL << 40, NULL, COLL,                    \
      "cycle buffer of each aggregator, in bytes (0: k rounded up to whole stripe units; "         \
      "pipelined: rounds of one stripe of it)")                                                    \
    X(CB_NODES, "cb_nodes", INT, "0", 0, 1 << 30, NULL, COLL,                                      \
      "number of aggregators for collective access (0: chosen per call)")                          \
    X(CB_CONFIG_LIST, "cb_config_list", STRING, "", 0, 0, NULL, COLL,                              \
      "aggregator placement, e.g. \"*:2\" for two per node (empty: chosen per call)")              \
    X(ROMIO_CB_READ, "romio_cb_read", ENUM, "automatic", 0, 0, "automatic,enable,disable", COLL,   \
      "collective buffering for reads")                                                            \
    X(ROMIO_CB_WRITE, "romio_cb_write", ENUM, "automatic", 0, 0, "automatic,enable,disable", COLL, \
      "collective buffering for writes")                                                           \
    X(COLLECTIVE_BUFFERING, "collective_buffering", BOOL, "true", 0, 0, NULL, COLL,                \
      "false turns collective buffering off: every process accesses its own data")                 \
    X(ROMIO_DS_READ, "romio_ds_read", ENUM, "automatic", 0, 0, "automatic,enable,disable", COLL,   \
      "data sieving for independent noncontiguous reads")                                          \
    X(ROMIO_DS_WRITE, "romio_ds_write", ENUM, "automatic", 0, 0, "automatic,enable,disable", COLL, \
      "data sieving for independent noncontiguous writes")                                         \
    X(IND_RD_BUFFER_SIZE, "ind_rd_buffer_size", SIZE, "4M", 1, 1LL << 40, NULL, LOCAL,             \
      "data sieving buffer for independent reads, in bytes (pieces further apart go alone)")       \
    X(IND_WR_BUFFER_SIZE, "ind_wr_buffer_size", SIZE, "512K", 1, 1LL << 40, NULL, LOCAL,           \
      "data sieving buffer for independent writes, in bytes (pieces further apart go alone)")      \
    X(ROMIO_NO_INDEP_RW, "romio_no_indep_rw", BOOL, "false", 0, 0, NULL, LOCAL,                    \
      "the application promises no independent access (ROMIO's deferred open); kept and reported") \
    X(STRIPING_FACTOR, "striping_factor", INT, "0", 0, 1 << 20, NULL, COLL,                        \
      "number of storage targets a new file is striped over (0: file system default)")             \
    X(STRIPING_UNIT, "striping_unit", SIZE, "0", 0, 1LL << 40, NULL, COLL,                         \
      "stripe size of a new file, in bytes (0: file system default)")                              \
    X(START_IODEVICE, "start_iodevice", INT, "-1", -1, 65534, NULL, COLL,                          \
      "first storage target of a new striped file (Lustre; -1: the file system chooses)")          \
    X(AMPIO_OBJECT_SIZE, "ampio_object_size", SIZE, "0", 0, 1LL << 40, NULL, COLL,                 \
      "object size of a new CephFS file (0: the file system's, made a multiple of the unit)")      \
    X(FILE_PERM, "file_perm", INT, "0666", 0, 07777, NULL, COLL,                                   \
      "permission bits of a file created by MPI_File_open (octal; the umask applies)")             \
    X(AMPIO_FCOLL, "ampio_fcoll", ENUM, "auto", 0, 0,                                              \
      "auto,individual,two_phase,dynamic_seg,static_seg,stripe", COLL,                             \
      "collective algorithm (stripe: stripe-contiguous file domains)")                             \
    X(ROMIO_LUSTRE_CO_RATIO, "romio_lustre_co_ratio", INT, "1", 1, 1 << 16, NULL, COLL,            \
      "most aggregators per storage target in stripe-contiguous file domains (client/OST ratio)")  \
    X(BIG_REQ_SIZE, "big_req_size", SIZE, "0", 0, 1LL << 40, NULL, COLL,                           \
      "contiguous requests this large on average skip aggregation (0: never)")                     \
    X(DS_IN_COLL, "ds_in_coll", BOOL, "false", 0, 0, NULL, COLL,                                   \
      "collective writes fill the holes of a stripe by read-modify-write, under a lock")           \
    X(SAME_IO_SIZE, "same_io_size", BOOL, "false", 0, 0, NULL, COLL,                               \
      "accepted for ROMIO's Lustre driver; no effect: each call's description shows the sizes")    \
    X(CONTIGUOUS_DATA, "contiguous_data", ENUM, "automatic", 0, 0, "automatic,enable,disable",     \
      COLL, "aggregators compute the runs of contiguous members instead of receiving them")        \
    X(AMPIO_NUM_AGGREGATORS, "ampio_num_aggregators", INT, "0", 0, 1 << 30, NULL, COLL,            \
      "number of aggregators (0: chosen per call); same as cb_nodes")                              \
    X(AMPIO_SATURATION_K, "ampio_saturation_k", SIZE, "4M", 4096, 1LL << 40, NULL, COLL,           \
      "bytes one process must write to saturate its path to storage (ampio-calibrate measures)")   \
    X(AMPIO_TOPOLOGY, "ampio_topology", STRING, "", 0, 0, NULL, COLL,                              \
      "process grid of the application, e.g. \"4x4\" or \"2x2x4\", for grouping aggregators")      \
    X(AMPIO_SHAREDFP, "ampio_sharedfp", ENUM, "auto", 0, 0,                                        \
      "auto,shm,rma,lockedfile,addproc,individual,single", COLL, "shared file pointer method")     \
    X(AMPIO_SHAREDFP_ADDPROC, "ampio_sharedfp_addproc", ENUM, "auto", 0, 0, "auto,spawn,thread",   \
      COLL, "keeper of the addproc pointer: a spawned process, a thread in rank 0, or auto")       \
    X(AMPIO_RANKS_PER_NODE, "ampio_ranks_per_node", INT, "0", 0, 1 << 30, NULL, COLL,              \
      "ranks per node for aggregator placement (0: detect; set it to emulate several nodes)")      \
    X(AMPIO_STATS, "ampio_stats", STRING, "", 0, 0, NULL, COLL,                                    \
      "\"1\" prints per-file statistics at close; a path writes them as JSON")                     \
    X(AMPIO_EXPLAIN, "ampio_explain", BOOL, "false", 0, 0, NULL, LOCAL,                            \
      "print the plan of every collective call on rank 0")                                         \
    X(AMPIO_PIPELINE, "ampio_pipeline", BOOL, "true", 0, 0, NULL, COLL,                            \
      "overlap the file access of one collective round with the messages of the next")             \
    X(AMPIO_PROGRESS_THREAD, "ampio_progress_thread", BOOL, "true", 0, 0, NULL, LOCAL,             \
      "under MPI_THREAD_MULTIPLE a thread of ampio's own advances nonblocking accesses while "     \
      "the application computes (started by the first such access of a file that allows it)")      \
    X(AMPIO_WRITE_CHUNK, "ampio_write_chunk", SIZE, "0", 0, 1LL << 40, NULL, LOCAL,                \
      "largest write system call (0: 256K on a node with more of the file's ranks than cores, "    \
      "else none)")                                                                                \
    X(AMPIO_SHARED_CORES, "ampio_shared_cores", ENUM, "automatic", 0, 0,                           \
      "automatic,enable,disable", COLL,                                                            \
      "waits of ampio's collective steps test and nap instead of blocking in MPI (automatic: "     \
      "where some node runs more of the file's ranks than it has cores)")                          \
    X(AMPIO_TRACE, "ampio_trace", STRING, "", 0, 0, NULL, LOCAL,                                   \
      "path prefix: each rank logs its file system calls to <prefix>.<rank> (for testing)")

#endif
