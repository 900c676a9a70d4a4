#!/usr/bin/env bash
# cfg_run.sh ENV NP PROBE AMPIO_INFO SCENARIO
#
# Tests of the configuration: precedence of the sources (AMPIO_HINTS > hints > AMPIO_*
# variables > ROMIO_HINTS file > config file > defaults), units, bad values, MPI_File_set_info and what get_info
# reports after a collective write. PROBE (cfg_probe) runs under ampio on NP ranks and checks
# get_info; AMPIO_INFO (ampio-info) must print the same values with their sources.
#
# SCENARIO: precedence | units | bad | lenient | setinfo | collective
set -u
. "$1"
np=$2
probe_prog=$3
info_prog=$4
scenario=$5
limit=${AMPIO_TEST_TIMEOUT:-60}
work=$(mktemp -d "${TMPDIR:-/tmp}/ampio-config.XXXXXX")
trap 'rm -rf "$work"' EXIT

# A clean slate: no parameter from the caller's environment, no user or system config file.
for v in $(compgen -e); do
    case $v in
    AMPIO_TEST_* | AMPIO_LIB | AMPIO_MPIEXEC) ;;
    AMPIO_*) unset "$v" ;;
    esac
done
export AMPIO_CONFIG="$work/no-such.conf" XDG_CONFIG_HOME="$work/xdg"
failures=0

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# probe WHAT [VAR=VALUE...] -- WORD...: cfg_probe with these variables set.
# split_vars VAR=VALUE... -- REST: the assignments into $vars, the rest into $rest
split_vars() {
    vars=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        vars+=("$1")
        shift
    done
    shift
    rest=("$@")
}

probe() {
    local what=$1
    shift
    local vars rest
    split_vars "$@"
    set -- "${rest[@]}"
    local dir
    dir=$(mktemp -d "$work/probe.XXXXXX")
    if ! env "${vars[@]}" timeout -k 5 "$limit" "$AMPIO_TEST_AMPIORUN" -n "$np" "$probe_prog" \
        "$dir" "$@" >"$work/probe.log" 2>&1; then
        cat "$work/probe.log" >&2
        fail "$what (${vars[*]} $*)"
    fi
    last_dir=$dir
}

# info [VAR=VALUE...] -- [KEY=VALUE...]: runs ampio-info into $work/info.out, its exit in $info_rc.
info() {
    local vars rest
    split_vars "$@"
    set -- "${rest[@]}"
    env "${vars[@]}" timeout -k 5 "$limit" "$AMPIO_TEST_MPIEXEC" -n 1 "$info_prog" "$@" \
        >"$work/info.out" 2>"$work/info.err"
    info_rc=$?
}

# shows KEY VALUE SOURCE: the last ampio-info printed this line.
shows() {
    local key=$1 value=$2 source=$3
    if ! grep -Eq "^$key +$value +$source( |$)" "$work/info.out"; then
        fail "ampio-info: expected $key = $value from $source, got: $(grep -E "^$key " "$work/info.out")"
    fi
}

