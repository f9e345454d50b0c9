"""Peer servers for the HTTP interop tests: npm peers and processes serving on a free port.

The npm peers (server-everything, the conformance suite, Node 22) live under
``tests/integration/npm``; ``scripts/test.sh`` installs them with ``npm ci``.
When they are missing the tests that need them skip with the reason, unless
``AGENT_SMITH_REQUIRE_ALL=1`` (CI), where every skip fails
(tests/support/require_all.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

NPM_DIR = Path(__file__).parent / "npm"
BIN = NPM_DIR / "node_modules" / ".bin"


def require_npm_bin(name: str) -> Path:
    """Path of ``node_modules/.bin/<name>``; skip (or fail under REQUIRE_ALL) if missing."""
    path = BIN / name
    if not path.exists():
        pytest.skip(f"npm peer {name!r} missing: run `npm ci --prefix {NPM_DIR}`")
    return path


def require_npm_package(name: str) -> Path:
    """Path of ``node_modules/<name>``; skip (or fail under REQUIRE_ALL) if missing."""
    path = NPM_DIR / "node_modules" / name
    if not path.is_dir():
        pytest.skip(f"npm package {name!r} missing: run `npm ci --prefix {NPM_DIR}`")
    return path


def node_env() -> dict[str, str]:
    """This process's environment with the npm Node 22 first on PATH."""
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


@contextmanager
def serve(
    argv: Sequence[str], *, ready: str, env: dict[str, str] | None = None, timeout: float = 60.0
) -> Iterator[subprocess.Popen[str]]:
    """Run a server process until the block ends; wait for ``ready`` in its output first.

    Its stdout and stderr are drained on a thread the whole time (an undrained
    pipe stalls a chatty server); at the end it is terminated, then killed.
    """
    proc = subprocess.Popen(
        list(argv),
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        encoding="utf-8",
        errors="replace",
        start_new_session=True,
    )
    up = threading.Event()
    lines: list[str] = []

    def drain() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if ready in line:
                up.set()
        up.set()  # EOF: the process ended; the check below tells which

    drainer = threading.Thread(target=drain, name="test-server-drain", daemon=True)
    drainer.start()
    try:
        if not up.wait(timeout) or proc.poll() is not None:
            raise AssertionError(f"server {argv[0]} did not start:\n{''.join(lines)[-3000:]}")
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        drainer.join(10)
