#!/usr/bin/env bash
# cluster.sh: a cluster on one machine. Compute nodes and storage nodes are network namespaces,
# each with its own hostname (UTS), mount and IPC namespace, linked by veth pairs to a bridge in a
# namespace of its own, every link rate-limited in both directions (TBF). The storage nodes run a
# CephFS (one monitor, manager and metadata server, one in-memory OSD per node, pools of one
# copy), mounted with ceph-fuse at the same path in every compute node. Needs root.
#
#   cluster.sh up [--compute N] [--storage N] [--rate MB/s|none] [--osd-mem SIZE]
#                                  make the cluster (idempotent; clears a crashed run first)
#   cluster.sh down                remove it: no process, mount or namespace stays behind
#   cluster.sh status [-q]         what is up, daemons' memory, health; -q: exit code only
#   cluster.sh exec NODE CMD...    run CMD inside a node (c1..cN, s1..sM), in the current dir
#   cluster.sh mpiexec FAMILY [--nodes K] ARGS...
#                                  mpiexec of FAMILY (openmpi, mpich) launched from c1 over the
#                                  first K compute nodes (default all), ranks in blocks per node
#   cluster.sh run [--family F] [--nodes K] ARGS...   the same, Open MPI by default
#   cluster.sh with [up options] [--] CMD...
#                                  up, run CMD on the host, down, holding the cluster's lock
#   cluster.sh ceph ARGS...        the ceph command, run on s1
#   cluster.sh fail-client NODE    a fault: kills the node's ceph-fuse (SIGKILL) and evicts it
#   cluster.sh remount             mounts the file system again where its client is gone
#   cluster.sh can                 says whether this machine can run the cluster (exit 0) or why not
#
# The file system is mounted at $AMPIO_CLUSTER_MNT (/mnt/ampio-cephfs) in the compute nodes only.
# up, down and with hold /run/ampio-cluster.lock, so that they never interleave (with: for the
# whole command). Compute node ci has address 10.77.0.(10+i), storage node si 10.77.0.(100+i),
# on 10.77.0.0/24, which exists only inside the namespaces made here.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
state=${AMPIO_CLUSTER_STATE:-/run/ampio-cluster}
lockfile=${AMPIO_CLUSTER_LOCK:-/run/ampio-cluster.lock}
mnt=${AMPIO_CLUSTER_MNT:-/mnt/ampio-cephfs}
prefix=ampio-
subnet=10.77.0
netmask=24
ceph_conf=$state/ceph/ceph.conf

die() {
    echo "cluster.sh: $*" >&2
    exit 1
}
note() { echo "cluster.sh: $*" >&2; }

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

# --- what the machine must offer ------------------------------------------------------------

ceph_packages="ceph-mon ceph-mgr ceph-osd ceph-mds ceph-fuse"

# Prints why the cluster cannot run here and fails; silent success when it can.
can_run() {
    [ "$(id -u)" -eq 0 ] || {
        echo "needs root (network, mount and UTS namespaces)"
        return 1
    }
    local t
    for t in ip tc nsenter unshare setsid timeout; do
        command -v "$t" >/dev/null || {
            echo "$t is missing"
            return 1
        }
    done
    for t in ceph-mon ceph-mgr ceph-osd ceph-mds ceph-fuse ceph monmaptool; do
        command -v "$t" >/dev/null || {
            echo "$t is missing (apt-get install $ceph_packages)"
            return 1
        }
    done
    [ -c /dev/fuse ] || {
        echo "/dev/fuse is missing (FUSE)"
        return 1
    }
    local probe="${prefix}probe-$$"
    if ! ip netns add "$probe" 2>/dev/null; then
        echo "cannot create network namespaces"
        return 1
    fi
    local ok=1
    ip -n "$probe" link add probe0 type veth peer name probe1 2>/dev/null || ok=0
    [ $ok -eq 1 ] && { tc -n "$probe" qdisc add dev probe0 root tbf rate 1gbit burst 64k \
        latency 10ms 2>/dev/null || ok=2; }
    [ $ok -ne 0 ] && { nsenter --net="/run/netns/$probe" unshare --uts --mount --ipc true \
        2>/dev/null || ok=3; }
    ip netns del "$probe" 2>/dev/null || true
    case $ok in
    0) echo "cannot create veth pairs" ;;
    2) echo "cannot add a TBF qdisc (sch_tbf)" ;;
    3) echo "cannot create UTS, mount and IPC namespaces" ;;
    esac
    [ $ok -eq 1 ]
}

