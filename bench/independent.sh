#!/usr/bin/env bash
# independent.sh FAMILY [NP] [DIR] [ROUNDS]: independent write/read bandwidth (MB/s) and the
# cost of an open and a close (us) of ampio and of every native MPI-IO of FAMILY, interleaved
# round by round (page-cache timings are noisy:
# compare the medians).
set -euo pipefail
cd "$(dirname "$0")/.."
family=${1:-openmpi} np=${2:-4} dir=${3:-/tmp} rounds=${4:-3}
build=build/$family
. "$build/tests/env.sh"
prog=$build/bench/ampio-bench-independent
for round in $(seq "$rounds"); do
    "$AMPIO_TEST_AMPIORUN" -n "$np" "$prog" "$dir" ampio 1
    if [ "$family" = openmpi ]; then
        "$AMPIO_TEST_MPIEXEC" -n "$np" "$prog" "$dir" ompio 1
        "$AMPIO_TEST_MPIEXEC" --mca io romio321 -n "$np" "$prog" "$dir" romio 1
    else
        "$AMPIO_TEST_MPIEXEC" -n "$np" "$prog" "$dir" romio 1
    fi
done | sort -k1,1 -k2,2 -k3,3 -k5,5n | awk '{key=$1" "$2" "$3" "$4" "$6":"; v[key]=v[key]" "$5} END {for (k in v) print k v[k]}' | sort
