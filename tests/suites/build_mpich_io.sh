#!/usr/bin/env bash
# build_mpich_io.sh FAMILY OUTDIR: builds MPICH's test/mpi/io and test/mpi/errors/io (Debian's
# source package mpich, fetched by fetch.sh into build/suites/src) with mpicc.FAMILY into
# OUTDIR, without MPICH's configure: the tests need test/mpi/util's mtest library and an
# mpitestconf.h, written here with the few defines they use. Rebuilds only what is out of
# date. Exit 77: no sources.
set -euo pipefail
family=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/build_common.sh"
src=$(suites_fetch mpich)/test/mpi
mkdir -p "$out/obj"
suites_write "$out/obj/mpitestconf.h" <<'EOF'
/* The defines of MPICH's test/mpi configure that util/mtest*.c and the io tests use. */
#define HAVE_STDARG_H 1
#define HAVE_STRING_H 1
#define HAVE_UNISTD_H 1
#define HAVE_MEMORY_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_MPI_INIT_THREAD 1
#define HAVE_MPI_WIN_CREATE 1
/* single-threaded tests: libmtest_single */
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_NONE
EOF
cflags=(-O1 -g -w "-I$out/obj" "-I$src/include")
for u in mtest mtest_common mtest_single; do
    suites_cc "$family" "$out/obj/$u.o" "$src/util/$u.c" "$out/obj/mpitestconf.h" -- -c "${cflags[@]}"
done
mtest=("$out/obj/mtest.o" "$out/obj/mtest_common.o" "$out/obj/mtest_single.o")
for t in $(suites_programs "$here/mpich_io.list"); do
    c=$src/io/$t.c
    [ -f "$c" ] || c=$src/errors/io/$t.c
    suites_cc "$family" "$out/$t" "$c" "${mtest[@]}" -- "${cflags[@]}" "${mtest[@]}" -lm &
    suites_throttle
done
wait
suites_check