# --- locking ---------------------------------------------------------------------------------

# Takes the cluster's lock for the rest of this process unless a parent holds it already.
take_lock() {
    [ -n "${AMPIO_CLUSTER_LOCKED:-}" ] && return 0
    exec 9>"$lockfile"
    if ! flock -n 9; then
        note "waiting for $lockfile (another up, down or with is running)"
        flock 9
    fi
    export AMPIO_CLUSTER_LOCKED=$$
}

# --- nodes -----------------------------------------------------------------------------------

load_config() {
    [ -r "$state/config" ] || die "no cluster is up (cluster.sh up)"
    # shellcheck source=/dev/null
    . "$state/config"
}

compute_nodes() {
    local i
    for ((i = 1; i <= ncompute; i++)); do echo "c$i"; done
}
storage_nodes() {
    local i
    for ((i = 1; i <= nstorage; i++)); do echo "s$i"; done
}
node_addr() {
    case $1 in
    c*) echo "$subnet.$((10 + ${1#c}))" ;;
    s*) echo "$subnet.$((100 + ${1#s}))" ;;
    *) die "no node $1" ;;
    esac
}

# A node lives as long as its holder process, which keeps its UTS, mount and IPC namespaces;
# entering a node enters the holder's namespaces, which works from the host and from any node.
holder_pid() {
    local pid
    pid=$(cat "$state/nodes/$1.pid" 2>/dev/null) || return 1
    [ -n "$pid" ] && [ -e "/proc/$pid/ns/uts" ] || return 1
    # the pid is the holder's only while its hostname is the node's
    [ "$(nsenter -t "$pid" -u hostname 2>/dev/null)" = "$1" ] || return 1
    echo "$pid"
}

# Runs a command inside a node, in the current directory.
node_exec() {
    local node=$1 pid
    shift
    pid=$(holder_pid "$node") || die "node $node is not up"
    nsenter -t "$pid" -n -u -m -i --wd="$PWD" -- "$@"
}

# The same in place of this shell, so that signals reach the command (timeout, ^C).
node_replace() {
    local node=$1 pid
    shift
    pid=$(holder_pid "$node") || die "node $node is not up"
    exec nsenter -t "$pid" -n -u -m -i --wd="$PWD" -- "$@"
}

# Makes one node: its namespaces, its link to the bridge (rate-limited both ways), its hosts
# file and a private /dev/shm and /sys.
make_node() {
    local node=$1 addr
    addr=$(node_addr "$node")
    ip netns add "$prefix$node"
    ip -n "${prefix}br" link add "v-$node" type veth peer name eth0 netns "$prefix$node"
    ip -n "${prefix}br" link set "v-$node" master br0
    ip -n "${prefix}br" link set "v-$node" up
    ip -n "$prefix$node" addr add "$addr/$netmask" dev eth0
    ip -n "$prefix$node" link set eth0 up
    ip -n "$prefix$node" link set lo up
    if [ "$rate" != none ]; then
        local r=$((rate * 8))mbit
        # TBF segments GSO packets bigger than the bucket; 512 KiB keeps a burst under 4 ms
        tc -n "$prefix$node" qdisc add dev eth0 root tbf rate "$r" burst 512k latency 50ms
        tc -n "${prefix}br" qdisc add dev "v-$node" root tbf rate "$r" burst 512k latency 50ms
    fi
    rm -f "$state/nodes/$node.pid"
    local mountpoint=""
    [ "${node#c}" != "$node" ] && mountpoint=$mnt
    (
        close_fds
        setsid nsenter --net="/run/netns/$prefix$node" unshare --uts --mount --ipc --fork \
            --propagation private sh -c '
                set -e
                hostname "$1"
                mount --bind "$2" /etc/hosts
                mount -t tmpfs -o mode=1777 tmpfs /dev/shm
                mount -t sysfs sysfs /sys
                [ -z "$3" ] || mkdir -p "$3"
                echo $$ >"$4.tmp"
                mv "$4.tmp" "$4"
                exec sleep infinity' holder "$node" "$state/hosts" "$mountpoint" \
            "$state/nodes/$node.pid" </dev/null >/dev/null 2>"$state/nodes/$node.err" &
    )
    local i
    for ((i = 0; i < 100; i++)); do
        holder_pid "$node" >/dev/null && return 0
        sleep 0.1
    done
    die "node $node did not start: $(cat "$state/nodes/$node.err" 2>/dev/null)"
}

