"""The two MCP protocol generations, and the 2026-07-28 request envelope.

The handshake generation (2025-03-26 to 2025-11-25) opens a session with
``initialize``. The stateless generation (2026-07-28) has no handshake and no
session: the client may ask ``server/discover`` what the server speaks, and
every request carries the protocol version and the client's capabilities in
its ``_meta``; every result says what it is in ``resultType``. The
generation is negotiated once per connection (:mod:`.negotiation`) and kept
on it; this module holds what the request path needs to speak the new one.
"""

from __future__ import annotations

from typing import Any

from ..errors import McpProtocolError

#: The stateless revision this client speaks.
MODERN_VERSION = "2026-07-28"
#: ``ServerConfig.protocol``: negotiate, or pin one generation.
PROTOCOLS = ("auto", "modern", "legacy")
#: JSON-RPC error code of an unsupported protocol version (2026-07-28).
UNSUPPORTED_PROTOCOL_VERSION = -32022

_META_VERSION = "io.modelcontextprotocol/protocolVersion"
_META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
_META_CLIENT = "io.modelcontextprotocol/clientInfo"
_META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
#: Where a 2026-07-28 server names itself in a result's ``_meta``.
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

COMPLETE = "complete"
INPUT_REQUIRED = "input_required"


def request_meta(
    capabilities: dict[str, Any], client_info: dict[str, str], *, log_level: str | None = None
) -> dict[str, Any]:
    """The ``_meta`` entries every 2026-07-28 request carries."""
    meta: dict[str, Any] = {
        _META_VERSION: MODERN_VERSION,
        _META_CAPABILITIES: capabilities,
        _META_CLIENT: client_info,
    }
    if log_level is not None:
        meta[_META_LOG_LEVEL] = log_level
    return meta


def stamped(params: dict[str, Any] | None, meta: dict[str, Any]) -> dict[str, Any]:
    """``params`` with ``meta`` added to its ``_meta`` (keys already there are kept)."""
    params = dict(params or {})
    own = params.get("_meta")
    params["_meta"] = {**meta, **own} if isinstance(own, dict) else dict(meta)
    return params


def result_type(result: dict[str, Any], *, method: str, server: str) -> str:
    """A result's ``resultType`` (absent means complete); McpProtocolError if unknown."""
    kind = result.get("resultType", COMPLETE)
    if kind in (COMPLETE, INPUT_REQUIRED):
        return str(kind)
    raise McpProtocolError(
        f"MCP server {server!r} answered {method} with resultType {kind!r}, which this "
        "client does not know",
        server=server,
    )
