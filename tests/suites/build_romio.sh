#!/usr/bin/env bash
# build_romio.sh FAMILY OUTDIR: builds ROMIO's C tests (src/mpi/romio/test of Debian's source
# package mpich, fetched by fetch.sh into build/suites/src) with mpicc.FAMILY into OUTDIR,
# without ROMIO's configure: each test is one C file; misc.c.in needs its @LL@ (the printf
# length of MPI_Offset) substituted. Copies test_hintfile (syshints' ROMIO_HINTS file) to
# OUTDIR. Rebuilds only what is out of date. Exit 77: no sources. Some tests build structs
# with MPI_LB and MPI_UB, which Open MPI 4.1 still has but does not declare (mpi1_compat.h).
set -euo pipefail
family=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/build_common.sh"
src=$(suites_fetch mpich)/src/mpi/romio/test
mkdir -p "$out/obj"
sed 's/@LL@/lld/g' "$src/misc.c.in" | suites_write "$out/obj/misc.c"
cp "$src/test_hintfile" "$out/test_hintfile"
suites_write "$out/obj/mpi1_compat.h" <<'EOH'
/* MPI_LB and MPI_UB: Open MPI 4.1 exports them, but declares them (and the other removed MPI-1
 * names) only when built with --enable-mpi1-compatibility, which Debian's is not. */
#include <mpi.h>
#if defined(OPEN_MPI) && !OMPI_ENABLE_MPI1_COMPAT
#undef MPI_LB
#undef MPI_UB
OMPI_DECLSPEC extern struct ompi_predefined_datatype_t ompi_mpi_lb;
OMPI_DECLSPEC extern struct ompi_predefined_datatype_t ompi_mpi_ub;
#define MPI_LB OMPI_PREDEFINED_GLOBAL(MPI_Datatype, ompi_mpi_lb)
#define MPI_UB OMPI_PREDEFINED_GLOBAL(MPI_Datatype, ompi_mpi_ub)
#endif
EOH
for t in $(suites_programs "$here/romio.list"); do
    c=$src/$t.c
    [ -f "$c" ] || c=$out/obj/$t.c
    suites_cc "$family" "$out/$t" "$c" "$out/obj/mpi1_compat.h" -- -O1 -g -w \
        -DOMPI_OMIT_MPI1_COMPAT_DECLS=0 -include "$out/obj/mpi1_compat.h" -lm &
    suites_throttle
done
suites_check