precedence() {
    cat >"$work/ampio.conf" <<'EOF'
# a config file as people write them
cb_buffer_size = 2M
   romio_ds_write=disable   # spaces and a comment
ampio_fcoll = static_seg

cb_nodes = 1
ind_rd_buffer_size = 1M
EOF
    local conf="AMPIO_CONFIG=$work/ampio.conf"
    local env3=("AMPIO_CB_BUFFER_SIZE=3M" "AMPIO_FCOLL=dynamic_seg")
    local over="AMPIO_HINTS=cb_buffer_size=6M; ampio_fcoll=two_phase"

    probe "defaults" -- expect:cb_buffer_size=4194304 expect:romio_ds_write=automatic \
        expect:ampio_fcoll=auto expect:cb_nodes=0 expect:ind_rd_buffer_size=4194304
    probe "config file over defaults" "$conf" -- expect:cb_buffer_size=2097152 \
        expect:romio_ds_write=disable expect:ampio_fcoll=static_seg expect:cb_nodes=1 \
        expect:ind_rd_buffer_size=1048576 expect:romio_ds_read=automatic
    probe "environment over config file" "$conf" "${env3[@]}" -- \
        expect:cb_buffer_size=3145728 expect:ampio_fcoll=dynamic_seg \
        expect:romio_ds_write=disable expect:cb_nodes=1
    probe "hints over environment" "$conf" "${env3[@]}" -- hint:cb_buffer_size=5M \
        hint:romio_ds_write=enable expect:cb_buffer_size=5242880 expect:romio_ds_write=enable \
        expect:ampio_fcoll=dynamic_seg expect:cb_nodes=1
    probe "AMPIO_HINTS over hints" "$conf" "${env3[@]}" "$over" -- hint:cb_buffer_size=5M \
        hint:romio_ds_write=enable hint:ampio_fcoll=individual expect:cb_buffer_size=6291456 \
        expect:romio_ds_write=enable expect:ampio_fcoll=two_phase expect:cb_nodes=1
    probe "a config file that does not exist is no error" \
        "AMPIO_CONFIG=$work/missing.conf" -- expect:cb_buffer_size=4194304
    probe "the user's config file" "AMPIO_CONFIG=" "XDG_CONFIG_HOME=$work/xdg" -- \
        expect:cb_buffer_size=4194304
    mkdir -p "$work/xdg/ampio"
    cp "$work/ampio.conf" "$work/xdg/ampio/ampio.conf"
    probe "the user's config file" "AMPIO_CONFIG=" "XDG_CONFIG_HOME=$work/xdg" -- \
        expect:cb_buffer_size=2097152 expect:ampio_fcoll=static_seg

    # keys for one file system (ampio-calibrate --save): the file's file system wins over the
    # plain key, and the cycle buffer follows k
    local mnt
    mnt=$(df --output=target "$work" | tail -n 1)
    printf 'ampio_saturation_k = 1M\nampio_saturation_k@%s = 2M\nampio_saturation_k@/no/such = 8M\n' \
        "$mnt" >"$work/fs.conf"
    probe "the k of the file's file system" "AMPIO_CONFIG=$work/fs.conf" -- \
        expect:ampio_saturation_k=2097152 expect:cb_buffer_size=2097152
    probe "the environment over the file system's k" "AMPIO_CONFIG=$work/fs.conf" \
        AMPIO_SATURATION_K=3M -- expect:ampio_saturation_k=3145728
    printf 'ampio_saturation_k = 1M\nampio_saturation_k@/no/such = 8M\n' >"$work/fs2.conf"
    probe "another file system's k does not apply" "AMPIO_CONFIG=$work/fs2.conf" -- \
        expect:ampio_saturation_k=1048576 expect:cb_buffer_size=1048576

    info --
    [ "$info_rc" -eq 0 ] || fail "ampio-info exited $info_rc"
    shows cb_buffer_size 0 default
    shows ampio_fcoll auto default
    grep -q "^config file: none" "$work/info.out" || fail "ampio-info does not say no config file"
    info "$conf" --
    shows cb_buffer_size 2M "config file"
    shows romio_ds_write disable "config file"
    shows romio_ds_read automatic default
    grep -qF "config file: $work/ampio.conf" "$work/info.out" ||
        fail "ampio-info does not name the config file"
    info "$conf" "${env3[@]}" --
    shows cb_buffer_size 3M environment
    shows ampio_fcoll dynamic_seg environment
    shows cb_nodes 1 "config file"
    info "$conf" "${env3[@]}" -- cb_buffer_size=5M romio_ds_write=enable
    shows cb_buffer_size 5M hint
    shows romio_ds_write enable hint
    shows ampio_fcoll dynamic_seg environment
    info "$conf" "${env3[@]}" "$over" -- cb_buffer_size=5M romio_ds_write=enable
    shows cb_buffer_size 6M AMPIO_HINTS
    shows ampio_fcoll two_phase AMPIO_HINTS
    shows romio_ds_write enable hint
    shows cb_nodes 1 "config file"
    shows ind_rd_buffer_size 1M "config file"
}

