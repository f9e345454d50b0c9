"""Where the npm peers (server-everything, conformance suite, Node 22) live, or why not.

``scripts/test.sh`` installs them with ``npm ci --prefix tests/integration/npm``.
When they are missing the tests that need them skip with the reason, unless
``AGENT_SMITH_REQUIRE_ALL=1`` (CI), where they fail.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

NPM_DIR = Path(__file__).parent / "npm"
BIN = NPM_DIR / "node_modules" / ".bin"


def require_npm_bin(name: str) -> Path:
    """Path of ``node_modules/.bin/<name>``; skip (or fail under REQUIRE_ALL) if missing."""
    path = BIN / name
    if not path.exists():
        reason = f"npm peer {name!r} missing: run `npm ci --prefix {NPM_DIR}`"
        if os.environ.get("AGENT_SMITH_REQUIRE_ALL") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return path


def node_env() -> dict[str, str]:
    """This process's environment with the npm Node 22 first on PATH."""
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
