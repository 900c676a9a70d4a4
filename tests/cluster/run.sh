#!/usr/bin/env bash
# run.sh ENV CLUSTER_SH NODES NP MODE PROGRAM [ARGS...]
#
# A test program on the emulated cluster (scripts/cluster.sh, brought up by the test fixture):
# NP ranks in blocks over the first NODES compute nodes, its output directory on the CephFS.
# MODE diff: run natively and under ampio, then compare every file byte for byte (files the
# program recorded as native defects are judged by its model alone), as tests/run/diff.sh does
# on one node; MODE ampio: under ampio only. Exit 77 (skipped) when the machine cannot run the
# cluster.
#
# Every run is bounded by a time limit (AMPIO_TEST_TIMEOUT, 300 s); see lib.sh for MPICH.
set -u
. "$1"
cluster=$2 nodes=$3 np=$4 mode=$5 prog=$6
shift 6
name=$(basename "$prog")
. "$(dirname "$0")/lib.sh"
cluster_ready
mnt=${AMPIO_CLUSTER_MNT:-/mnt/ampio-cephfs}
work=$mnt/ampio-test.$name.$$
limit=${AMPIO_TEST_TIMEOUT:-300}
on_c1() { bash "$cluster" exec c1 "$@"; }
on_c1 mkdir -p "$work/native" "$work/ampio" || exit 1

log=$(mktemp)
trap 'rm -f "$log"; on_c1 rm -rf "$work"' EXIT
export AMPIO_CLUSTER_SH=$cluster
guarded rc "$log" "$AMPIO_TEST_AMPIORUN" --cluster --nodes "$nodes" -n "$np" "$prog" "$work/ampio" "$@"
if [ "$rc" -ne 0 ]; then
    echo "run.sh: $name on $np ranks over $nodes nodes failed under ampio (exit $rc)"
    exit 1
fi
[ "$mode" = ampio ] && exit 0

guarded rc "$log" "$AMPIO_TEST_AMPIORUN" --cluster --native --nodes "$nodes" -n "$np" \
    "${native_opts[@]}" "$prog" "$work/native" "$@"
if [ "$rc" -ne 0 ]; then
    echo "run.sh: NOTE: $name failed on the native MPI-IO (exit $rc): ampio judged by its checks"
    exit 0
fi
# the files are seen only inside the compute nodes
on_c1 bash -c 'd=$1; s=0
for f in "$d"/native/*; do
    b=$(basename "$f")
    [ "$b" = native-defects.txt ] && continue
    if [ -f "$d/native/native-defects.txt" ] && grep -qxF "$b" "$d/native/native-defects.txt"; then
        echo "run.sh: native defect in $b: judged by the model"; continue
    fi
    if [ ! -e "$d/ampio/$b" ]; then echo "run.sh: $b written natively but not under ampio"; s=1
    elif ! cmp "$f" "$d/ampio/$b"; then echo "run.sh: $b differs between the native MPI-IO and ampio"; s=1
    fi
done
for f in "$d"/ampio/*; do
    [ -e "$d/native/$(basename "$f")" ] || { echo "run.sh: $(basename "$f") written under ampio only"; s=1; }
done
exit $s' compare "$work"