units() {
    probe "sizes with units" -- hint:cb_buffer_size=4M hint:ind_rd_buffer_size=512K \
        hint:ind_wr_buffer_size=64KiB hint:striping_unit=1GiB expect:cb_buffer_size=4194304 \
        expect:ind_rd_buffer_size=524288 expect:ind_wr_buffer_size=65536 \
        expect:striping_unit=1073741824
    probe "more units" -- hint:cb_buffer_size=2mb hint:ind_rd_buffer_size=8192 \
        hint:ind_wr_buffer_size=3k hint:striping_unit=1T expect:cb_buffer_size=2097152 \
        expect:ind_rd_buffer_size=8192 expect:ind_wr_buffer_size=3072 \
        expect:striping_unit=1099511627776
    probe "units in the environment" AMPIO_CB_BUFFER_SIZE=1G AMPIO_IND_WR_BUFFER_SIZE=1MiB -- \
        expect:cb_buffer_size=1073741824 expect:ind_wr_buffer_size=1048576
    printf 'cb_buffer_size = 256KiB\n' >"$work/units.conf"
    probe "units in the config file" "AMPIO_CONFIG=$work/units.conf" -- \
        expect:cb_buffer_size=262144
    probe "booleans and choices in any case" -- hint:collective_buffering=no \
        hint:ampio_explain=off hint:romio_ds_write=ENABLE hint:ampio_fcoll=Two_Phase \
        expect:collective_buffering=false expect:ampio_explain=false \
        expect:romio_ds_write=enable expect:ampio_fcoll=two_phase
    probe "booleans" -- hint:collective_buffering=0 hint:ampio_explain=false \
        expect:collective_buffering=false
    # file_perm is octal and sets the mode of the file created
    probe "file_perm" -- hint:file_perm=0640 expect:file_perm=0640
    local mode
    mode=$(stat -c %a "$last_dir/probe.dat" 2>/dev/null)
    [ "$mode" = 640 ] || fail "file_perm=0640 created a file of mode $mode"
    info -- cb_buffer_size=4M ind_wr_buffer_size=64KiB
    shows cb_buffer_size 4M hint
    shows ind_wr_buffer_size 64KiB hint
}

bad() {
    local key value
    # (tests/errors/err_open.c tries many more bad hints; lenient() has the hints that are not
    # ampio's own, whose bad values are clamped or ignored)
    for kv in ampio_fcoll=best ampio_saturation_k=1k ampio_num_aggregators=1.5 \
        ampio_pipeline=perhaps; do
        key=${kv%%=*}
        probe "bad hint $kv" -- "hint:$kv" "fail:$key"
    done
    for kv in ampio_saturation_k=4X ampio_fcoll=yes ampio_ranks_per_node=-1; do
        key=${kv%%=*}
        info -- "$kv"
        [ "$info_rc" -eq 1 ] || fail "ampio-info $kv exited $info_rc, expected 1"
        grep -q "$key" "$work/info.err" || fail "ampio-info $kv: the message does not name $key"
    done
    probe "bad variable" AMPIO_CB_BUFFER_SIZE=lots -- fail:cb_buffer_size fail:environment
    probe "bad variable" AMPIO_FCOLL=best -- fail:ampio_fcoll
    probe "out of range variable" AMPIO_IND_WR_BUFFER_SIZE=0 -- fail:ind_wr_buffer_size
    info AMPIO_CB_BUFFER_SIZE=lots --
    [ "$info_rc" -eq 1 ] || fail "ampio-info with AMPIO_CB_BUFFER_SIZE=lots exited $info_rc"
    grep -q cb_buffer_size "$work/info.err" || fail "ampio-info does not name cb_buffer_size"
    printf 'romio_cb_write = perhaps\n' >"$work/bad.conf"
    probe "bad config file value" "AMPIO_CONFIG=$work/bad.conf" -- fail:romio_cb_write \
        "fail:config file"
    printf 'cb_bufer_size = 4M\n' >"$work/typo.conf"
    probe "misspelt config file key" "AMPIO_CONFIG=$work/typo.conf" -- fail:cb_bufer_size \
        "fail:config file"
    probe "a count in decimal" -- hint:cb_nodes=010 expect:cb_nodes=10
    probe "AMPIO_HINTS with an unknown key" "AMPIO_HINTS=no_such_key=1" -- fail:no_such_key
    probe "AMPIO_HINTS without =" "AMPIO_HINTS=cb_buffer_size" -- fail:cb_buffer_size
    probe "AMPIO_HINTS with a bad value" "AMPIO_HINTS=cb_nodes=1;ampio_fcoll=best" -- \
        fail:ampio_fcoll
    probe "AMPIO_HINTS with a value out of range" "AMPIO_HINTS=cb_buffer_size=1k" -- \
        fail:cb_buffer_size
    # a bad value on one rank fails the open everywhere, naming it
    if [ "$np" -gt 1 ]; then
        probe "bad hint on the last rank" -- "@$((np - 1)):hint:ampio_fcoll=abc" fail:ampio_fcoll
    fi
    probe "bad value in set_info" -- set:ampio_fcoll=xyz setfail:ampio_fcoll \
        expect:ampio_fcoll=auto
}

