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
# each rank's output in its own files: on one stream the ranks' result lines interleave
per_rank() {
    if [ "$AMPIO_TEST_FAMILY" = openmpi ]; then
        echo --output-filename "$work/$1"
    else
        echo -outfile-pattern "$work/$1.%r.out" -errfile-pattern "$work/$1.%r.err"
    fi
}
# "rank test class outcome" lines of a run
results() {
    for f in $(find "$work" -path "$work/$1*" -type f \( -name stderr -o -name "*.err" \)); do
        rank=$(echo "$f" | sed -n 's/.*rank\.\([0-9]*\).*/\1/p; s/.*\.\([0-9]*\)\.err$/\1/p' | head -1)
        grep -E '^test[A-Za-z0-9_]+ \(.*\) \.\.\. ' "$f" |
            sed "s/^\(test[A-Za-z0-9_]*\) (__main__\.\([A-Za-z0-9_]*\)\.[A-Za-z0-9_]*) \.\.\. \(.*\)$/$rank \1 \2 \3/"
    done | sort -u
}
timeout -k 10 300 "$AMPIO_TEST_MPIEXEC" $(per_rank native) -n "$np" "$python" test_io.py -v \
    >"$work/native.log" 2>&1
# statistics go to a file, not into the test's output
timeout -k 10 300 "$AMPIO_TEST_AMPIORUN" $(per_rank ampio) -n "$np" env AMPIO_STATS="$work/stats.json" \
    "$python" test_io.py -v >"$work/ampio.log" 2>&1
arc=$?
results native >"$work/native.txt"
results ampio >"$work/ampio.txt"
if [ ! -s "$work/stats.json" ]; then
    echo "FAIL: ampio did not serve the I/O (no statistics printed)"; tail -20 "$work/ampio.log"; exit 1
fi
status=0
while read -r rank name cls outcome; do
    [ "$outcome" = ok ] || continue
    if ! grep -qxF "$rank $name $cls ok" "$work/ampio.txt"; then
        echo "FAIL: $cls.$name passes natively on rank $rank but not under ampio:"
        grep -F " $name $cls " "$work/ampio.txt" | grep "^$rank "
        status=1
    fi
done <"$work/native.txt"
n_native=$(grep -c ' ok$' "$work/native.txt") n_ampio=$(grep -c ' ok$' "$work/ampio.txt")
echo "mpi4py test_io on $np ranks: $n_native tests pass natively, $n_ampio under ampio"
[ "$n_ampio" -gt 0 ] || { echo "FAIL: no test ran under ampio"; tail -30 "$work/ampio.log"; status=1; }
[ $arc -eq 0 ] || { echo "FAIL: the ampio run exited with $arc"; tail -30 "$work/ampio.log"; status=1; }
exit $status
