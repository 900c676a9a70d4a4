#!/usr/bin/env bash
# The demonstration: installs what is missing (only what the demonstration runs: no test
# programs, no mpi4py), builds ampio for Open MPI and MPICH, then runs the quick benchmark sweep
# on each (ampio's collective algorithms and aggregator counts against every native MPI-IO
# variant, data verified) and prints the tables and where results and plots are. Exits 0 when
# every ampio run verified. Results go to $AMPIO_DEMO_OUT (bench-results).
#
#   demo.sh [--cluster]
#
# --cluster adds a shorter sweep on the emulated cluster (scripts/cluster.sh: 8 Open MPI ranks
# on 4 nodes, a striped CephFS on 3 storage nodes, links of 150 MB/s) with the file-per-process
# limit, where the machine can run it (root, namespaces, FUSE); the cluster is brought up for it
# and down after it. The local run stays the default.
set -euo pipefail
cd "$(dirname "$0")/.."

cluster=0
for arg in "$@"; do
    case $arg in
    --cluster) cluster=1 ;;
    *)
        echo "demo: unknown option $arg (--cluster)" >&2
        exit 2
        ;;
    esac
done

if [ $cluster -eq 1 ]; then
    bash scripts/setup.sh --demo --cluster
else
    bash scripts/setup.sh --demo
fi

out="${AMPIO_DEMO_OUT:-$PWD/bench-results}"
status=0
run() { # family ranks
    echo
    echo "=== ampio vs native MPI-IO: $1, $2 ranks ==="
    if ! "build/$1/bench/ampio-bench" --quick --np "$2" --out "$out/$1"; then
        status=1
    fi
}

# On the cluster: a directory striped over the 3 storage nodes (1 MiB units), the sweep from
# node c1 over the 4 compute nodes, the file-per-process row as the limit of the file system.
# Tiles and IOR segmented, ampio's stripe-contiguous and two-phase domains, ROMIO and OMPIO;
# every read finds the node's cache of the file dropped, as a restart by a new job does.
run_cluster() {
    local why mnt=${AMPIO_CLUSTER_MNT:-/mnt/ampio-cephfs}
    if ! why=$(bash scripts/cluster.sh can 2>&1); then
        echo
        echo "=== no cluster run: this machine cannot run the emulated cluster: $why ==="
        return 0
    fi
    echo
    echo "=== ampio vs native MPI-IO on the emulated cluster: openmpi, 8 ranks on 4 nodes, CephFS ==="
    # shellcheck disable=SC2016
    if ! bash scripts/cluster.sh with -- bash -c '
        set -e
        mnt=$1 out=$2
        bash scripts/cluster.sh exec c1 mkdir -p "$mnt/demo"
        bash scripts/cluster.sh exec c1 python3 -c "import os, sys
os.setxattr(sys.argv[1], \"ceph.dir.layout\", b\"stripe_unit=1048576 stripe_count=3 object_size=4194304\")" \
            "$mnt/demo"
        build/openmpi/bench/ampio-bench --quick --np 8 --fpp --patterns tile,ior-seg \
            --algorithms auto,stripe,two_phase --natives romio,ompio --rounds 2 \
            --program-args=--cold-reads \
            --launcher "bash scripts/cluster.sh mpiexec openmpi" --dir "$mnt/demo" --out "$out"
    ' demo "$mnt" "$out/cluster-openmpi"; then
        status=1
    fi
}

start=$SECONDS
run openmpi 4
# MPICH polls while it waits: more ranks than the 2 cores would measure the polling
run mpich 2
[ $cluster -eq 1 ] && run_cluster

echo
echo "=== results (sweeps took $((SECONDS - start)) s) ==="
for family in openmpi mpich cluster-openmpi; do
    for f in summary.txt results.csv results.json aggregators.png ampio_vs_native.png; do
        if [ -e "$out/$family/$f" ]; then echo "  $out/$family/$f"; fi
    done
done
if [ $cluster -eq 0 ]; then
    if why=$(bash scripts/cluster.sh can 2>&1); then
        echo "  (demo.sh --cluster adds the run on the emulated cluster, which this machine can run)"
    else
        echo "  (no run on the emulated cluster: $why)"
    fi
fi
if [ "$status" -eq 0 ]; then
    echo "demo: every ampio run verified"
else
    echo "demo: some ampio runs failed (see above)" >&2
fi
exit "$status"
