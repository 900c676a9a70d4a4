#!/usr/bin/env bash
# overlap.sh FAMILY NP [MIB] [ROUNDS] [DIR]: the overlap of computation with iwrite_all,
# iread_all and iwrite_at (bench_overlap.c) for ampio (MPI_THREAD_SINGLE, and
# MPI_THREAD_MULTIPLE with its progress thread) and every native MPI-IO of FAMILY, launches
# interleaved round by round; prints the median io, comp, step and overlap fraction of every
# row (REPS repetitions in each of ROUNDS launches). Run it under flock /work/bench.lock.
set -euo pipefail
cd "$(dirname "$0")/.."
family=${1:-openmpi} np=${2:-2} mib=${3:-64} rounds=${4:-3} dir=${5:-/tmp}
build=build/$family
. "$build/tests/env.sh"
prog=$build/bench/ampio-bench-overlap
reps=${REPS:-3}
args=(--mib "$mib" --reps "$reps")
# one launch per operation: Open MPI's ROMIO 3.2.1 crashes in some of them (reported as
# missing rows). With AMPIO_CLUSTER=1 every launch runs on the emulated cluster (ampiorun
# --cluster; DIR on its CephFS, e.g. /mnt/ampio-cephfs/bench), the natives through ampiorun
# --native.
native=("$AMPIO_TEST_MPIEXEC")
[ "${AMPIO_CLUSTER:-0}" = 1 ] && native=("$AMPIO_TEST_AMPIORUN" --native)
for round in $(seq "$rounds"); do
    for op in iwrite_all iread_all iwrite_at; do
        a=("${args[@]}" --ops "$op")
        "$AMPIO_TEST_AMPIORUN" -n "$np" "$prog" "$dir" ampio "${a[@]}" --thread single || true
        "$AMPIO_TEST_AMPIORUN" -n "$np" "$prog" "$dir" ampio-mt "${a[@]}" --thread multiple || true
        if [ "$family" = openmpi ]; then
            "${native[@]}" -n "$np" "$prog" "$dir" ompio "${a[@]}" || true
            "${native[@]}" --mca io romio321 -n "$np" "$prog" "$dir" romio "${a[@]}" ||
                echo "crashed romio $op"
        else
            "${native[@]}" -n "$np" "$prog" "$dir" romio "${a[@]}" || true
        fi
    done
done 2>/dev/null | python3 -c '
import re, statistics, sys
rows, bad, crashed = {}, [], set()
for line in sys.stdin:
    if line.startswith("crashed "):
        crashed.add(" ".join(line.split()[1:]))
    if "verified=no" in line:
        bad.append(line.split()[1])
    m = re.match(r"overlap (\S+) (\S+) tests=(\d) np=(\d+) thread=(\S+) io=(\S+) comp=(\S+) step=(\S+) fraction=(\S+)", line)
    if m:
        key = (m[2], m[1], m[5], m[3])
        rows.setdefault(key, []).append([float(m[i]) for i in (6, 7, 8, 9)])
print("| operation | MPI-IO | thread level | MPI_Test in the loop | io (s) | compute (s) | step (s) | step / max | overlap | runs |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for key in sorted(rows):
    v = rows[key]
    med = [statistics.median(x[i] for x in v) for i in range(4)]
    ratio = statistics.median(x[2] / max(x[0], x[1]) for x in v)
    print("| %s | %s | %s | %s | %.3f | %.3f | %.3f | %.2f | %.0f%% | %d |" % (
        key[0], key[1], key[2], "yes" if key[3] == "1" else "no", med[0], med[1], med[2], ratio,
        100 * med[3], len(v)))
for c in sorted(crashed):
    print("crashed (no figures):", c)
if bad:
    print("NOT VERIFIED:", " ".join(bad))
    sys.exit(1)
'
