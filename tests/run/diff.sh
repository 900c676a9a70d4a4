#!/usr/bin/env bash
# diff.sh ENV NP PROGRAM [ARGS...]
#
# Runs PROGRAM on NP ranks twice, on the host MPI's own MPI-IO and under ampio, each writing
# into its own directory, then compares every file byte for byte. Files the program recorded in
# native-defects.txt (the native MPI-IO disagreed with the program's model) are judged by the
# model alone. The ampio run must succeed; a native run that fails is reported, not fatal.
#
# ENV is the env.sh of the build tree. AMPIO_TEST_MODE=ampio skips the native run.
set -u
. "$1"
np=$2
prog=$3
shift 3
name=$(basename "$prog")
tmp=${AMPIO_TEST_TMP:-${TMPDIR:-/tmp}}
work=$(mktemp -d "$tmp/ampio-$name.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/native" "$work/ampio"
limit=${AMPIO_TEST_TIMEOUT:-600}

status=0
timeout -k 10 "$limit" "$AMPIO_TEST_AMPIORUN" -n "$np" "$prog" "$work/ampio" "$@"
rc=$?
if [ $rc -ne 0 ]; then
    echo "diff.sh: $name on $np ranks failed under ampio (exit $rc)" >&2
    exit 1
fi
if [ "${AMPIO_TEST_MODE:-diff}" = ampio ]; then
    exit 0
fi

timeout -k 10 "$limit" "$AMPIO_TEST_MPIEXEC" -n "$np" "$prog" "$work/native" "$@"
rc=$?
if [ $rc -ne 0 ]; then
    echo "diff.sh: NOTE: $name on $np ranks failed on the native MPI-IO (exit $rc);" \
        "ampio was judged by its own checks alone" >&2
    exit 0
fi

defects="$work/native/native-defects.txt"
for f in "$work/native"/*; do
    base=$(basename "$f")
    [ "$base" = native-defects.txt ] && continue
    if [ -f "$defects" ] && grep -qxF "$base" "$defects"; then
        echo "diff.sh: native defect in $base: judged by the model" >&2
        continue
    fi
    if [ ! -e "$work/ampio/$base" ]; then
        echo "diff.sh: $base written natively but not under ampio" >&2
        status=1
    elif ! cmp "$f" "$work/ampio/$base"; then
        echo "diff.sh: $base differs between the native MPI-IO and ampio" >&2
        status=1
    fi
done
for f in "$work/ampio"/*; do
    base=$(basename "$f")
    if [ ! -e "$work/native/$base" ]; then
        echo "diff.sh: $base written under ampio but not natively" >&2
        status=1
    fi
done
exit $status
