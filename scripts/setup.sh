#!/usr/bin/env bash
# Installs what ampio needs on Debian 12 (only what is missing) and builds ampio for both MPI
# families: build/openmpi and build/mpich. Safe to run again.
#
#   setup.sh [--tests | --demo] [--cluster]
#
# --tests also builds mpi4py against each family (its I/O tests run on ampio; a few minutes the
# first time); --demo installs and builds only what scripts/demo.sh runs (the library, its tools
# and the benchmark: no test programs, no HDF5, PnetCDF or Fortran); --cluster also installs
# the Ceph packages of the emulated cluster (scripts/cluster.sh). With --cluster alone nothing
# is built.
set -euo pipefail
cd "$(dirname "$0")/.."

tests=0 cluster=0 build=1 demo=0
for arg in "$@"; do
    case $arg in
    --tests) tests=1 ;;
    --demo) demo=1 ;;
    --cluster) cluster=1 ;;
    *)
        echo "setup: unknown option $arg (--tests, --demo, --cluster)" >&2
        exit 2
        ;;
    esac
done
[ $# -eq 1 ] && [ $cluster -eq 1 ] && build=0
if [ $tests -eq 1 ] && [ $demo -eq 1 ]; then
    echo "setup: --tests or --demo, not both" >&2
    exit 2
fi

install_missing() {
    local missing="" p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
    done
    [ -n "$missing" ] || return 0
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    echo "setup: installing$missing"
    $sudo apt-get -o DPkg::Lock::Timeout=900 update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
        --no-install-recommends $missing
}

if [ $cluster -eq 1 ] && [ "$(id -u)" -ne 0 ]; then
    echo "setup: NOTE: the emulated cluster needs root; its packages are not installed"
elif [ $cluster -eq 1 ]; then
    # the emulated cluster's file system and the tools it uses (namespaces, traffic control)
    install_missing ceph-mon ceph-mgr ceph-osd ceph-mds ceph-fuse iproute2 util-linux
fi
[ $build -eq 1 ] || exit 0

# the MPI families, and the clients the tests run on ampio (HDF5, PnetCDF, Fortran)
install_missing build-essential cmake pkg-config libopenmpi-dev openmpi-bin libmpich-dev mpich \
    python3 python3-venv
[ $demo -eq 1 ] || install_missing gfortran libhdf5-openmpi-dev libhdf5-mpich-dev hdf5-tools \
    libpnetcdf-dev pnetcdf-bin
# the sanitizer and fuzzer builds (tests/sanitize/check.sh): clang with libFuzzer and the
# sanitizer runtimes, valgrind
if [ $tests -eq 1 ]; then
    install_missing clang-14 libclang-rt-14-dev valgrind
fi

for family in openmpi mpich; do
    cmake -S . -B "build/$family" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DMPI_C_COMPILER="mpicc.$family" -DMPIEXEC_EXECUTABLE="/usr/bin/mpiexec.$family" \
        -DCMAKE_INSTALL_PREFIX="$PWD/install/$family" -DAMPIO_WERROR=ON >/dev/null
    if [ $demo -eq 1 ]; then
        # the library, ampiorun's companions and the benchmark's program
        cmake --build "build/$family" -j "$(nproc)" --target ampio ampio-info ampio-calibrate \
            ampio-sfp-server ampio-bench-io
    else
        cmake --build "build/$family" -j "$(nproc)"
    fi
done

# mpi4py built against each family (the tests run its own I/O test module on ampio), and that
# module from the same source distribution. Without network this is skipped with a note, and
# the mpi4py tests report SKIP.
[ $tests -eq 1 ] || exit 0
mpi4py_version=4.1.2
if [ ! -f build/mpi4py-src/test/test_io.py ]; then
    rm -rf build/mpi4py-dl && mkdir -p build/mpi4py-dl
    if python3 -m pip download -q --no-binary :all: --no-deps "mpi4py==$mpi4py_version" \
        -d build/mpi4py-dl; then
        rm -rf build/mpi4py-src && mkdir -p build/mpi4py-src
        tar -xzf build/mpi4py-dl/mpi4py-*.tar.gz -C build/mpi4py-src --strip-components=1
    else
        echo "setup: NOTE: could not download mpi4py's sources; its tests will be skipped"
    fi
fi
for family in openmpi mpich; do
    venv="build/venv-$family"
    if ! "$venv/bin/python" -c "import mpi4py" 2>/dev/null; then
        echo "setup: building mpi4py $mpi4py_version against $family (a few minutes)"
        python3 -m venv "$venv"
        # The build tools as wheels, then mpi4py without build isolation (an isolated build
        # compiles Cython from source first) and unoptimised (-O3 on its generated C takes
        # minutes; the tests exercise I/O, not mpi4py's speed): about a minute per family.
        # No cache: a wheel built against one family must not be reused for the other.
        if "$venv/bin/pip" install -q "setuptools>=42" "cython>=3.0" wheel &&
            CFLAGS="-O0 -g0" MPICC="mpicc.$family" "$venv/bin/pip" install -q --no-cache-dir \
                --no-build-isolation --no-binary mpi4py "mpi4py==$mpi4py_version"; then
            :
        else
            echo "setup: NOTE: mpi4py could not be built for $family; its tests will be skipped"
        fi
    fi
done
