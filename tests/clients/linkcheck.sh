#!/usr/bin/env bash
# linkcheck.sh ENV BUILD_TREE LINKCHECK_SOURCE MPICC NP
#
# ampio linked into a program instead of preloaded, both ways a user would do it: installs the
# build tree into a fresh prefix, builds LINKCHECK_SOURCE (find_package(ampio), ampio::ampio)
# against it, and compiles the same app.c with `MPICC $(pkg-config --cflags --libs ampio)`.
# Each program runs with the plain mpiexec (no LD_PRELOAD) and must find ampio doing its I/O.
set -u
. "$1"
tree=$2
src=$3
mpicc=$4
np=$5
work=$(mktemp -d "${AMPIO_TEST_TMP:-${TMPDIR:-/tmp}}/ampio-link.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() {
    echo "linkcheck.sh: $*" >&2
    exit 1
}

cmake --install "$tree" --prefix "$prefix" >"$work/install.log" || fail "cmake --install failed"
[ -r "$prefix/include/ampio.h" ] || fail "no include/ampio.h in the installed tree"
pcdir=$(dirname "$(find "$prefix" -name ampio.pc | head -1)")
[ -d "$pcdir" ] || fail "no ampio.pc installed"

check_binary() {
    local app=$1 how=$2
    # ampio must come before the MPI library, and resolve into the new prefix
    local needed
    needed=$(readelf -d "$app" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
    case "$needed" in
    *libampio.so*libmpi*) ;;
    *) fail "$how: the program does not link libampio before the MPI library: $needed" ;;
    esac
    ldd "$app" | grep -q "libampio.so.* => $prefix/" ||
        fail "$how: libampio does not resolve into $prefix: $(ldd "$app" | grep ampio)"
    local out
    out=$(env -u LD_PRELOAD timeout -k 10 60 "$AMPIO_TEST_MPIEXEC" -n "$np" "$app" \
        "$work/$how.dat") || fail "$how: the program failed: $out"
    echo "$out"
    echo "$out" | grep -q "^ampio .* did the I/O" || fail "$how: no report from the program"
}

# 1. CMake package
cmake -S "$src" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DMPI_C_COMPILER="$mpicc" \
    -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" 2>&1 ||
    fail "configuring against the installed package failed: $(cat "$work/configure.log")"
cmake --build "$work/build" >"$work/build.log" 2>&1 ||
    fail "building against the installed package failed: $(cat "$work/build.log")"
check_binary "$work/build/app" cmake

# 2. pkg-config
export PKG_CONFIG_PATH=$pcdir
flags=$(pkg-config --cflags --libs ampio) || fail "pkg-config does not know ampio"
case "$flags" in
*"-L$prefix/"*) ;;
*) fail "ampio.pc installed into $prefix points elsewhere: $flags" ;;
esac
# shellcheck disable=SC2086 # the flags are words
"$mpicc" -o "$work/app_pc" "$src/app.c" $flags || fail "compiling with pkg-config flags failed"
check_binary "$work/app_pc" pkgconfig
