#!/usr/bin/env bash
# check.sh [FAMILY...]: the sanitizer and fuzzer runs, on both MPI families by default.
#
# For each family, build/<family>-asan is ampio and its tests built by clang-14 with
# AddressSanitizer and UndefinedBehaviorSanitizer, plus the libFuzzer targets (tests/fuzz).
# There run: the unit tests, the fuzzers (AMPIO_FUZZ_SECONDS each, default 20) and a subset of
# the MPI tests under ampio. build/<family>-tsan: ampio and the multi-threaded tests with
# ThreadSanitizer. Any sanitizer report fails its test; leaks are reported at exit
# (suppressions, for the MPI libraries only: lsan.supp).
set -uo pipefail
cd "$(dirname "$0")/../.."
families=${*:-openmpi mpich}
. tests/sanitize/env.sh
# every access family, views, data representations, nonblocking and threaded accesses, atomic
# mode, error paths and the clean-up at finalize (the shared pointer and random view tests take
# minutes under the sanitizers on a loaded machine: left to the ordinary runs)
mpi_subset='^((diff\.(basic_vector|coll_owners|file_ops|datareps|access_families|finalize_order)'
mpi_subset+='|diff\.(nb_routines|nb_threads)|(diff|ampio)\.nb_local|ampio\.(atomic_mode|err_handlers))\.np2'
mpi_subset+='|ampio\.err_(access\.np2\.overflow|coll\.np2\.access|open\.np2\.hints))$'
status=0
for family in $families; do
    build="build/$family-asan"
    echo "=== sanitizers and fuzzers on $family ($build) ==="
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-14 \
        -DMPI_C_COMPILER="mpicc.$family" -DMPIEXEC_EXECUTABLE="/usr/bin/mpiexec.$family" \
        -DAMPIO_SANITIZE=ON -DAMPIO_FUZZ=ON -DAMPIO_BUILD_BENCH=OFF >/dev/null || {
        status=1
        continue
    }
    cmake --build "$build" -j "$(nproc)" >/dev/null || {
        echo "check.sh: the sanitizer build failed on $family" >&2
        status=1
        continue
    }
    jobs=2
    [ "$family" = mpich ] && jobs=1
    ctest --test-dir "$build" --output-on-failure -j "$jobs" -L 'unit|fuzz' || status=1
    # a subset of the MPI tests, on 2 ranks, under ampio only (the native runs are not ours)
    AMPIO_TEST_MODE=ampio ctest --test-dir "$build" --output-on-failure -j "$jobs" \
        -R "$mpi_subset" || status=1
done

# ThreadSanitizer on the multi-threaded tests: ampio's progress and I/O threads, application
# threads under MPI_THREAD_MULTIPLE, atomic mode. Suppressions for the MPI libraries only
# (tsan.supp); the symbolizer is a static program (symbolizer.c), since nothing dynamically
# linked starts with the test's preload of a ThreadSanitizer libampio.so.
tsan_tests='^((diff|ampio)\.(nb_local|nb_routines|nb_threads|atomic_mode)\.np2|ampio\.threads\.np2)$'
for family in $families; do
    build="build/$family-tsan"
    echo "=== ThreadSanitizer on $family ($build) ==="
    if ! cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-14 \
        -DMPI_C_COMPILER="mpicc.$family" -DMPIEXEC_EXECUTABLE="/usr/bin/mpiexec.$family" \
        -DAMPIO_TSAN=ON -DAMPIO_BUILD_BENCH=OFF >/dev/null ||
        ! cmake --build "$build" -j "$(nproc)" --target ampio nb_local nb_routines nb_threads \
            atomic_mode threads >/dev/null ||
        ! mkdir -p "$build/bin" ||
        ! cc -static -O2 -o "$build/bin/llvm-symbolizer" tests/sanitize/symbolizer.c; then
        echo "check.sh: the ThreadSanitizer build failed on $family" >&2
        status=1
        continue
    fi
    (
        unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
        export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/sanitize/tsan.supp:external_symbolizer_path=$PWD/$build/bin/llvm-symbolizer"
        AMPIO_TEST_MODE=ampio ctest --test-dir "$build" --output-on-failure -j 1 -R "$tsan_tests"
    ) || status=1
done
exit $status