# Hints that are not ampio's own (the standard's, ROMIO's) with values ampio cannot use are
# clamped to ampio's range or ignored, as ROMIO and OMPIO accept them, and AMPIO_EXPLAIN says
# so; the file ROMIO_HINTS names is read as ROMIO reads it, below the environment.
lenient() {
    probe "reserved hints clamped or ignored" AMPIO_EXPLAIN=1 -- hint:cb_buffer_size=1k \
        hint:cb_nodes=two hint:ind_wr_buffer_size=8 hint:romio_ds_write=maybe \
        hint:striping_unit=-1 expect:cb_buffer_size=4096 expect:cb_nodes=0 \
        expect:ind_wr_buffer_size=8 expect:romio_ds_write=automatic \
        "expect:ampio_layout=block size 4096x1"
    for note in "hint cb_buffer_size=1k is out of ampio's range \\[4096, [0-9]*\\]: 4096 used" \
        "hint cb_nodes=two ignored: expected an integer" "hint romio_ds_write=maybe ignored"; do
        grep -q "^ampio explain: hints of .*$note" "$work/probe.log" ||
            fail "AMPIO_EXPLAIN does not say: $note"
    done
    probe "a clamped hint in set_info" -- set:cb_buffer_size=100 expect:cb_buffer_size=4096
    info -- cb_buffer_size=4X
    [ "$info_rc" -eq 0 ] || fail "ampio-info cb_buffer_size=4X exited $info_rc, expected 0"
    grep -q "cb_buffer_size=4X ignored" "$work/info.out" ||
        fail "ampio-info does not say that cb_buffer_size=4X is ignored"

    local hints="$work/romio.hints"
    printf '%s\n' "# ROMIO's format" "ind_rd_buffer_size 49" "ind_rd_buffer_size 60" \
        "romio_no_indep_rw true" "cb_buffer_size 2M" "romio_cb_write disable" \
        "some_romio_only_hint 3" "a line of three words" "cb_nodes two" \
        "ind_wr_buffer_size 2T" >"$hints"
    probe "the ROMIO_HINTS file" "ROMIO_HINTS=$hints" -- expect:ind_rd_buffer_size=49 \
        expect:romio_no_indep_rw=true expect:cb_buffer_size=2097152 \
        expect:romio_cb_write=disable expect:cb_nodes=0 expect:ind_wr_buffer_size=1099511627776
    probe "hints over ROMIO_HINTS" "ROMIO_HINTS=$hints" -- hint:cb_buffer_size=1M \
        hint:romio_cb_write=enable expect:cb_buffer_size=1048576 expect:romio_cb_write=enable
    printf 'cb_buffer_size = 5M\nromio_ds_read = disable\n' >"$work/below.conf"
    probe "ROMIO_HINTS between environment and config file" "ROMIO_HINTS=$hints" \
        "AMPIO_CONFIG=$work/below.conf" AMPIO_ROMIO_CB_WRITE=enable -- \
        expect:cb_buffer_size=2097152 expect:romio_ds_read=disable expect:romio_cb_write=enable
    info "ROMIO_HINTS=$hints" --
    shows cb_buffer_size 2M ROMIO_HINTS
    shows ind_rd_buffer_size 49 ROMIO_HINTS
    probe "a ROMIO_HINTS file that does not exist is no error" \
        "ROMIO_HINTS=$work/no-such.hints" -- expect:cb_buffer_size=4194304
}

