#!/usr/bin/env bash
# build_hdf5.sh FAMILY OUTDIR: builds HDF5 1.10.8's parallel tests (testpar of Debian's source
# package hdf5, fetched by fetch.sh into build/suites/src) with mpicc.FAMILY into OUTDIR,
# against the HDF5 installed for FAMILY (libhdf5-FAMILY-dev: /usr/include/hdf5/FAMILY), without
# HDF5's configure or library build. The tests include HDF5's private headers (src/), which
# need nothing generated but H5pubconf.h, installed with the library; the test library is
# test/h5test.c and test/testframe.c, and h5test.c wants H5srcdir_str.h (the source directory),
# written here. Rebuilds only what is out of date. Exit 77: no sources, or no HDF5 for FAMILY.
set -euo pipefail
family=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/build_common.sh"
arch=$(gcc -print-multiarch)
inc=/usr/include/hdf5/$family
lib=/usr/lib/$arch/hdf5/$family
if [ ! -f "$inc/H5pubconf.h" ] || ! grep -q "define H5_HAVE_PARALLEL 1" "$inc/H5pubconf.h" ||
    [ ! -e "$lib/libhdf5.so" ]; then
    echo "build: no parallel HDF5 for $family ($inc, $lib: libhdf5-$family-dev)" >&2
    exit 77
fi
src=$(suites_fetch hdf5)
mkdir -p "$out/obj"
sed "s|@srcdir@|$src/test|" "$src/test/H5srcdir_str.h.in" | suites_write "$out/obj/H5srcdir_str.h"
# the installed public headers first (they hold this build's configuration), then the sources'
# private ones
cflags=(-O0 -w -I"$out/obj" -I"$inc" -I"$src/src" -I"$src/test" -I"$src/testpar")
objs=()
for c in test/h5test.c test/testframe.c testpar/testphdf5.c testpar/t_dset.c testpar/t_file.c \
    testpar/t_file_image.c testpar/t_mdset.c testpar/t_ph5basic.c testpar/t_coll_chunk.c \
    testpar/t_span_tree.c testpar/t_chunk_alloc.c testpar/t_filter_read.c testpar/t_prop.c \
    testpar/t_coll_md_read.c; do
    o=$out/obj/$(basename "$c" .c).o
    suites_cc "$family" "$o" "$src/$c" "$out/obj/H5srcdir_str.h" -- -c "${cflags[@]}" &
    suites_throttle
    objs+=("$o")
done
suites_check
h5test=("$out/obj/h5test.o" "$out/obj/testframe.o")
link=(-L"$lib" -Wl,-rpath,"$lib" -lhdf5 -lm)
for t in $(suites_programs "$here/hdf5.list"); do
    if [ "$t" = testphdf5 ]; then
        # one program of twelve sources (testpar/Makefile.am), compiled above
        suites_cc "$family" "$out/$t" "$out/obj/testphdf5.o" "${objs[@]}" -- \
            "${objs[@]:3}" "${h5test[@]}" "${link[@]}" &
    else
        suites_cc "$family" "$out/$t" "$src/testpar/$t.c" "${h5test[@]}" -- "${cflags[@]}" \
            "${h5test[@]}" "${link[@]}" &
    fi
    suites_throttle
done
suites_check
