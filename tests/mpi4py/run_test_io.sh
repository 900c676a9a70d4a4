#!/usr/bin/env bash
# run_test_io.sh ENV NP PYTHON TESTDIR
# Runs mpi4py's own I/O test module natively and under ampio on NP ranks; every test that
# passes natively must pass under ampio. Skips (77) when this family's mpi4py is not installed.
set -u
. "$1"
np=$2 python=$3 testdir=$4
if [ ! -x "$python" ] || [ ! -f "$testdir/test_io.py" ] || ! "$python" -c "import mpi4py" 2>/dev/null; then
    echo "SKIP: mpi4py for $AMPIO_TEST_FAMILY is not installed (scripts/setup.sh installs it)"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$testdir"
results() { grep -E '^test[A-Za-z0-9_]+ \(.*\) \.\.\. ' "$1" | sed 's/ (__main__\./ /; s/) \.\.\. / /' | sort -u; }
timeout -k 10 300 "$AMPIO_TEST_MPIEXEC" -n "$np" "$python" test_io.py -v >"$work/native.log" 2>&1
# statistics go to a file: on stderr they would cut into unittest's result lines
timeout -k 10 300 "$AMPIO_TEST_AMPIORUN" -n "$np" env AMPIO_STATS="$work/stats.json" "$python" test_io.py -v \
    >"$work/ampio.log" 2>&1
arc=$?
results "$work/native.log" >"$work/native.txt"
results "$work/ampio.log" >"$work/ampio.txt"
if [ ! -s "$work/stats.json" ]; then
    echo "FAIL: ampio did not serve the I/O (no statistics printed)"; tail -20 "$work/ampio.log"; exit 1
fi
status=0
while read -r name cls outcome; do
    [ "$outcome" = ok ] || continue
    if ! grep -qE "^$name $cls ok" "$work/ampio.txt"; then
        echo "FAIL: $cls.$name passes natively but not under ampio:"
        grep -E "^$name $cls" "$work/ampio.txt"
        status=1
    fi
done <"$work/native.txt"
n_native=$(grep -c ' ok$' "$work/native.txt") n_ampio=$(grep -c ' ok$' "$work/ampio.txt")
echo "mpi4py test_io on $np ranks: $n_native tests pass natively, $n_ampio under ampio"
[ "$n_ampio" -gt 0 ] || { echo "FAIL: no test ran under ampio"; tail -30 "$work/ampio.log"; status=1; }
[ $arc -eq 0 ] || { echo "FAIL: the ampio run exited with $arc"; tail -30 "$work/ampio.log"; status=1; }
exit $status