make_network() {
    ip netns add "${prefix}br"
    ip -n "${prefix}br" link add br0 type bridge
    ip -n "${prefix}br" link set br0 up
    ip -n "${prefix}br" link set lo up
    {
        echo "127.0.0.1 localhost"
        local n
        for n in $(compute_nodes) $(storage_nodes); do echo "$(node_addr "$n") $n"; done
    } >"$state/hosts"
    local n
    for n in $(compute_nodes) $(storage_nodes); do make_node "$n"; done
}

# --- CephFS ----------------------------------------------------------------------------------

ceph_cmd() {
    node_exec s1 timeout 60 ceph -c "$ceph_conf" --connect-timeout 30 "$@"
}

write_ceph_conf() {
    local c=$state/ceph
    mkdir -p "$c/log" "$c/run" "$c/data"
    cat >"$ceph_conf" <<EOF
[global]
fsid = $fsid
mon_host = $(node_addr s1)
public_network = $subnet.0/$netmask
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
ms_bind_ipv6 = false
run_dir = $c/run
admin_socket = $c/run/\$name.asok
pid_file = $c/run/\$name.pid
log_file = $c/log/\$name.log
crash_dir = $c/crash
keyring = $c/keyring
osd_objectstore = memstore
memstore_device_bytes = $osd_mem
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_autoscale_mode = off
mon_allow_pool_size_one = true
mon_warn_on_pool_no_redundancy = false
mon_max_pg_per_osd = 500
# a loaded machine of two cores: slow heartbeats are not failures
osd_heartbeat_grace = 60
mon_osd_report_timeout = 300
mds_beacon_grace = 120
mon_data_avail_warn = 5
mon_warn_on_insecure_global_id_reclaim_allowed = false
mon_data = $c/data/mon.\$id
mgr_data = $c/data/mgr.\$id
osd_data = $c/data/osd.\$id
mds_data = $c/data/mds.\$id
mgr_initial_modules =
[mds]
mds_cache_memory_limit = 268435456
[client]
# one client per compute node: files named after the node
admin_socket = $c/run/\$name.\$host.asok
pid_file = $c/run/\$name.\$host.pid
log_file = $c/log/\$name.\$host.log
client_oc_size = 134217728
client_oc_max_dirty = 67108864
client_mount_timeout = 60
EOF
    : >"$c/keyring"
}

# Waits until `ceph ARGS` prints something matching PATTERN.
ceph_wait() {
    local what=$1 pattern=$2 limit=$3
    shift 3
    local i out=""
    for ((i = 0; i < limit; i++)); do
        out=$(ceph_cmd "$@" 2>&1) || true
        if grep -Eq "$pattern" <<<"$out"; then return 0; fi
        sleep 1
    done
    note "timed out waiting for $what; last answer:"
    echo "$out" >&2
    return 1
}

# Runs a ceph command quietly; its output is shown when it fails.
ceph_quiet() {
    local out
    out=$(ceph_cmd "$@" 2>&1) || {
        note "ceph $* failed: $out"
        return 1
    }
}

# Starts a long-lived process in a node: without the caller's open files (a lock the caller
# holds must not outlive it), its output in the daemon's log.
node_daemon() {
    local node=$1 log=$2
    shift 2
    (
        close_fds
        node_exec "$node" "$@" </dev/null >>"$log" 2>&1
    )
}

