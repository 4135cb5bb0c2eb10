#!/usr/bin/env bash
# Builds the executed book into _build/html: installs what it needs, runs every
# chapter through papermill (default profile; pass --profile ci for a quick build),
# then Jupyter Book with warnings as errors.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python -m vvlib book "$@"
