# What the scripts of tests/cluster share (sourced). Needs $cluster (scripts/cluster.sh) and the
# build tree's env.sh sourced.

# Exits 77 (skipped) unless asked for (AMPIO_TEST_CLUSTER=1: the cluster is a shared resource
# of the machine; scripts/test.sh asks where it can) or when the machine cannot run it.
cluster_wanted() {
    local why
    if [ "${AMPIO_TEST_CLUSTER:-0}" != 1 ]; then
        echo "SKIP: the cluster tests run with AMPIO_TEST_CLUSTER=1 (scripts/test.sh sets it" \
            "where the machine can run the cluster)"
        exit 77
    fi
    if ! why=$(bash "$cluster" can 2>&1); then
        echo "SKIP: the emulated cluster cannot run here: $why"
        exit 77
    fi
}

# The same, and exits 1 when the cluster is not up.
cluster_ready() {
    cluster_wanted
    if ! bash "$cluster" status -q; then
        echo "FAIL: the cluster is not up (did the fixture cluster.up fail?)"
        bash "$cluster" status
        exit 1
    fi
}

# guarded VAR LOG CMD...: runs CMD under the limit ($limit s), its output in LOG and then on
# stdout, its exit status in VAR. MPICH runs with UCX_TLS=tcp,self, whose transport (UCX 1.13)
# hangs in MPI_Finalize in about one run of three: a run still going 20 s after the program
# printed that every check passed on every rank (amptest_finish, just before MPI_Finalize) is
# ended and counts as passed, with a note.
guarded() {
    local var=$1 log=$2
    shift 2
    timeout -k 10 "$limit" "$@" >"$log" 2>&1 &
    local pid=$! passed_at="" hung=0
    while kill -0 "$pid" 2>/dev/null; do
        if [ "$AMPIO_TEST_FAMILY" = mpich ] && [ -z "$passed_at" ] &&
            grep -q "^amptest: every check passed" "$log"; then
            passed_at=$SECONDS
        fi
        if [ -n "$passed_at" ] && [ $((SECONDS - passed_at)) -ge 20 ]; then
            hung=1
            kill -TERM "$pid" 2>/dev/null
            break
        fi
        sleep 1
    done
    wait "$pid"
    local got=$?
    cat "$log"
    if [ $hung -eq 1 ]; then
        echo "NOTE: every check had passed, then MPICH hung in MPI_Finalize (UCX over TCP):" \
            "ended after 20 s"
        got=0
    fi
    printf -v "$var" %d "$got"
}

# Options of the native runs: under Open MPI its ROMIO component, not OMPIO, which takes minutes
# where ROMIO takes seconds on this CephFS (and returns stale bytes across nodes: sieve_nodes).
native_opts=()
if [ "${AMPIO_TEST_FAMILY:-}" = openmpi ]; then native_opts=(--mca io romio321); fi