close_fds() {
    local p fd
    for p in /proc/$BASHPID/fd/*; do
        fd=${p##*/}
        [ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-"
    done
    return 0
}

make_ceph() {
    local c=$state/ceph t0=$SECONDS
    fsid=$(cat /proc/sys/kernel/random/uuid)
    write_ceph_conf
    monmaptool --create --fsid "$fsid" --addv s1 "[v2:$(node_addr s1):3300,v1:$(node_addr s1):6789]" \
        "$c/monmap" >/dev/null
    # the monitor looks for an address of the public network: make it inside s1
    node_exec s1 ceph-mon -c "$ceph_conf" --mkfs -i s1 --monmap "$c/monmap" \
        >"$c/log/mkfs.mon.log" 2>&1 || die "ceph-mon --mkfs failed: $(tail -3 "$c/log/mkfs.mon.log")"
    node_daemon s1 "$c/log/start.log" ceph-mon -c "$ceph_conf" -i s1
    ceph_wait "the monitor" 'HEALTH' 60 health >/dev/null
    mkdir -p "$c/data/mgr.s1" "$c/data/mds.s1"
    node_daemon s1 "$c/log/start.log" ceph-mgr -c "$ceph_conf" -i s1
    local s uuid id
    for s in $(storage_nodes); do
        uuid=$(cat /proc/sys/kernel/random/uuid)
        id=$(ceph_cmd osd new "$uuid")
        mkdir -p "$c/data/osd.$id"
        node_exec "$s" ceph-osd -c "$ceph_conf" -i "$id" --mkfs --osd-uuid "$uuid" \
            >"$c/log/mkfs.osd.$id.log" 2>&1 || die "ceph-osd --mkfs failed: $(tail -3 "$c/log/mkfs.osd.$id.log")"
        node_daemon "$s" "$c/log/start.log" ceph-osd -c "$ceph_conf" -i "$id"
    done
    ceph_wait "$nstorage OSDs up" "\"num_up_osds\": ?$nstorage," 120 osd stat -f json
    node_daemon s1 "$c/log/start.log" ceph-mds -c "$ceph_conf" -i s1
    ceph_quiet osd pool create cephfs_metadata 16
    ceph_quiet osd pool create cephfs_data 64
    ceph_quiet fs new cephfs cephfs_metadata cephfs_data
    # on a loaded machine a client can go without a core for a minute: it must not be evicted
    ceph_quiet fs set cephfs session_timeout 300
    ceph_quiet fs set cephfs session_autoclose 600
    ceph_wait "the metadata server" 'up:active' 120 mds stat
    ceph_wait "placement groups active" '^([0-9]+) pgs: \1 active\+clean' 120 pg stat
    note "CephFS up in $((SECONDS - t0)) s"
}

mount_cephfs() {
    local n i
    for n in "$@"; do
        node_daemon "$n" "$state/ceph/log/mount.$n.log" ceph-fuse -c "$ceph_conf" --id admin "$mnt" ||
            die "ceph-fuse on $n failed: $(tail -3 "$state/ceph/log/mount.$n.log")"
    done
    for n in "$@"; do
        for ((i = 0; i < 60; i++)); do
            node_exec "$n" mountpoint -q "$mnt" && break
            sleep 1
        done
        node_exec "$n" mountpoint -q "$mnt" || die "CephFS is not mounted on $n"
    done
}

