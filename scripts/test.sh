#!/usr/bin/env bash
# Runs the test suite (installs what it needs first).  Extra arguments go to pytest,
# e.g. `bash scripts/test.sh -m "not slow"` skips the notebook and book tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python -m pytest "$@"
