#!/usr/bin/env bash
# selftest.sh BUILD: checks run.sh's judgement on a made-up suite whose tests are one shell
# script that passes or fails natively or under ampio (it sees libampio.so in LD_PRELOAD) as
# its argument says, launched through BUILD's tests/env.sh like any suite: a pass, a listed and
# an unlisted native failure, a known and an unknown ampio failure, a missing success line, a
# skipped test, a timeout, the env directive, a fresh directory per run, programs chained
# in one directory (P1+P2) and the comparison of the runs' files (compare).
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ampio-suites-selftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tests/suites" "$tmp/docs"
cp "$here/run.sh" "$here/build_common.sh" "$tmp/tests/suites/"
cat >"$tmp/tests/suites/build_fake.sh" <<'EOF'
#!/usr/bin/env bash
mkdir -p "$2"
cat >"$2/t" <<'EOT'
#!/bin/sh
under=0
case ${LD_PRELOAD:-} in *libampio*) under=1 ;; esac
[ $under = 1 ] && [ -n "${AMPIO_STATS:-}" ] && echo '{}' >"$AMPIO_STATS"
[ -z "$(ls)" ] || { echo "not a fresh directory"; exit 4; }
touch leftover
case $1 in
pass) ;;
fail-native) [ $under = 1 ] || exit 3 ;;
fail-ampio) [ $under = 0 ] || exit 3 ;;
no-line-ampio) [ $under = 0 ] || exit 0 ;;
env) [ "${FOO:-}" = "$2" ] || exit 5 ;;
write-same) echo x >data ;;
write-diff) echo $under >data ;;
sleep) sleep 30 ;;
fail-always) exit 3 ;;
esac
echo " No Errors"
EOT
chmod +x "$2/t"
cat >"$2/t2" <<'EOT'
#!/bin/sh
[ -e leftover ] || { echo "not in the directory of the program before"; exit 6; }
echo " No Errors"
EOT
chmod +x "$2/t2"
EOF
cat >"$tmp/tests/suites/fake.list" <<'EOF'
pass=t 1 pass
native=t 1 fail-native
native_unlisted=t 1 fail-native
known=t 1 fail-ampio
unknown=t 1 fail-ampio
no_line=t 1 no-line-ampio
exact=t 3! pass
marker Errors$
one_word_marker=t 1 pass
marker ^ *No [Ee]rrors *$
chain=t+t2 1 pass
chain_fresh=t+t 1 pass
chain_unjudged=-t+t2 1 fail-always
chain_judged=t+t2 1 fail-always
compare false
same_bytes=t 1 write-same
differ=t 1 write-diff
compare true
differ_tool_same=t 1 write-diff
compare
env FOO=@BIN@/x
env=t 1 env @BIN@/x
env
timeout 2
slow_run=t 1 sleep
EOF
cat >"$tmp/docs/SUITES.md" <<'EOF'
## Native failures
| suite | test | family | cause |
| --- | --- | --- | --- |
| fake | `native` | both | made up |
| fake | `native_unlisted` | other | listed for another family only |
## Known ampio failures
| suite | test | family | cause |
| fake | known | both | made up too |
| other | unknown | both | listed for another suite only |
EOF
family=$(. "$build/tests/env.sh" && echo "$AMPIO_TEST_FAMILY")
status=0
# expect EXIT PATTERN TEST...: run.sh on TESTs exits EXIT and prints a line matching PATTERN
expect() {
    local want=$1 pattern=$2 out rc
    shift 2
    out=$(AMPIO_SUITES_BUILD=$build AMPIO_SUITES_MAX_NP=2 bash "$tmp/tests/suites/run.sh" \
        "$family" fake "$@" 2>&1)
    rc=$?
    if [ $rc -ne "$want" ] || ! grep -qE -- "$pattern" <<<"$out"; then
        echo "FAIL: run.sh fake $*: exit $rc (expected $want), expected a line matching /$pattern/:"
        sed 's/^/    | /' <<<"$out"
        status=1
    else
        echo "ok: $* -> exit $rc, $(grep -E -- "$pattern" <<<"$out" | head -1 | cut -c1-90)"
    fi
}
expect 0 '^PASS pass np=1' pass
expect 0 '^NATIVE-FAIL native np=1: exit 3; under ampio it passes' native
expect 1 '^FAIL native_unlisted np=1: fails natively' native_unlisted
expect 0 '^XFAIL known np=1: passes natively, fails under ampio \(exit 3\)' known
expect 1 '^FAIL unknown np=1: passes natively, fails under ampio \(exit 3' unknown
expect 1 '^FAIL no_line np=1: passes natively, fails under ampio \(no line matching' no_line
expect 0 '^SKIP exact: needs exactly 3 ranks' exact
expect 0 '^PASS env np=1' env
expect 0 '^PASS one_word_marker np=1' one_word_marker
expect 0 '^PASS chain np=1' chain
expect 1 '^FAIL chain_fresh np=1: fails natively \(exit 4\)' chain_fresh
expect 0 '^PASS chain_unjudged np=1' chain_unjudged
expect 1 '^FAIL chain_judged np=1: fails natively \(exit 3\)' chain_judged
expect 0 '^PASS same_bytes np=1' same_bytes
expect 1 '^FAIL differ np=1: passes natively, fails under ampio \(data differs from the native run.s, to false' differ
expect 0 '^PASS differ_tool_same np=1' differ_tool_same
expect 1 '^FAIL slow_run np=1: fails natively \(timed out after 2 s\)' slow_run
expect 1 'suite fake on .*: 7 tests, 2 passed' pass native native_unlisted known unknown no_line exact env
exit $status
