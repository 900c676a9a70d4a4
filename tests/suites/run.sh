#!/usr/bin/env bash
# run.sh FAMILY SUITE [TEST...]
#
# Runs the public MPI-IO test suite SUITE on the MPI family FAMILY (openmpi, mpich): each test
# (all of the suite's list, or the TESTs named) first natively, on the family's own MPI-IO,
# then under ampio (ampiorun), each run in a fresh directory of its own and bounded by a
# timeout. A run passes when it exits 0 and its output has a line matching the suite's success
# marker. The result:
#   - passes natively and under ampio: PASS;
#   - passes natively, fails under ampio: FAIL (the run fails), unless docs/SUITES.md lists the
#     test as a known ampio failure on that family: XFAIL, printed with its cause;
#   - fails natively: NATIVE-FAIL, which docs/SUITES.md must list with its cause (else the run
#     fails); the ampio run still happens and its result is printed, for information.
# Exit: 0, 1 (a failure), 77 (the suite's sources cannot be had, e.g. no network).
#
# A suite is two files here, in tests/suites/:
#   build_SUITE.sh FAMILY OUTDIR  builds the suite's programs with the family's compilers into
#                                 OUTDIR (and copies the data files the tests read there); exits
#                                 77 when the sources cannot be fetched. Called before every run:
#                                 it should rebuild only what is out of date.
#   SUITE.list                    one test per line: NAME[=PROGRAM] NP [ARG...]
#       PROGRAM (default NAME) is a path relative to OUTDIR, or several joined by "+" (P1+P2:
#       P2 runs after P1, in the same directory, on the same NP and ARGs, to read P1's files;
#       each must pass, but one written -P, whose exit status is not judged, as for a program
#       that exits without MPI_Finalize on purpose; the marker is sought in their joint
#       output); NP is capped at the family's rank limit, except "NP!" (exactly NP ranks:
#       skipped, and said so, past the limit); "@BIN@" in an ARG stands for OUTDIR. Directives, each for the tests after it:
#         marker REGEX          the success line (grep -E, on stdout and stderr; default: the
#                               " No Errors" line of MPICH's and ROMIO's tests)
#         env [VAR=VALUE...]    the tests' environment variables ("env" alone: none)
#         timeout SECONDS       the bound of each run (default AMPIO_SUITES_TIMEOUT)
#         slow                  the tests after it run only with AMPIO_SUITES_SLOW=1
#         compare [CMD...]      when a test passes both ways, the files of the two runs'
#                               directories must be the same: byte for byte, or else to
#                               CMD NATIVE-FILE AMPIO-FILE (exit 0; run natively, in @BIN@'s
#                               stead ARGs as above), e.g. a format's own comparison tool;
#                               "compare" alone: no comparison (the default)
#       "#" starts a comment.
# docs/SUITES.md holds the two tables the runner reads, under the headings "## Native failures"
# and "## Known ampio failures": rows "| SUITE | TEST | FAMILY | cause |", FAMILY being openmpi,
# mpich or both (TEST may be in backquotes).
#
# Environment: AMPIO_SUITES_BUILD (default build/FAMILY of the sources): the build tree, whose
# tests/env.sh gives the launchers; programs go to its suites/SUITE. AMPIO_SUITES_TIMEOUT (120 s)
# bounds each run. AMPIO_SUITES_MAX_NP: the rank limit (MPICH busy-polls: 2; Open MPI 4, more
# ranks than cores allowed by env.sh). AMPIO_SUITES_KEEP=1 keeps the runs' directories and
# output. AMPIO_SUITES_SLOW=1 also runs the tests marked slow. Each test's result is also
# written to OUTDIR/results.txt ("NAME NP RESULT"). tests/suites/CMakeLists.txt makes a ctest
# test of each suite.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
if [ $# -lt 2 ]; then
    sed -n '2,49p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
family=$1 suite=$2
shift 2
build=${AMPIO_SUITES_BUILD:-$repo/build/$family}
list=$here/$suite.list
doc=$repo/docs/SUITES.md
if [ ! -f "$list" ] || [ ! -f "$here/build_$suite.sh" ]; then
    echo "run.sh: no suite $suite (tests/suites/$suite.list and build_$suite.sh)" >&2
    exit 2
fi
if [ ! -f "$build/tests/env.sh" ]; then
    echo "run.sh: $build/tests/env.sh not found: build ampio for $family first" >&2
    exit 2
fi
. "$build/tests/env.sh"
if [ "$AMPIO_TEST_FAMILY" != "$family" ]; then
    echo "run.sh: $build is a build for $AMPIO_TEST_FAMILY, not $family" >&2
    exit 2
fi
limit=${AMPIO_SUITES_TIMEOUT:-120}
maxnp=${AMPIO_SUITES_MAX_NP:-4}
[ "$family" = mpich ] && maxnp=${AMPIO_SUITES_MAX_NP:-2}
bin=$build/suites/$suite

start=$(date +%s)
echo "=== suite $suite on $family: building into $bin ==="
bash "$here/build_$suite.sh" "$family" "$bin"
rc=$?
if [ $rc -eq 77 ]; then
    echo "SKIP: the sources of suite $suite cannot be fetched (no network?); suite not run"
    exit 77
elif [ $rc -ne 0 ]; then
    echo "FAIL: building suite $suite for $family failed (exit $rc)"
    exit 1
fi

# the cause docs/SUITES.md gives for TEST of this suite and family in the table under HEADING
listed() { # HEADING TEST
    awk -F'|' -v h="$1" -v s="$suite" -v t="$2" -v f="$family" '
        /^## / { on = ($0 == "## " h) }
        on && /^\|/ {
            for (i = 2; i <= 5; i++) { gsub(/^[ \t`]+|[ \t`]+$/, "", $i) }
            if ($2 == s && $3 == t && ($4 == f || $4 == "both")) { print $5; found = 1; exit }
        }
        END { exit !found }' "$doc"
}

tmp=${AMPIO_TEST_TMP:-${TMPDIR:-/tmp}}
work=$(mktemp -d "$tmp/ampio-suite-$suite.XXXXXX")
[ "${AMPIO_SUITES_KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT

# run MODE NAME NP PROGRAMS ARGS...: one run in its own directory, PROGRAMS ("+" between
# them) one after the other; its status is the result
run() {
    local mode=$1 name=$2 np=$3 progs=$4
    shift 4
    local dir=$work/$name.$mode launcher=$AMPIO_TEST_MPIEXEC p
    mkdir -p "$dir"
    [ "$mode" = ampio ] && launcher=$AMPIO_TEST_AMPIORUN
    local t0 t1 rc
    t0=$(date +%s.%N)
    : >"$work/$name.$mode.out"
    for p in ${progs//+/ }; do
        (cd "$dir" && AMPIO_STATS="$work/$name.stats" timeout -k 10 "$bound" \
            env ${testenv[@]+"${testenv[@]}"} "$launcher" -n "$np" "$bin/${p#-}" "$@" \
            >>"$work/$name.$mode.out" 2>&1 </dev/null)
        rc=$?
        # -P: any exit but a timeout's
        [ "${p#-}" = "$p" ] || [ $rc -eq 124 ] || [ $rc -eq 137 ] || rc=0
        [ $rc -eq 0 ] || break
    done
    t1=$(date +%s.%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        why="timed out after $bound s"
        return 1
    elif [ $rc -ne 0 ]; then
        why="exit $rc"
        return 1
    elif ! grep -qE -- "$marker" "$work/$name.$mode.out"; then
        why="no line matching /$marker/ in its output"
        return 1
    fi
    why=""
    return 0
}
# same: the files of NAME's native and ampio runs are the same (the compare directive); else
# sets why
same() {
    local name=$1 f base
    for f in "$work/$name.native"/* "$work/$name.ampio"/*; do
        [ -f "$f" ] || continue
        base=$(basename "$f")
        if [ ! -f "$work/$name.native/$base" ] || [ ! -f "$work/$name.ampio/$base" ]; then
            why="$base written by one run only"
            return 1
        fi
        cmp -s "$work/$name.native/$base" "$work/$name.ampio/$base" && continue
        if ! (cd "$work" && timeout -k 10 "$bound" "${compare[@]}" "$work/$name.native/$base" \
            "$work/$name.ampio/$base" >"$work/$name.compare.out" 2>&1 </dev/null); then
            why="$base differs from the native run's, to ${compare[0]}: $(tail -n 3 \
                "$work/$name.compare.out" | tr '\n' ' ')"
            return 1
        fi
    done
    return 0
}
show() { # the end of a run's output
    sed 's/^/    | /' "$1" | tail -n 25
}

marker='^ *No [Ee]rrors *$' bound=$limit testenv=() slow=0 compare=()
n_pass=0 n_skip=0 n_native=0 n_xfail=0 n_fail=0 n_served=0 n_run=0
failed="" native_failed=""
results=$bin/results.txt
: >"$results"
while read -r name np args; do
    case $name in
    "" | "#"*) continue ;;
    marker)
        marker="$np${args:+ $args}"
        continue
        ;;
    env)
        testenv=()
        for a in $np $args; do testenv+=("${a//@BIN@/$bin}"); done
        continue
        ;;
    timeout)
        bound=$np
        continue
        ;;
    slow)
        slow=1
        continue
        ;;
    compare)
        compare=()
        for a in $np $args; do compare+=("${a//@BIN@/$bin}"); done
        continue
        ;;
    esac
    prog=${name#*=}
    name=${name%%=*}
    if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qxF "$name"; then continue; fi
    if [ $slow = 1 ] && [ "${AMPIO_SUITES_SLOW:-0}" != 1 ]; then
        echo "SKIP $name: slow (AMPIO_SUITES_SLOW=1 runs it)"
        n_skip=$((n_skip + 1))
        continue
    fi
    if [ "${np%!}" != "$np" ]; then
        np=${np%!}
        if [ "$np" -gt "$maxnp" ]; then
            echo "SKIP $name: needs exactly $np ranks, more than $family's limit of $maxnp here"
            n_skip=$((n_skip + 1))
            continue
        fi
    fi
    [ "$np" -gt "$maxnp" ] && np=$maxnp
    argv=()
    for a in $args; do argv+=("${a//@BIN@/$bin}"); done
    n_run=$((n_run + 1))
    run native "$name" "$np" "$prog" "${argv[@]}"
    nrc=$? nwhy=$why nsecs=$secs
    rm -f "$work/$name.stats"
    run ampio "$name" "$np" "$prog" "${argv[@]}"
    arc=$? awhy=$why asecs=$secs
    if [ $nrc -eq 0 ] && [ $arc -eq 0 ] && [ ${#compare[@]} -gt 0 ] && ! same "$name"; then
        arc=1 awhy=$why
    fi
    [ -e "$work/$name.stats" ] && n_served=$((n_served + 1))
    # the files of large tests must not pile up until the end
    [ "${AMPIO_SUITES_KEEP:-0}" = 1 ] || rm -rf "$work/$name.native" "$work/$name.ampio"
    times="native $nsecs s, ampio $asecs s"
    if [ $nrc -ne 0 ]; then
        n_native=$((n_native + 1))
        outcome="passes"
        [ $arc -eq 0 ] || outcome="fails too ($awhy)"
        if cause=$(listed "Native failures" "$name"); then
            echo "NATIVE-FAIL $name np=$np: $nwhy; under ampio it $outcome ($times). docs/SUITES.md: $cause"
            echo "$name $np native-fail ampio-${outcome%% *}" >>"$results"
        else
            echo "FAIL $name np=$np: fails natively ($nwhy), and docs/SUITES.md does not list it" \
                "under \"Native failures\"; under ampio it $outcome ($times). Native output:"
            show "$work/$name.native.out"
            echo "$name $np native-fail-unlisted" >>"$results"
            n_fail=$((n_fail + 1))
            failed="$failed $name"
        fi
        native_failed="$native_failed $name"
    elif [ $arc -ne 0 ]; then
        if cause=$(listed "Known ampio failures" "$name"); then
            echo "XFAIL $name np=$np: passes natively, fails under ampio ($awhy): a KNOWN ampio" \
                "failure (docs/SUITES.md): $cause Its output under ampio ends:"
            tail -n 5 "$work/$name.ampio.out" | sed 's/^/    | /'
            echo "$name $np xfail" >>"$results"
            n_xfail=$((n_xfail + 1))
        else
            echo "FAIL $name np=$np: passes natively, fails under ampio ($awhy; $times). Output under ampio:"
            show "$work/$name.ampio.out"
            echo "$name $np fail" >>"$results"
            n_fail=$((n_fail + 1))
            failed="$failed $name"
        fi
    else
        echo "PASS $name np=$np ($times)"
        echo "$name $np pass" >>"$results"
        n_pass=$((n_pass + 1))
        if cause=$(listed "Known ampio failures" "$name"); then
            echo "NOTE: $name passes under ampio, but docs/SUITES.md lists it as a known ampio failure: $cause"
        fi
    fi
done <"$list"

status=0
if [ $n_run -eq 0 ] && [ $n_skip -eq 0 ]; then
    echo "FAIL: no test of suite $suite ran"
    status=1
elif [ $n_served -eq 0 ] && [ $# -eq 0 ]; then
    # AMPIO_STATS is written by ampio at the close of a file: none at all means ampio was not there
    echo "FAIL: no ampio run wrote statistics: ampio did not serve the suite's I/O"
    status=1
fi
[ $n_fail -eq 0 ] || status=1
echo "=== suite $suite on $family: $n_run tests, $n_pass passed natively and under ampio," \
    "$n_native failed natively${native_failed:+ (}${native_failed# }${native_failed:+)}, $n_xfail known ampio failures," \
    "$n_fail failures${failed:+ (}${failed# }${failed:+)}, $n_skip skipped; ampio wrote statistics in $n_served; $(($(date +%s) - start)) s ==="
exit $status
