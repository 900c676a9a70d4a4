#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs every test on both MPI families. The tests of the label
# "cluster" run on the emulated cluster (scripts/cluster.sh) where this machine can run it
# (root, namespaces, FUSE, the Ceph packages); elsewhere they are skipped, and said so.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --tests --cluster
cluster_note=""
if why=$(bash scripts/cluster.sh can 2>&1); then
    export AMPIO_TEST_CLUSTER=1
    echo "=== the cluster tests (label cluster) run: this machine can run the emulated cluster ==="
else
    cluster_note="the cluster tests (label cluster) were SKIPPED: $why"
    echo "=== $cluster_note ==="
fi
status=0
for family in openmpi mpich; do
    echo "=== tests on $family ==="
    # MPICH busy-polls: oversubscribed MPICH ranks run one test at a time
    jobs=2
    [ "$family" = mpich ] && jobs=1
    ctest --test-dir "build/$family" --output-on-failure -j "$jobs" "$@" || status=1
done
# AddressSanitizer and UndefinedBehaviorSanitizer builds, the fuzzers (docs/TESTING.md)
if [ $# -eq 0 ]; then
    bash tests/sanitize/check.sh || status=1
    # valgrind memcheck on a subset of the MPI tests (docs/TESTING.md)
    for family in openmpi mpich; do
        bash tests/sanitize/valgrind.sh "build/$family" || status=1
    done
fi
if [ -n "$cluster_note" ]; then echo "test: NOTE: $cluster_note"; fi
exit $status
