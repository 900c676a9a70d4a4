#!/usr/bin/env bash
# ampio-calibrate ends with "k = <bytes>", a multiple of the unit, and saves it to the per-user
# config file keyed by the file system it measured (ampio_saturation_k@<mount point>): a second
# file system gets a key of its own, and a file takes the k of its file system (ampio-info shows
# the value and its source).
set -u
calibrate=$1 info=$2 env=$3
. "$env"
work=$(mktemp -d)
trap 'rm -rf "$work" "${shm:-}"' EXIT
conf=$work/.config/ampio/ampio.conf
mount_of() { df --output=target "$1" | tail -n 1; }
out=$(HOME=$work "$calibrate" --dir "$work" --max-size 1M --reps 1 --procs 2 --unit 64K --save)
echo "$out"
k=$(echo "$out" | tail -n 1 | sed -n 's/^k = \([0-9][0-9]*\)$/\1/p')
[ -n "$k" ] || { echo "FAIL: the last line is not 'k = <bytes>'"; exit 1; }
[ $((k % 65536)) -eq 0 ] && [ "$k" -ge 65536 ] || { echo "FAIL: k=$k is not a multiple of 64K"; exit 1; }
here=$(mount_of "$work")
grep -qxF "ampio_saturation_k@$here = $k" "$conf" || { echo "FAIL: k not saved for $here"; cat "$conf"; exit 1; }
ls "$work" | grep -q ampio-calibrate && { echo "FAIL: scratch files left behind"; exit 1; }
line=$(HOME=$work "$AMPIO_TEST_MPIEXEC" -n 1 "$info" --file "$work/data" | grep '^ampio_saturation_k')
echo "$line"
echo "$line" | grep -Eq "^ampio_saturation_k +$k +config \(fs\)" ||
    { echo "FAIL: ampio does not take k of $here from the config file"; exit 1; }

# a second file system (/dev/shm where it is a mount of its own) keeps its own k
shm=$(mktemp -d /dev/shm/ampio-calibrate.XXXXXX 2>/dev/null)
if [ -n "$shm" ] && [ "$(mount_of "$shm")" != "$here" ]; then
    other=$(mount_of "$shm")
    out2=$(HOME=$work "$calibrate" --dir "$shm" --max-size 256K --reps 1 --procs 1 --unit 128K --save)
    k2=$(echo "$out2" | tail -n 1 | sed -n 's/^k = \([0-9][0-9]*\)$/\1/p')
    grep -qxF "ampio_saturation_k@$other = $k2" "$conf" || { echo "FAIL: k of $other not saved"; exit 1; }
    grep -qxF "ampio_saturation_k@$here = $k" "$conf" || { echo "FAIL: k of $here overwritten"; exit 1; }
    HOME=$work "$AMPIO_TEST_MPIEXEC" -n 1 "$info" --file "$shm/data" | grep -Eq "^ampio_saturation_k +$k2 +config \(fs\)" ||
        { echo "FAIL: a file on $other does not take its k"; exit 1; }
    # measuring the first again replaces its key only
    HOME=$work "$calibrate" --dir "$work" --max-size 128K --reps 1 --procs 1 --unit 128K --save >/dev/null
    [ "$(grep -c "^ampio_saturation_k@$here " "$conf")" = 1 ] || { echo "FAIL: $here saved twice"; exit 1; }
    grep -qxF "ampio_saturation_k@$other = $k2" "$conf" || { echo "FAIL: k of $other lost"; exit 1; }
else
    echo "NOTE: /dev/shm is not a file system of its own here: second file system not checked"
fi
# a file system without a key of its own takes the built-in k (or a key without @)
HOME=$work "$AMPIO_TEST_MPIEXEC" -n 1 "$info" --file /proc/version | grep -Eq "^ampio_saturation_k +4M +default" ||
    { echo "FAIL: a file system without a key does not take the default k"; exit 1; }
"$calibrate" --max-size 12 >/dev/null 2>&1 && { echo "FAIL: a bad size was accepted"; exit 1; }
# a link planted where the scratch file would go (the name once derived from the process id,
# which the shell's $$ becomes through exec) is never followed: its target keeps its bytes
echo keep >"$work/victim"
bash -c 'ln -s "$1" "$2/.ampio-calibrate.$$.0" && exec "$3" --dir "$2" --max-size 128K --reps 1 --procs 1 --unit 128K' \
    _ "$work/victim" "$work" "$calibrate" >/dev/null || { echo "FAIL: calibrating beside a link"; exit 1; }
[ "$(cat "$work/victim")" = keep ] || { echo "FAIL: a planted link's target was truncated"; exit 1; }
echo PASS
