#!/usr/bin/env bash
# ampio-calibrate ends with "k = <bytes>", a multiple of the unit, saves it to the per-user
# config file, and ampio then takes k from there (ampio-info shows the value and its source).
set -u
calibrate=$1 info=$2 env=$3
. "$env"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$(HOME=$work "$calibrate" --dir "$work" --max-size 1M --reps 1 --procs 2 --unit 64K --save)
echo "$out"
k=$(echo "$out" | tail -n 1 | sed -n 's/^k = \([0-9][0-9]*\)$/\1/p')
[ -n "$k" ] || { echo "FAIL: the last line is not 'k = <bytes>'"; exit 1; }
[ $((k % 65536)) -eq 0 ] && [ "$k" -ge 65536 ] || { echo "FAIL: k=$k is not a multiple of 64K"; exit 1; }
grep -qx "ampio_saturation_k = $k" "$work/.config/ampio/ampio.conf" || { echo "FAIL: k not saved"; exit 1; }
ls "$work" | grep -q ampio-calibrate && { echo "FAIL: scratch files left behind"; exit 1; }
line=$(HOME=$work "$AMPIO_TEST_MPIEXEC" -n 1 "$info" | grep '^ampio_saturation_k')
echo "$line"
echo "$line" | grep -q "config file" || { echo "FAIL: ampio does not read k from the config file"; exit 1; }
"$calibrate" --max-size 12 >/dev/null 2>&1 && { echo "FAIL: a bad size was accepted"; exit 1; }
echo PASS
