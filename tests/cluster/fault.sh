#!/usr/bin/env bash
# fault.sh ENV CLUSTER_SH NODES NP PROGRAM
#
# A fault on the emulated cluster: PROGRAM (fault_client) runs collective writes under ampio on
# NP ranks over NODES nodes; once it has made a few calls, the file system client of the last
# of those nodes is killed (cluster.sh fail-client). Every rank must return an error from the
# same call and the job must end (the program checks the first, the time limit the second).
# The client is mounted again afterwards. Exit 77 (skipped) when the machine cannot run the
# cluster.
set -u
. "$1"
cluster=$2 nodes=$3 np=$4 prog=$5
. "$(dirname "$0")/lib.sh"
cluster_ready
mnt=${AMPIO_CLUSTER_MNT:-/mnt/ampio-cephfs}
work=$mnt/ampio-test.fault.$$
victim=c$nodes
limit=${AMPIO_TEST_TIMEOUT:-300}
marker=$(mktemp -u "${TMPDIR:-/tmp}/ampio-fault.XXXXXX")
log=$(mktemp)
cleanup() {
    bash "$cluster" remount
    bash "$cluster" exec c1 rm -rf "$work"
    rm -f "$marker" "$log" "$log.rc"
}
trap cleanup EXIT
bash "$cluster" exec c1 mkdir -p "$work" || exit 1
export AMPIO_CLUSTER_SH=$cluster
(
    guarded rc "$log" "$AMPIO_TEST_AMPIORUN" --cluster --nodes "$nodes" -n "$np" "$prog" "$work" \
        "$marker" >/dev/null
    echo "$rc" >"$log.rc"
) &
job=$!
for ((i = 0; i < 600; i++)); do
    [ -e "$marker" ] && break
    kill -0 "$job" 2>/dev/null || break
    sleep 0.2
done
if [ ! -e "$marker" ]; then
    wait "$job"
    cat "$log"
    echo "FAIL: the program did not start its collective writes"
    exit 1
fi
t0=$SECONDS
bash "$cluster" fail-client "$victim"
wait "$job"
rc=$(cat "$log.rc" 2>/dev/null || echo 1)
cat "$log"
echo "fault.sh: the job ended $((SECONDS - t0)) s after the client of $victim was killed (exit $rc)"
if [ "$rc" -eq 124 ]; then
    echo "FAIL: a rank hung (no end within $limit s)"
    exit 1
fi
n=$(grep -c "^rank [0-9]* on .*: error at call" "$log")
if [ "$rc" -ne 0 ] || [ "$n" -ne "$np" ]; then
    echo "FAIL: $n of $np ranks returned an error (exit $rc)"
    exit 1
fi
echo PASS
