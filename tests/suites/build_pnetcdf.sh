#!/usr/bin/env bash
# build_pnetcdf.sh FAMILY OUTDIR: builds PnetCDF 1.12.3's C tests (test/ of Debian's source
# package pnetcdf, fetched by fetch.sh into build/suites/src) with mpicc.FAMILY into OUTDIR,
# against the installed libpnetcdf (libpnetcdf-dev), without PnetCDF's configure or library
# build. Debian builds PnetCDF for one MPI family only: for any other family this exits 77.
# A program of the list is DIR/NAME: test/DIR/NAME.c, or NAME.m4 expanded by m4 as PnetCDF's
# Makefiles do; nc_test/nc_test is nc_test's several sources. The tests' config.h is written
# here with the values of the installed library (pnetcdf.h: PNETCDF_RELAX_COORD_BOUND 1, no
# NetCDF-4, burst buffer, subfiling or thread safety). The data files the cdf_format tests read
# are copied to OUTDIR/cdf_format. Rebuilds only what is out of date. Exit 77: no sources.
set -euo pipefail
family=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/build_common.sh"
lib=$(gcc -print-file-name=libpnetcdf.so)
pnc_family=none
if [ -f /usr/include/pnetcdf.h ] && deps=$(ldd "$lib" 2>/dev/null); then
    case $deps in
    *libmpich*) pnc_family=mpich ;;
    *libmpi.so*) pnc_family=openmpi ;;
    esac
fi
if [ "$pnc_family" != "$family" ]; then
    echo "build: the installed PnetCDF ($lib) is built for $pnc_family, not $family:" \
        "its tests run on $pnc_family only" >&2
    exit 77
fi
src=$(suites_fetch pnetcdf)
mkdir -p "$out/obj" "$out/cdf_format"
cp "$src"/test/cdf_format/*.nc* "$out/cdf_format/"
suites_write "$out/obj/config.h" <<'EOH'
/* What PnetCDF's configure writes into config.h for the tests, with the values of the
 * installed library (pnetcdf.h) and of glibc. */
#define RELAX_COORD_BOUND 1
#define HAVE_DECL_MPI_OFFSET 1
#define HAVE_STRDUP 1
#define HAVE_STRCASECMP 1
#define HAVE_SYS_TYPES_H 1
#include <sys/types.h>
/* src/include/nctypes.h, which config.h includes at its end */
typedef signed char schar;
typedef unsigned char uchar;
typedef long long longlong;
typedef unsigned long long ulonglong;
typedef long long int64;
typedef unsigned long long uint64;
EOH
m4flags=(-DPNETCDF -I"$src/m4")
# m4 SRC OUT: OUT expanded from SRC, unless up to date
expand() {
    if [ ! "$2" -nt "$1" ]; then
        mkdir -p "$(dirname "$2")"
        m4 "${m4flags[@]}" "$1" >"$2.tmp" && mv "$2.tmp" "$2"
    fi
}
cflags=(-O0 -w -DHAVE_CONFIG_H -I"$out/obj" -I"$src/test/common")
link=(-lpnetcdf -lm)
suites_cc "$family" "$out/obj/testutils.o" "$src/test/common/testutils.c" "$out/obj/config.h" -- \
    -c "${cflags[@]}"
# nc_test: nc_test.c, error.c, util.c and six sources from m4, with tests.h from m4
nct=$out/obj/nc_test
expand "$src/test/nc_test/tests.h.m4" "$nct/tests.h"
nc_objs=()
for m in test_get test_put test_iget test_iput test_read test_write; do
    expand "$src/test/nc_test/$m.m4" "$nct/$m.c"
done
for c in "$src"/test/nc_test/{nc_test,error,util}.c "$nct"/test_{get,put,iget,iput,read,write}.c; do
    o=$nct/$(basename "$c" .c).o
    suites_cc "$family" "$o" "$c" "$nct/tests.h" "$out/obj/config.h" -- -c "${cflags[@]}" \
        -I"$nct" -I"$src/test/nc_test" &
    suites_throttle
    nc_objs+=("$o")
done
suites_check
for p in $(suites_programs "$here/pnetcdf.list"); do
    dir=${p%/*} name=${p##*/}
    mkdir -p "$out/$dir"
    if [ "$p" = nc_test/nc_test ]; then
        suites_cc "$family" "$out/$p" "${nc_objs[0]}" "${nc_objs[@]}" "$out/obj/testutils.o" -- \
            "${nc_objs[@]:1}" "$out/obj/testutils.o" "${link[@]}" &
        suites_throttle
        continue
    fi
    c=$src/test/$p.c
    if [ -f "$src/test/$p.m4" ]; then
        c=$out/obj/$p.c
        expand "$src/test/$p.m4" "$c"
    fi
    suites_cc "$family" "$out/$p" "$c" "$out/obj/config.h" "$out/obj/testutils.o" -- \
        "${cflags[@]}" -I"$src/test/$dir" "$out/obj/testutils.o" "${link[@]}" &
    suites_throttle
done
suites_check
