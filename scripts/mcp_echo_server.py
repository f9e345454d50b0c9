#!/usr/bin/env python3
"""A minimal stdio MCP server with one ``echo`` tool, for scripts/bench_mcp.py.

It speaks both generations (the ``initialize`` handshake, and 2026-07-28's
``server/discover`` with ``_meta`` on every request) and does almost no work
per call, so that a benchmark against it measures the client rather than the
server: the SDK-written server spends about a millisecond of CPU per call,
which caps any client near a thousand calls a second.
"""

from __future__ import annotations

import json
import sys
from typing import Any

MODERN = "2026-07-28"
HANDSHAKE = ("2025-11-25", "2025-06-18", "2025-03-26")
INFO = {"name": "echo", "version": "1.0.0"}
TOOLS = [
    {
        "name": "echo",
        "description": "Return the text unchanged.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    }
]


def answer(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The result of ``method``, or None for "method not found"."""
    if method == "initialize":
        asked = params.get("protocolVersion")
        version = asked if asked in HANDSHAKE else HANDSHAKE[0]
        return {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": INFO}
    if method == "server/discover":
        return {"supportedVersions": [MODERN], "capabilities": {"tools": {}}, "serverInfo": INFO}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        text = str(params.get("arguments", {}).get("text", ""))
        return {"content": [{"type": "text", "text": text}], "isError": False}
    if method == "ping":
        return {}
    return None


def main() -> None:
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        frame = json.loads(line)
        if "id" not in frame:
            continue  # a notification
        params = frame.get("params") or {}
        result = answer(frame["method"], params)
        if result is None:
            reply: dict[str, Any] = {"code": -32601, "message": "method not found"}
            message = {"jsonrpc": "2.0", "id": frame["id"], "error": reply}
        else:
            if "io.modelcontextprotocol/protocolVersion" in params.get("_meta", {}):
                result["resultType"] = "complete"
                if frame["method"] in ("server/discover", "tools/list"):
                    result.update(ttlMs=0, cacheScope="public")  # required there; 0: no caching
            message = {"jsonrpc": "2.0", "id": frame["id"], "result": result}
        out.write(json.dumps(message).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
