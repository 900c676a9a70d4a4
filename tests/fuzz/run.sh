#!/usr/bin/env bash
# run.sh ENV_SH FUZZER CORPUS_DIR: runs FUZZER (one MPI rank) over every input of CORPUS_DIR,
# then on new inputs for AMPIO_FUZZ_SECONDS (default 20). A failing input is kept in the
# build tree (fuzz-artifacts/); add it to CORPUS_DIR with the fix, as a regression input.
# New inputs go to a scratch directory; `run.sh ... --merge` folds them into CORPUS_DIR.
set -euo pipefail
env_sh=$1 fuzzer=$2 corpus=$3
. "$env_sh"
seconds=${AMPIO_FUZZ_SECONDS:-20}
artifacts="$(dirname "$fuzzer")/fuzz-artifacts"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$artifacts" "$corpus"
. "$(dirname "$0")/../sanitize/env.sh"
# Open MPI catches SIGABRT itself; libFuzzer must, to save the input that failed
export OMPI_MCA_opal_signal=""
run() { "$AMPIO_TEST_MPIEXEC" -n 1 "$fuzzer" -timeout=30 -rss_limit_mb=3072 \
    -artifact_prefix="$artifacts/$(basename "$fuzzer")-" "$@"; }
# Fuzzing: full stacks on every malloc (which the leak check needs, the MPI libraries having
# no frame pointers) would slow it twentyfold, so leaks are checked after, on every input kept
ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0:fast_unwind_on_malloc=1" \
    run -max_total_time="$seconds" -print_final_stats=1 "$scratch" "$corpus"
run -runs=0 "$scratch" "$corpus"
if [ "${4:-}" = --merge ]; then
    # libFuzzer merges in child processes, which must not run under the MPI launcher
    "$fuzzer" -merge=1 "$corpus" "$scratch"
fi
