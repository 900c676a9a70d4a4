#!/usr/bin/env bash
# Installs what ampio needs on Debian 12 (only what is missing) and builds ampio for both MPI
# families: build/openmpi and build/mpich. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# the MPI families, and the clients the tests run on ampio (HDF5, PnetCDF, Fortran)
packages="build-essential cmake pkg-config libopenmpi-dev openmpi-bin libmpich-dev mpich \
python3 python3-venv gfortran libhdf5-openmpi-dev libhdf5-mpich-dev hdf5-tools libpnetcdf-dev \
pnetcdf-bin"
missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    echo "setup: installing$missing"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
fi

for family in openmpi mpich; do
    cmake -S . -B "build/$family" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DMPI_C_COMPILER="mpicc.$family" -DMPIEXEC_EXECUTABLE="/usr/bin/mpiexec.$family" \
        -DCMAKE_INSTALL_PREFIX="$PWD/install/$family" -DAMPIO_WERROR=ON >/dev/null
    cmake --build "build/$family" -j "$(nproc)"
done
