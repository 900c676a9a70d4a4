#!/usr/bin/env bash
# shim.sh ENV NP SHIM PROGRAM
#
# A PMPI profiling tool stacked on ampio: SHIM is preloaded in front of ampio (ampiorun keeps an
# LD_PRELOAD it finds in front of its own library) and on its own over the native MPI-IO.
# PROGRAM checks the tool's counts and which MPI-IO did the work; here the tool's report at
# MPI_Finalize must come from every rank and the files of both runs must be the same.
set -u
. "$1"
np=$2
shim=$3
prog=$4
work=$(mktemp -d "${AMPIO_TEST_TMP:-${TMPDIR:-/tmp}}/ampio-shim.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/A" "$work/N"
status=0

if ! LD_PRELOAD="$shim" timeout -k 10 120 "$AMPIO_TEST_AMPIORUN" -n "$np" "$prog" "$work/A" ampio \
    2>"$work/ampio.err"; then
    echo "shim.sh: the program failed with the tool in front of ampio" >&2
    status=1
fi
case "$AMPIO_TEST_FAMILY" in
openmpi) native=("$AMPIO_TEST_MPIEXEC" -x LD_PRELOAD="$shim") ;;
mpich) native=("$AMPIO_TEST_MPIEXEC" -genv LD_PRELOAD "$shim") ;;
*) native=(env LD_PRELOAD="$shim" "$AMPIO_TEST_MPIEXEC") ;;
esac
if ! timeout -k 10 120 "${native[@]}" -n "$np" "$prog" "$work/N" native \
    2>"$work/native.err"; then
    echo "shim.sh: the program failed with the tool over the native MPI-IO" >&2
    status=1
fi

for run in ampio native; do
    cat "$work/$run.err" >&2
    reports=$(grep -c "^pmpi_shim: rank .* MPI_File_open=2 MPI_File_set_view=2 MPI_File_write_all=1" \
        "$work/$run.err")
    if [ "$reports" -ne "$np" ]; then
        echo "shim.sh: $reports of $np ranks reported the tool's counts at MPI_Finalize ($run)" >&2
        status=1
    fi
done
for f in "$work/N"/*; do
    if ! cmp "$f" "$work/A/$(basename "$f")"; then
        echo "shim.sh: $(basename "$f") differs between the native MPI-IO and ampio" >&2
        status=1
    fi
done
exit $status