# A node's file system client dies (SIGKILL), as a fault to test: its mount answers ENOTCONN,
# and the metadata server evicts its session, so that the other clients need not wait for the
# session to time out before they get the capabilities it held.
cmd_fail_client() {
    local node=$1 pid id
    load_config
    pid=$(cat "$state/ceph/run/client.admin.$node.pid" 2>/dev/null) || die "no client on $node"
    id=$(ceph_cmd tell mds.s1 client ls 2>/dev/null |
        python3 -c 'import json, sys
for s in json.load(sys.stdin):
    if s.get("client_metadata", {}).get("hostname") == sys.argv[1]: print(s["id"])' "$node") || true
    kill -KILL "$pid" 2>/dev/null || die "the client of $node (pid $pid) is not running"
    note "killed the file system client of $node (pid $pid)"
    if [ -n "$id" ]; then
        ceph_quiet tell mds.s1 client evict "id=$id" && note "evicted its session ($id)"
    fi
}

# Mounts the file system again in the compute nodes whose client is gone.
cmd_remount() {
    load_config
    local n dead=()
    for n in $(compute_nodes); do
        if ! node_exec "$n" timeout 10 stat -f -c %T "$mnt" 2>/dev/null | grep -q fuse; then
            node_exec "$n" umount -l "$mnt" 2>/dev/null || true
            dead+=("$n")
        fi
    done
    [ ${#dead[@]} -gt 0 ] || return 0
    mount_cephfs "${dead[@]}"
    note "mounted again on ${dead[*]}"
}

# --- up, down, status ------------------------------------------------------------------------

# Processes inside any namespace of ours, found by network namespace.
our_pids() {
    local ns
    for ns in /run/netns/"$prefix"*; do
        [ -e "$ns" ] || continue
        ip netns pids "$(basename "$ns")" 2>/dev/null || true
    done
}

kill_all() {
    local sig=$1 pids
    pids=$(our_pids | sort -u)
    [ -n "$pids" ] || return 0
    # shellcheck disable=SC2086
    kill "-$sig" $pids 2>/dev/null || true
}

teardown() {
    local t0=$SECONDS ns pid
    # unmount the file system in every compute node first, so that no client blocks on it;
    # any process of the node (its holder may be gone) shows its mount namespace
    for ns in /run/netns/"${prefix}"c*; do
        [ -e "$ns" ] || continue
        pid=$(ip netns pids "$(basename "$ns")" 2>/dev/null | head -1)
        [ -n "$pid" ] && nsenter -t "$pid" -m umount -l "$mnt" 2>/dev/null || true
    done
    # nothing of the cluster needs to end cleanly: the object stores are in memory
    local i
    for ((i = 0; i < 100; i++)); do
        [ -z "$(our_pids)" ] && break
        kill_all KILL
        sleep 0.1
    done
    [ -z "$(our_pids)" ] || note "processes left: $(our_pids | tr '\n' ' ')"
    for ns in /run/netns/"$prefix"*; do
        [ -e "$ns" ] || continue
        ip netns del "$(basename "$ns")" 2>/dev/null || note "cannot delete $ns"
    done
    rm -rf "$state"
    rmdir "$mnt" 2>/dev/null || true
    [ $((SECONDS - t0)) -lt 1 ] || note "down in $((SECONDS - t0)) s"
}

leftovers() {
    [ -e "$state" ] || compgen -G "/run/netns/$prefix*" >/dev/null
}

# 0 when every node, daemon and mount is up; prints a line per problem unless quiet.
check() {
    local quiet=$1 bad=0 n pid
    [ -e "$state/up" ] || {
        [ "$quiet" = 1 ] || echo "not up"
        return 1
    }
    load_config
    for n in $(compute_nodes) $(storage_nodes); do
        if ! pid=$(holder_pid "$n"); then
            [ "$quiet" = 1 ] || echo "node $n: down"
            bad=1
        fi
    done
    [ $bad -eq 0 ] || return 1
    for n in $(compute_nodes); do
        if ! node_exec "$n" timeout 10 stat -f -c %T "$mnt" 2>/dev/null | grep -q fuse; then
            [ "$quiet" = 1 ] || echo "node $n: CephFS not mounted at $mnt"
            bad=1
        fi
    done
    local d
    for d in mon.s1 mgr.s1 mds.s1 $(cd "$state/ceph/run" && ls osd.*.pid 2>/dev/null | sed 's/\.pid$//'); do
        pid=$(cat "$state/ceph/run/$d.pid" 2>/dev/null) || pid=""
        if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
            [ "$quiet" = 1 ] || echo "daemon $d: not running"
            bad=1
        fi
    done
    return $bad
}

cmd_status() {
    local quiet=0
    [ "${1:-}" = -q ] && quiet=1
    if ! check "$quiet"; then
        return 1
    fi
    [ "$quiet" = 1 ] && return 0
    echo "cluster up since $(cat "$state/up"): $ncompute compute nodes ($(compute_nodes | tr '\n' ' ')), $nstorage storage nodes ($(storage_nodes | tr '\n' ' '))"
    echo "links: $([ "$rate" = none ] && echo "no rate limit" || echo "TBF $rate MB/s each way")"
    echo "CephFS at $mnt in every compute node; OSDs of $((osd_mem >> 20)) MiB (memstore)"
    echo "resident memory (MiB):"
    local p
    for p in $(our_pids | sort -un); do
        local comm rss
        comm=$(cat "/proc/$p/comm" 2>/dev/null) || continue
        case $comm in ceph-* | ceph_*) ;; *) continue ;; esac
        rss=$(awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$p/status" 2>/dev/null)
        printf '  %-12s %-6s %5s\n' "$comm" "$(nsenter -t "$p" -u hostname 2>/dev/null)" "$rss"
    done
    ceph_cmd health 2>&1 | sed 's/^/health: /'
}

parse_size() {
    local v=$1 n unit
    n=${v%%[!0-9]*}
    unit=${v#"$n"}
    [ -n "$n" ] || die "bad size $v"
    case ${unit^^} in
    "" | B) echo "$n" ;;
    K | KB | KIB) echo $((n << 10)) ;;
    M | MB | MIB) echo $((n << 20)) ;;
    G | GB | GIB) echo $((n << 30)) ;;
    *) die "bad size $v" ;;
    esac
}

