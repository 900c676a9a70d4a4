#!/usr/bin/env bash
# cross.sh ENV NP DIFFTOOL PROGRAM [ARGS...]
#
# A client library (HDF5, PnetCDF) on top of MPI-IO: PROGRAM writes and verifies its files on
# NP ranks under ampio (into A/) and on the native MPI-IO (into N/). Every file must be the same
# byte for byte and the same to the format's own comparison tool DIFFTOOL (h5diff, ncmpidiff).
# Then each side reads the other's files ("PROGRAM DIR read"): ampio reads what the native
# MPI-IO wrote and the native MPI-IO reads what ampio wrote.
set -u
. "$1"
np=$2
difftool=$3
prog=$4
shift 4
name=$(basename "$prog")
work=$(mktemp -d "${AMPIO_TEST_TMP:-${TMPDIR:-/tmp}}/ampio-$name.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/A" "$work/N"
limit=${AMPIO_TEST_TIMEOUT:-45}
run() { timeout -k 10 "$limit" "$@"; }

if ! run "$AMPIO_TEST_AMPIORUN" -n "$np" "$prog" "$work/A" "$@"; then
    echo "cross.sh: $name failed under ampio" >&2
    exit 1
fi
if ! run "$AMPIO_TEST_MPIEXEC" -n "$np" "$prog" "$work/N" "$@"; then
    echo "cross.sh: NOTE: $name failed on the native MPI-IO; ampio judged by its own checks" >&2
    exit 0
fi

status=0
count=0
for f in "$work/N"/*; do
    base=$(basename "$f")
    count=$((count + 1))
    if [ ! -e "$work/A/$base" ]; then
        echo "cross.sh: $base written natively but not under ampio" >&2
        status=1
        continue
    fi
    if ! "$difftool" "$f" "$work/A/$base"; then
        echo "cross.sh: $difftool finds $base different between native and ampio" >&2
        status=1
    fi
    if ! cmp "$f" "$work/A/$base"; then
        echo "cross.sh: $base is not byte-identical between native and ampio" >&2
        status=1
    fi
done
if [ $count -eq 0 ] || [ "$(ls "$work/A" | wc -l)" -ne $count ]; then
    echo "cross.sh: native wrote $count files, ampio $(ls "$work/A" | wc -l)" >&2
    status=1
fi

if ! run "$AMPIO_TEST_AMPIORUN" -n "$np" "$prog" "$work/N" read "$@"; then
    echo "cross.sh: ampio cannot read the files the native MPI-IO wrote" >&2
    status=1
fi
if ! run "$AMPIO_TEST_MPIEXEC" -n "$np" "$prog" "$work/A" read "$@"; then
    echo "cross.sh: the native MPI-IO cannot read the files ampio wrote" >&2
    status=1
fi
exit $status
