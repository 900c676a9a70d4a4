#!/usr/bin/env bash
# fault_sweep.sh ENV NP PROGRAM KIND [SAMPLES]
#
# Runs PROGRAM (fault_run) under ampio once per sampled n with the n-th call of KIND failing
# (alloc, eio, enospc, eintr, short: the AMPIO_FAULT_* variables of docs/DESIGN.md), on
# rank n % NP. A first run without a fault counts the calls of that kind; n takes 1..6, then
# SAMPLES (default 10) values spread over the rest, and the last. Each run must end within its
# timeout with every check of the program passed.
set -u
. "$1"
np=$2 prog=$3 kind=$4 samples=${5:-10}
tmp=${AMPIO_TEST_TMP:-${TMPDIR:-/tmp}}
work=$(mktemp -d "$tmp/ampio-faults.XXXXXX")
trap 'rm -rf "$work"' EXIT
limit=${AMPIO_FAULT_TIMEOUT:-60}

case $kind in
alloc) var=AMPIO_FAULT_ALLOC suffix= field=allocation ;;
comm) var=AMPIO_FAULT_COMM suffix= field=communication ;;
eio | enospc | eintr | short) var=AMPIO_FAULT_FS suffix=:$kind field=system ;;
*) echo "fault_sweep.sh: unknown kind $kind" >&2; exit 2 ;;
esac

run() { # run DIR [VAR=VALUE...]: the program under ampio, within the time limit
    local dir=$1
    shift
    mkdir -p "$dir"
    env "$@" timeout -k 5 "$limit" "$AMPIO_TEST_AMPIORUN" -n "$np" "$prog" "$dir" "$kind" \
        >"$dir.out" 2>&1
}

# the calls of this kind a run makes, most of any rank
if ! run "$work/count" AMPIO_FAULT_REPORT=1; then
    echo "FAIL: the run without a fault failed"; cat "$work/count.out"; exit 1
fi
total=$(sed -n "s/.*fault report rank [0-9]*:.* $field \([0-9]*\).*/\1/p" "$work/count.out" |
    sort -n | tail -n 1)
[ -n "$total" ] && [ "$total" -gt 0 ] || { echo "FAIL: no $kind calls counted"; cat "$work/count.out"; exit 1; }
echo "$kind: $total calls on the busiest rank"

ns=$(
    for n in 1 2 3 4 5 6; do [ "$n" -le "$total" ] && echo "$n"; done
    if [ "$total" -gt 6 ]; then
        for i in $(seq 1 "$samples"); do echo $((6 + (total - 6) * i / samples)); done
    fi
)
status=0 fired=0
for n in $(echo "$ns" | sort -nu); do
    rank=$((n % np))
    dir=$work/n$n
    run "$dir" AMPIO_FAULT_REPORT=1 "$var=$n$suffix" AMPIO_FAULT_RANK=$rank
    rc=$?
    if grep -q "fault injected" "$dir.out"; then
        fired=$((fired + 1))
        # a failed transfer, read, write or sync must reach the caller (an allocation may have
        # a way round it, and EINTR and short transfers are retried)
        case $kind in eio | enospc | comm)
            [ "$(cat "$dir/calls-failed" 2>/dev/null || echo 0)" -gt 0 ] ||
                { echo "FAIL: $var=$n$suffix on rank $rank fired and no call failed"; status=1
                  head -n 40 "$dir.out"; } ;;
        esac
    fi
    if [ $rc -ne 0 ]; then
        [ $rc -eq 124 ] || [ $rc -eq 137 ] && echo "FAIL: $var=$n$suffix on rank $rank hung" ||
            echo "FAIL: $var=$n$suffix on rank $rank (exit $rc)"
        grep -v "^rank .* failed:" "$dir.out" | head -n 40
        status=1
    fi
    rm -rf "$dir" "$dir.out"
done
echo "$kind: $(echo "$ns" | sort -nu | wc -l) runs, $fired with a fault fired"
[ $status -eq 0 ] && echo PASS
exit $status