setinfo() {
    probe "set_info changes a value" -- hint:cb_buffer_size=1M set:cb_buffer_size=2M \
        expect:cb_buffer_size=2097152
    probe "set_info changes a choice" -- set:romio_ds_write=disable set:ampio_fcoll=two_phase \
        expect:romio_ds_write=disable expect:ampio_fcoll=two_phase
    probe "set_info keeps what it does not name" -- hint:cb_buffer_size=1M \
        set:romio_ds_write=enable expect:cb_buffer_size=1048576 expect:romio_ds_write=enable
    probe "AMPIO_HINTS wins over set_info" "AMPIO_HINTS=cb_buffer_size=6M" -- \
        set:cb_buffer_size=2M expect:cb_buffer_size=6291456
    probe "set_info over the environment" AMPIO_CB_BUFFER_SIZE=3M -- set:cb_buffer_size=2M \
        expect:cb_buffer_size=2097152
    probe "set_info with foreign hints" -- set:some_other_library=on \
        expect:cb_buffer_size=4194304 absent:some_other_library
    probe "set_info then a collective write" -- set:ampio_fcoll=static_seg write \
        expect:ampio_fcoll=static_seg
}

collective() {
    local n=$((np < 2 ? np : 2))
    probe "nothing written yet" -- absent:ampio_aggregators expect:cb_nodes=0
    # segmentation serves groups whose data do not interleave: one block per rank
    for alg in two_phase dynamic_seg static_seg; do
        probe "write with $alg on $n aggregators" -- hint:ampio_fcoll=$alg hint:cb_nodes=$n \
            write-blocks expect:ampio_fcoll=$alg expect:cb_nodes=$n items:ampio_aggregators=$n
    done
    probe "interleaved write with two_phase on $n aggregators" -- hint:ampio_fcoll=two_phase \
        hint:cb_nodes=$n write expect:ampio_fcoll=two_phase expect:cb_nodes=$n \
        items:ampio_aggregators=$n
    probe "ampio_num_aggregators" -- hint:ampio_fcoll=two_phase hint:ampio_num_aggregators=1 \
        write expect:cb_nodes=1 items:ampio_aggregators=1
    probe "cb_nodes from the environment" AMPIO_CB_NODES=1 AMPIO_FCOLL=two_phase -- write \
        expect:cb_nodes=1 items:ampio_aggregators=1 expect:ampio_fcoll=two_phase
    probe "individual" -- hint:ampio_fcoll=individual write expect:ampio_fcoll=individual
    probe "automatic choice" -- write present:ampio_aggregators present:ampio_fcoll present:cb_nodes
    # requests at least big_req_size on average skip aggregation, smaller ones do not
    probe "big requests" -- hint:ampio_fcoll=two_phase hint:big_req_size=1 write \
        expect:ampio_fcoll=individual
    probe "small requests" -- hint:ampio_fcoll=two_phase hint:big_req_size=1G write \
        expect:ampio_fcoll=two_phase
    # stripe-contiguous domains with a layout by hints; get_info tells the layout in use
    probe "stripe domains" -- hint:ampio_fcoll=stripe hint:striping_unit=4096 \
        hint:striping_factor=3 write expect:ampio_fcoll=stripe expect:striping_unit=4096 \
        expect:striping_factor=3 "expect:ampio_layout=hints 4096x3"
}

case "$scenario" in
precedence | units | bad | lenient | setinfo | collective) "$scenario" ;;
*)
    echo "cfg_run.sh: unknown scenario $scenario" >&2
    exit 2
    ;;
esac
if [ $failures -gt 0 ]; then
    echo "cfg_run.sh $scenario on $np ranks: $failures failure(s)" >&2
    exit 1
fi
exit 0
