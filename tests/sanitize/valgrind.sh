#!/usr/bin/env bash
# valgrind.sh BUILD: valgrind memcheck on a subset of the MPI tests, 2 ranks under ampio, in the
# build tree BUILD (an ordinary one: build/openmpi, build/mpich). A test passes when its own
# checks pass and memcheck reports no error outside the MPI libraries (valgrind.supp). Leaks
# are AddressSanitizer's business (check.sh); memcheck adds the reads of uninitialised bytes.
set -uo pipefail
build=$1
here="$(cd "$(dirname "$0")" && pwd)"
. "$build/tests/env.sh"
tests="basic/basic_vector coll/coll_owners semantics/file_ops semantics/datareps
views/access_families nonblock/nb_routines nonblock/nb_threads semantics/atomic_mode"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ampio-valgrind.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
status=0
for t in $tests; do
    name=$(basename "$t")
    mkdir -p "$tmp/$name"
    start=$(date +%s)
    timeout -k 10 "${AMPIO_VALGRIND_TIMEOUT:-300}" "$AMPIO_TEST_AMPIORUN" -n 2 valgrind -q \
        --error-exitcode=3 --leak-check=no --suppressions="$here/valgrind.supp" \
        "$build/tests/$t" "$tmp/$name" >"$tmp/$name.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
        echo "valgrind: $name passed ($(($(date +%s) - start)) s)"
    else
        echo "valgrind: $name FAILED (exit $rc)"
        grep -v "^--\|^ *$" "$tmp/$name.log" | head -n 60
        status=1
    fi
done
exit $status
