#!/usr/bin/env bash
# Builds the executed book into _build/html: installs what it needs, runs every chapter
# through papermill, then Jupyter Book with warnings as errors.  By default the published
# book: chapters 4-9 at their `book` profile, loaded from the results committed in
# results/book/.  Extra arguments go to `python -m vvlib book`, e.g. --profile ci (a quick
# small-scale build) or --stored-only (fail rather than compute anything not committed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python -m vvlib book --profile book "$@"
