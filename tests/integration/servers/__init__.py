"""MCP servers the integration tests start, and helpers to reach them.

``sdk_server.py`` is written with the official Python SDK (stdio, Streamable
HTTP, or the 2024-11-05 HTTP+SSE transport); ``tiny_server.py`` is
hand-written for edge cases. The npm peers
(``@modelcontextprotocol/server-everything``) are found through
:mod:`tests.integration.peers`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from agent_smith import ServerConfig

HERE = Path(__file__).resolve().parent
SDK_SERVER = HERE / "sdk_server.py"
TINY_SERVER = HERE / "tiny_server.py"


def sdk_stdio(alias: str = "sdk", **fields: Any) -> ServerConfig:
    """Config for the SDK server over stdio, at the handshake generation unless ``protocol`` says.

    The SDK (2.x) speaks 2026-07-28 too, but the server's tools that send it
    requests (elicitation, roots, ping) are written for a session;
    ``test_mcp_modern.py`` covers the new generation.
    """
    fields.setdefault("protocol", "legacy")
    return ServerConfig(alias=alias, command=(sys.executable, str(SDK_SERVER)), **fields)


def tiny_stdio(*flags: str, alias: str = "tiny", **fields: Any) -> ServerConfig:
    """Config for the hand-written server with the given flags."""
    return ServerConfig(alias=alias, command=(sys.executable, str(TINY_SERVER), *flags), **fields)
