#!/usr/bin/env bash
# stripe_cephfs.sh ENV CLUSTER_SH BINDIR NODES NP
#
# On the emulated cluster's CephFS (scripts/cluster.sh, already up), NP ranks over the first
# NODES compute nodes, for several layouts (stripe unit 64 KiB to 1 MiB, stripe count 1 to 3,
# object sizes other than the unit) set on a directory that the test files inherit: the
# collective matrix (every algorithm and aggregator count with a collective buffer of many
# rounds, the view shapes shared out between the layouts so that each runs once, but resized)
# run natively and under ampio, compared byte for byte
# (and each against its model); coll_layout (striping hints set a new file's layout, read back
# through ceph.file.layout, and get_info reports it); coll_trace (stripe-contiguous domains:
# each aggregator on its own targets, whole stripes, no stripe written by two aggregators).
# BINDIR holds the test programs. STRIPE_LAYOUTS="UNIT COUNT OBJECT [SHAPES];..." runs other
# layouts (SHAPES: coll_matrix's, comma-separated; all when left out). Exit 77 (skipped) when
# the machine cannot run the cluster.
set -u
. "$1"
cluster=$2 bin=$3 nodes=$4 np=$5
. "$(dirname "$0")/lib.sh"
cluster_ready
mnt=${AMPIO_CLUSTER_MNT:-/mnt/ampio-cephfs}
root=$mnt/ampio-stripe-test.$$
limit=${AMPIO_TEST_TIMEOUT:-300}
status=0
log=$(mktemp)
on_c1() { bash "$cluster" exec c1 "$@"; }
trap 'rm -f "$log"; on_c1 rm -rf "$root"' EXIT
export AMPIO_CLUSTER_SH=$cluster
run_ampio() { guarded rc "$log" "$AMPIO_TEST_AMPIORUN" --cluster --nodes "$nodes" -n "$np" "$@"; }
run_native() {
    guarded rc "$log" "$AMPIO_TEST_AMPIORUN" --cluster --native --nodes "$nodes" -n "$np" \
        "${native_opts[@]}" "$@"
}

# compare DIR: every file of DIR/native equals DIR/ampio, but those of native defects
compare='d=$1; s=0; for f in "$d"/native/*; do b=$(basename "$f");
  [ "$b" = native-defects.txt ] && continue
  if [ -f "$d/native/native-defects.txt" ] && grep -qxF "$b" "$d/native/native-defects.txt"; then continue; fi
  cmp -s "$f" "$d/ampio/$b" || { echo "differs: $b"; s=1; }; done; exit $s'

# "resized" is left out by default: its 4-byte runs become one synchronous write each through
# ceph-fuse (locked read-modify-write is not used there), minutes for the matrix; it runs on one
# node with the rest of the tests
IFS=';' read -r -a layouts <<<"${STRIPE_LAYOUTS:-65536 1 4194304 contig,vector;65536 3 1048576 sub2d,sub3d;262144 3 786432 darray,holes;1048576 2 4194304 empty}"
for layout in "${layouts[@]}"; do
    set -- $layout
    unit=$1 count=$2 object=$3 shapes=${4:-}
    d=$root/u$unit.c$count.o$object
    on_c1 mkdir -p "$d/native" "$d/ampio" "$d/layout" "$d/trace" || exit 1
    on_c1 python3 -c "import os, sys; os.setxattr(sys.argv[1], 'ceph.dir.layout', sys.argv[2].encode())" \
        "$d" "stripe_unit=$unit stripe_count=$count object_size=$object" || exit 1
    echo "== layout $unit x $count, object $object: coll_matrix ${shapes:-(every shape)}"
    t0=$SECONDS
    run_ampio "$bin/coll_matrix" "$d/ampio" "${shapes:-all}" rounds
    echo "== coll_matrix under ampio: $((SECONDS - t0)) s"
    if [ "$rc" -ne 0 ]; then
        echo "FAIL: coll_matrix under ampio (exit $rc)"
        status=1
    else
        run_native "$bin/coll_matrix" "$d/native" "${shapes:-all}" rounds
        echo "== coll_matrix natively: $((SECONDS - t0)) s"
        if [ "$rc" -ne 0 ]; then
            echo "NOTE: coll_matrix failed on the native MPI-IO: ampio judged by its model alone"
        elif ! on_c1 bash -c "$compare" compare "$d"; then
            echo "FAIL: coll_matrix: files differ between the native MPI-IO and ampio"
            status=1
        fi
    fi
    # a new file takes the hints' layout: another one than the directory's
    run_ampio "$bin/coll_layout" "$d/layout" $((unit * 2)) $((count % 3 + 1)) $((object * 2))
    [ "$rc" -eq 0 ] || { echo "FAIL: coll_layout (exit $rc)"; status=1; }
    run_ampio "$bin/coll_trace" "$d/trace" 40
    [ "$rc" -eq 0 ] || { echo "FAIL: coll_trace (exit $rc)"; status=1; }
    echo "== layout $unit x $count, object $object: $((SECONDS - t0)) s"
done
[ $status -eq 0 ] && echo PASS
exit $status
