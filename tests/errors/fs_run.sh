#!/usr/bin/env bash
# fs_run.sh ENV NP PROGRAM full|readonly
#
# Runs PROGRAM under ampio on a small tmpfs mounted for the run (root only; exit 77, a skipped
# test, when it cannot be mounted) and always unmounts it.
#   full      a 1 MiB file system: PROGRAM DIR full
#   readonly  PROGRAM DIR ro-prepare on a writable file system, which is then remounted
#             read-only for PROGRAM DIR ro-check
set -u
. "$1"
np=$2
prog=$3
mode=$4
limit=${AMPIO_TEST_TIMEOUT:-60}
mnt=$(mktemp -d "${TMPDIR:-/tmp}/ampio-fs.XXXXXX")
cleanup() {
    if mountpoint -q "$mnt"; then
        umount "$mnt" 2>/dev/null || umount -l "$mnt"
    fi
    rmdir "$mnt"
}
trap cleanup EXIT
if ! mount -t tmpfs -o size=1m,mode=0755 ampio-test "$mnt" 2>/dev/null; then
    echo "SKIP: cannot mount a tmpfs (needs root)"
    exit 77
fi
run() {
    timeout -k 10 "$limit" "$AMPIO_TEST_AMPIORUN" -n "$np" "$prog" "$mnt" "$@"
    local rc=$?
    if [ $rc -ne 0 ]; then
        echo "fs_run.sh: $(basename "$prog") $* on $np ranks failed (exit $rc)" >&2
        exit 1
    fi
}
case "$mode" in
full) run full ;;
readonly)
    run ro-prepare
    mount -o remount,ro "$mnt" || { echo "SKIP: cannot remount read-only"; exit 77; }
    run ro-check
    ;;
*)
    echo "fs_run.sh: unknown mode $mode" >&2
    exit 2
    ;;
esac