cmd_up() {
    local want_compute=4 want_storage=3 want_rate=150 want_osd_mem=1G
    while [ $# -gt 0 ]; do
        case $1 in
        --compute) want_compute=$2; shift 2 ;;
        --storage) want_storage=$2; shift 2 ;;
        --rate) want_rate=$2; shift 2 ;;
        --osd-mem) want_osd_mem=$2; shift 2 ;;
        *) die "up: unknown option $1" ;;
        esac
    done
    want_rate=${want_rate%MB/s}
    want_rate=${want_rate%MB}
    [[ $want_compute =~ ^[1-9][0-9]?$ && $want_compute -le 80 ]] || die "--compute: 1 to 80"
    [[ $want_storage =~ ^[1-9]$ ]] || die "--storage: 1 to 9"
    [[ $want_rate = none || $want_rate =~ ^[1-9][0-9]*$ ]] || die "--rate: MB/s or none"
    want_osd_mem=$(parse_size "$want_osd_mem")
    local why
    why=$(can_run) || die "this machine cannot run the cluster: $why"
    take_lock
    if [ -e "$state/up" ] && check 1; then
        load_config
        if [ "$ncompute" = "$want_compute" ] && [ "$nstorage" = "$want_storage" ] &&
            [ "$rate" = "$want_rate" ] && [ "$osd_mem" = "$want_osd_mem" ]; then
            note "already up"
            return 0
        fi
        note "up with another shape: making it again"
    fi
    if leftovers; then
        note "clearing what an earlier run left"
        teardown
    fi
    local t0=$SECONDS
    ncompute=$want_compute nstorage=$want_storage rate=$want_rate osd_mem=$want_osd_mem
    mkdir -p "$state/nodes"
    # whatever stops it (an error, a signal) clears what it made
    trap 'note "up failed: clearing"; teardown' EXIT
    cat >"$state/config" <<EOF
ncompute=$ncompute
nstorage=$nstorage
rate=$rate
osd_mem=$osd_mem
EOF
    make_network
    make_ceph
    # shellcheck disable=SC2046
    mount_cephfs $(compute_nodes)
    trap - EXIT
    date '+%F %T' >"$state/up"
    note "up in $((SECONDS - t0)) s: $ncompute compute nodes, $nstorage storage nodes, CephFS at $mnt"
}

cmd_down() {
    take_lock
    if leftovers; then teardown; fi
    return 0
}

