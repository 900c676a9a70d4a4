#!/usr/bin/env bash
# expect_abort.sh ENV NP PROGRAM ARGS...
#
# Runs PROGRAM under ampio with a fresh directory as its first argument and expects it to be
# ended by an error handler: a nonzero exit within the time limit, "ERRTEST-BEFORE" printed (or
# left as a file in the directory: a launcher may drop output on an abort) and
# "ERRTEST-SURVIVED" or "ERRTEST-WRONG-DEFAULT" not.
set -u
. "$1"
np=$2
prog=$3
shift 3
work=$(mktemp -d "${TMPDIR:-/tmp}/ampio-abort.XXXXXX")
trap 'rm -rf "$work"' EXIT
limit=${AMPIO_TEST_TIMEOUT:-60}
mkdir "$work/out"
start=$(date +%s)
timeout -k 5 "$limit" "$AMPIO_TEST_AMPIORUN" -n "$np" "$prog" "$work/out" "$@" >"$work/log" 2>&1
rc=$?
elapsed=$(($(date +%s) - start))
cat "$work/log"
status=0
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "expect_abort.sh: still running after ${limit}s: the error did not end the job" >&2
    status=1
elif [ $rc -eq 0 ]; then
    echo "expect_abort.sh: exit 0: the error did not end the job" >&2
    status=1
fi
if ! grep -q ERRTEST-BEFORE "$work/log" && [ ! -e "$work/out/ERRTEST-BEFORE" ]; then
    echo "expect_abort.sh: the job ended before the erroneous call" >&2
    status=1
fi
if grep -q -e ERRTEST-SURVIVED -e ERRTEST-WRONG-DEFAULT "$work/log"; then
    echo "expect_abort.sh: a process went on after the error, or the default was wrong" >&2
    status=1
fi
echo "expect_abort.sh: exit $rc after ${elapsed}s"
exit $status
