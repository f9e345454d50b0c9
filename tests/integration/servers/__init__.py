"""MCP servers the integration tests start, and helpers to reach them.

``sdk_server.py`` is written with the official Python SDK (stdio or
Streamable HTTP); ``tiny_server.py`` is hand-written for edge cases; the npm
reference server ``@modelcontextprotocol/server-everything`` is installed
under ``tests/integration/npm`` by ``scripts/test.sh``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_smith import ServerConfig

HERE = Path(__file__).resolve().parent
SDK_SERVER = HERE / "sdk_server.py"
TINY_SERVER = HERE / "tiny_server.py"
NPM_BIN = HERE.parent / "npm" / "node_modules" / ".bin"
EVERYTHING = NPM_BIN / "mcp-server-everything"


def sdk_stdio(alias: str = "sdk", **fields: Any) -> ServerConfig:
    """Config for the SDK server over stdio."""
    return ServerConfig(alias=alias, command=(sys.executable, str(SDK_SERVER)), **fields)


def tiny_stdio(*flags: str, alias: str = "tiny", **fields: Any) -> ServerConfig:
    """Config for the hand-written server with the given flags."""
    return ServerConfig(alias=alias, command=(sys.executable, str(TINY_SERVER), *flags), **fields)


def require_npm_peer(path: Path) -> None:
    """Skip (or fail, when AGENT_SMITH_REQUIRE_ALL=1) if an npm peer is not installed."""
    if path.exists():
        return
    reason = f"{path.name} is not installed: run `npm install` in tests/integration/npm"
    if os.environ.get("AGENT_SMITH_REQUIRE_ALL") == "1":
        pytest.fail(reason)
    pytest.skip(reason)
