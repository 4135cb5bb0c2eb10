#!/usr/bin/env bash
# Runs the test suite (installs what it needs first), one process per CPU core by default: a file to a
# process, tests/test_chapters.py first (its fixture executes every chapter, most of the suite's time).
# Extra arguments go to pytest: `bash scripts/test.sh -m "not slow"` skips the notebook and book tests;
# an -n of your own (`-n 0`: one process) replaces the default.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
parallel=(-n auto --dist loadfile --no-loadscope-reorder)
for arg in "$@"; do
  case $arg in -n|-n*|--numprocesses*) parallel=() ;; esac
done
.venv/bin/python -m pytest "${parallel[@]}" "$@"
