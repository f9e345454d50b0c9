#!/usr/bin/env bash
# Install everything the test suite needs into .venv (and node_modules for the
# MCP reference servers), then run the whole suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[dev,local]'

exec .venv/bin/python -m pytest "$@"
