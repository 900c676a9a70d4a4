#!/usr/bin/env bash
# check_symbols.sh LIBRARY ROUTINES_LIST LARGE_COUNT(0|1)
#
# The library exports every routine of the list (the I/O chapter and the completion routines)
# as PMPI_x (a definition) and MPI_x (a weak alias), the _c forms when the host has them,
# MPI_Init and MPI_Init_thread (interposed, never their PMPI_ forms, which stay the MPI
# library's), and nothing else but ampio_ names.
set -u
lib=$1
list=$2
large=$3
exported=$(nm -D --defined-only "$lib" | awk '{print $2, $3}')
status=0
while read -r name flag; do
    case "$name" in "#"* | "") continue ;; esac
    names="$name"
    [ "$flag" = "+c" ] && [ "$large" = 1 ] && names="$names ${name}_c"
    for n in $names; do
        echo "$exported" | grep -qx "T PMPI_$n" || { echo "missing: PMPI_$n"; status=1; }
        echo "$exported" | grep -qx "W MPI_$n" || { echo "missing: MPI_$n (weak)"; status=1; }
    done
done <"$list"
for n in MPI_Init MPI_Init_thread; do
    echo "$exported" | grep -qx "T $n" || { echo "missing: $n"; status=1; }
done
extra=$(echo "$exported" | awk '{print $2}' |
    grep -v -E '^(P?MPI_(File_|Register_datarep|Wait|Test|Request_get_status$|Request_free$)|ampio_|MPI_Init$|MPI_Init_thread$)')
if [ -n "$extra" ]; then
    echo "exported beyond the MPI and ampio_ names:" $extra
    status=1
fi
count=$(echo "$exported" | grep -c " PMPI_")
echo "check_symbols: $count PMPI_ routines exported"
exit $status
