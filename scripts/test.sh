#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs every test on both MPI families.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --tests --cluster
status=0
for family in openmpi mpich; do
    echo "=== tests on $family ==="
    # MPICH busy-polls: oversubscribed MPICH ranks run one test at a time
    jobs=2
    [ "$family" = mpich ] && jobs=1
    ctest --test-dir "build/$family" --output-on-failure -j "$jobs" "$@" || status=1
done
exit $status