# --- MPI across the nodes --------------------------------------------------------------------

# mpiexec of a family inside c1, over the first K compute nodes, ranks in blocks of
# ceil(n / K) per node.
cmd_mpiexec() {
    local family=$1
    shift
    load_config
    local nodes=$ncompute
    if [ "${1:-}" = --nodes ]; then
        nodes=$2
        shift 2
    fi
    nodes=${AMPIO_CLUSTER_NODES:-$nodes}
    [[ $nodes =~ ^[1-9][0-9]*$ && $nodes -le $ncompute ]] || die "--nodes: 1 to $ncompute"
    local np="" prev="" a
    for a in "$@"; do
        case $prev in -n | -np | --np | -c) np=$a; break ;; esac
        case $a in -n=* | --np=*) np=${a#*=}; break ;; esac
        prev=$a
    done
    [[ $np =~ ^[1-9][0-9]*$ ]] || np=$nodes
    local ppn=$(((np + nodes - 1) / nodes)) hosts="" i
    for ((i = 1; i <= nodes; i++)); do hosts="$hosts${hosts:+,}c$i:$ppn"; done
    local agent=$here/cluster-ssh
    case $family in
    openmpi)
        # TCP on the cluster's network only; shared memory within a node. Idle ranks yield:
        # every rank and the whole file system share the machine's cores, where a real cluster
        # gives each rank its own, and a rank spinning in MPI would take the CPU from the ranks
        # and the file system daemons it waits for (collectives took 10-60 ms instead of 1-3)
        local root=()
        [ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
        node_replace c1 mpiexec.openmpi "${root[@]}" --host "$hosts" --mca plm_rsh_agent "$agent" \
            --mca plm_rsh_no_tree_spawn 1 --mca btl self,vader,tcp \
            --mca mpi_yield_when_idle "${OMPI_MCA_mpi_yield_when_idle:-1}" \
            --mca btl_tcp_if_include "$subnet.0/$netmask" \
            --mca oob_tcp_if_include "$subnet.0/$netmask" "$@"
        ;;
    mpich)
        # UCX's shared-memory transports would reach across the emulated nodes: TCP only
        node_replace c1 env UCX_TLS=tcp,self mpiexec.mpich -launcher ssh -launcher-exec "$agent" \
            -hosts "$hosts" "$@"
        ;;
    *) die "mpiexec: family openmpi or mpich, not $family" ;;
    esac
}

cmd_with() {
    local up_args=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        case $1 in
        --compute | --storage | --rate | --osd-mem) up_args+=("$1" "$2"); shift 2 ;;
        *) break ;;
        esac
    done
    [ "${1:-}" = -- ] && shift
    [ $# -gt 0 ] || die "with: a command is needed"
    take_lock
    cmd_up "${up_args[@]}"
    local rc=0
    "$@" || rc=$?
    cmd_down
    return $rc
}

main() {
    local cmd=${1:-help}
    [ $# -gt 0 ] && shift
    case $cmd in
    up) cmd_up "$@" ;;
    down) cmd_down ;;
    status) cmd_status "$@" ;;
    exec)
        [ $# -ge 2 ] || die "exec NODE CMD..."
        load_config
        node_replace "$@"
        ;;
    mpiexec)
        [ $# -ge 1 ] || die "mpiexec FAMILY ARGS..."
        cmd_mpiexec "$@"
        ;;
    run)
        local family=openmpi
        if [ "${1:-}" = --family ]; then
            family=$2
            shift 2
        fi
        cmd_mpiexec "$family" "$@"
        ;;
    with) cmd_with "$@" ;;
    ceph)
        load_config
        ceph_cmd "$@"
        ;;
    fail-client)
        [ $# -eq 1 ] || die "fail-client NODE"
        cmd_fail_client "$1"
        ;;
    remount) cmd_remount ;;
    can)
        local why
        if why=$(can_run); then echo "yes"; else
            echo "no: $why"
            return 1
        fi
        ;;
    help | -h | --help) usage ;;
    *) die "unknown command $cmd (cluster.sh help)" ;;
    esac
}

main "$@"
