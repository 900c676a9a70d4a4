# build_common.sh: helpers of the build_SUITE.sh scripts (sourced; expects $here and $out).
suites_repo=$(cd "$here/../.." && pwd)
suites_failed=$out/.build-failed
rm -f "$suites_failed"

# suites_fetch PACKAGE: the unpacked Debian source of PACKAGE (fetch.sh); exit 77 without it
suites_fetch() {
    local dir
    if ! dir=$(bash "$here/fetch.sh" "$1" "$suites_repo/build/suites/src"); then
        echo "build: cannot fetch the Debian source of $1 (no network, or no deb-src access)" >&2
        exit 77
    fi
    echo "$dir"
}

# suites_programs LIST: the programs a suite's list runs (NAME, or the PROGRAMs of
# NAME=PROGRAM[+PROGRAM...], without the - of those whose exit is not judged); directive lines
# are not tests
suites_programs() {
    awk '$1 !~ /^#/ && $1 !~ /^(marker|env|timeout|slow|compare)$/ && NF >= 2 {
        n = split($1, p, "="); k = split(p[n], q, "+"); for (i = 1; i <= k; i++) { sub(/^-/, "", q[i]); print q[i] } }' "$1" |
        sort -u
}

# suites_write FILE: stdin into FILE, leaving FILE (and its time) alone when unchanged
suites_write() {
    local tmp
    tmp=$(mktemp "$1.XXXXXX")
    cat >"$tmp"
    if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv "$tmp" "$1"; fi
}

# suites_cc FAMILY OUT SRC [DEPS...] -- ARGS...: mpicc.FAMILY SRC ARGS -o OUT, unless OUT is
# newer than SRC, the DEPS and the build scripts. A failure is recorded (see suites_check) and
# its log kept in OUT.log; runs in the background too.
suites_cc() {
    local family=$1 target=$2 src=$3 dep stale=0
    shift 3
    [ "$target" -nt "$src" ] || stale=1
    while [ "$1" != -- ]; do
        [ "$target" -nt "$1" ] || stale=1
        shift
    done
    shift
    for dep in "$here"/build_*.sh; do [ "$target" -nt "$dep" ] || stale=1; done
    [ $stale -eq 1 ] || return 0
    if ! "mpicc.$family" "$src" "$@" -o "$target" >"$target.log" 2>&1; then
        echo "build: cannot build $target from $src:" >&2
        tail -n 20 "$target.log" >&2
        rm -f "$target"
        touch "$suites_failed"
    fi
    return 0
}

# suites_throttle: at most two compilers at once (the machine's two cores)
suites_throttle() {
    while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
}

# suites_check: exit 1 if a compilation failed
suites_check() {
    wait
    if [ -e "$suites_failed" ]; then
        echo "build: some programs could not be built (above)" >&2
        exit 1
    fi
}
