#!/usr/bin/env bash
# Runs the test suite (installs what it needs first), one process per CPU core by default: a file to a
# process, tests/test_chapters.py first (its fixture executes every chapter, most of the suite's time).
# The tests marked heavy (a minute or more each: the benchmarks end to end, torchrun, the bundled model)
# are left out unless VVLIB_ALL_TESTS=1 (CI sets it) or an -m of your own is given.
# Extra arguments go to pytest: `bash scripts/test.sh -m "not slow"` skips the notebook and book tests;
# an -n of your own (`-n 0`: one process) replaces the default.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# glibc hands the CPU evaluation's large blocks back to the system after each use and pays page faults for them
# again: kept in the heap instead, scoring up to 16,384 items takes 40% less time (bench/heap_ab.py; kernels too)
export MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-4294967296} MALLOC_TRIM_THRESHOLD_=${MALLOC_TRIM_THRESHOLD_:-4294967296}
parallel=(-n auto --dist loadfile --no-loadscope-reorder)
select=()
[ "${VVLIB_ALL_TESTS:-0}" = 1 ] || select=(-m "not heavy")
for arg in "$@"; do
  case $arg in
    -n|-n*|--numprocesses*) parallel=() ;;
    -m|-m*) select=() ;;
  esac
done
.venv/bin/python -m pytest "${parallel[@]}" "${select[@]}" "$@"
