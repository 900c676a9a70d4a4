# Sourced by the sanitizer and fuzzer runs: how the sanitizers report, and the suppressions.
# A sanitizer error ends the program with a failure; leaks are checked at exit with full stacks
# (the MPI libraries have no frame pointers, and their suppressions match on library names).
san_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export ASAN_OPTIONS="detect_leaks=1:fast_unwind_on_malloc=0:strict_string_checks=1:check_initialization_order=1:external_symbolizer_path=$san_dir/llvm-symbolizer${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$san_dir/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:external_symbolizer_path=$san_dir/llvm-symbolizer"
# Open MPI unloads its components at MPI_Finalize, before the leak check: keep them loaded so
# that their allocations are named (and suppressed as Open MPI's)
export OMPI_MCA_mca_base_component_disable_dlclose=1
