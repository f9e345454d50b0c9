"""Which generation a new connection speaks: ``server/discover`` first, ``initialize`` as fallback.

With ``ServerConfig.protocol="auto"`` (the default) a connection first asks
``server/discover`` at 2026-07-28. A server that lists that revision among
its ``supportedVersions`` is spoken to statelessly from then on. A server
that does not know the method (a JSON-RPC error, or an HTTP 4xx from a
Streamable HTTP server that wants a session first) is an older one: the
``initialize`` handshake follows on the same transport, offering
``ServerConfig.protocol_version``; so does one that stays silent for
``ServerConfig.discover_wait`` (a few seconds over stdio, where some old
servers ignore requests before ``initialize``), and one that then refuses the
handshake naming 2026-07-28 (a slow start: it read the probe late) is asked
again. ``"modern"`` pins the new generation (no
fallback), ``"legacy"`` the handshake (no probe). What was learned is kept
on the :class:`~agent_smith.mcp.connection.Connection`; nothing else
branches on versions.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..errors import AgentTimeoutError, McpError, McpProtocolError, TransportError
from .catalog import ServerInfo
from .config import SUPPORTED_PROTOCOL_VERSIONS as HANDSHAKE_VERSIONS
from .generation import (
    META_SERVER_INFO,
    MODERN_VERSION,
    UNSUPPORTED_PROTOCOL_VERSION,
    request_meta,
)

if TYPE_CHECKING:
    from .config import ServerConfig
    from .connection import Connection

log = logging.getLogger(__name__)

CLIENT_NAME = "agent_smith"


def client_info() -> dict[str, str]:
    """What this client calls itself (``clientInfo``)."""
    return {"name": CLIENT_NAME, "version": __version__}


def client_capabilities(
    *, elicitation: object | None, sampling: object | None, roots: object | None
) -> dict[str, Any]:
    """The capabilities the client declares for the handlers it was given.

    A handler may say more: ``modes`` (elicitation: ``("form", "url")``),
    ``supports_tools`` (sampling with tools).
    """
    capabilities: dict[str, Any] = {}
    if elicitation is not None:
        modes = getattr(elicitation, "modes", ())
        capabilities["elicitation"] = {mode: {} for mode in modes}
    if sampling is not None:
        capabilities["sampling"] = (
            {"tools": {}} if getattr(sampling, "supports_tools", False) else {}
        )
    if roots is not None:
        capabilities["roots"] = {"listChanged": False}
    return capabilities


def negotiate(conn: Connection, config: ServerConfig, capabilities: dict[str, Any]) -> None:
    """Settle ``conn``'s generation and learn the server's info and capabilities."""
    if config.protocol != "legacy" and conn.transport.speaks_modern:
        if _discover(conn, config, capabilities):
            return
    elif config.protocol == "modern":
        raise McpProtocolError(
            f"MCP server {config.alias!r}: protocol 'modern' needs stdio or Streamable HTTP",
            server=config.alias,
        )
    try:
        initialize(conn, config, capabilities)
    except McpError as err:
        # A slow server may read server/discover after its short wait ended,
        # settle on 2026-07-28, then refuse the handshake naming that version.
        if config.protocol == "legacy" or MODERN_VERSION not in (_supported(err) or ()):
            raise
        log.info("MCP server %s speaks %s after all; asking again", config.alias, MODERN_VERSION)
        if not _discover(conn, config, capabilities, wait=config.request_timeout):
            raise


def _discover(
    conn: Connection,
    config: ServerConfig,
    capabilities: dict[str, Any],
    *,
    wait: float | None = None,
) -> bool:
    """``server/discover``; True if the server speaks 2026-07-28 (``conn`` then set up).

    The answer is waited for ``wait`` seconds (default: ``config.discover_wait``,
    or the request timeout when the generation is pinned: there is no fallback).
    """
    pinned = config.protocol == "modern"
    conn.transport.protocol_chosen(MODERN_VERSION)
    params = {"_meta": request_meta(capabilities, client_info())}
    timeout = (
        wait if wait is not None else (config.request_timeout if pinned else config.discover_wait)
    )
    try:
        try:
            result = _ask(conn, params, config.alias, timeout)
        except McpError as err:
            if _supported(err) is None or MODERN_VERSION not in (_supported(err) or ()):
                raise
            # "Unsupported version", yet it names ours: a server whose era was not
            # settled yet (one that answered another client first). Ask once more.
            result = _ask(conn, params, config.alias, timeout)
    except McpError as err:
        supported = _supported(err)
        if pinned or (supported is not None and not set(supported) & set(HANDSHAKE_VERSIONS)):
            raise
        log.debug("MCP server %s: no server/discover (%s); initialising", config.alias, err)
        return False
    except McpProtocolError as err:
        if pinned:
            raise
        log.debug("MCP server %s: no server/discover (%s); initialising", config.alias, err)
        return False
    except TransportError as err:
        status = err.http_status
        if pinned or status is None or not 400 <= status < 500 or status in (401, 403):
            raise
        log.debug("MCP server %s: HTTP %d to server/discover; initialising", config.alias, status)
        return False
    except AgentTimeoutError:
        if pinned:
            raise
        # Some older servers ignore requests before ``initialize`` instead of refusing them.
        log.info(
            "MCP server %s did not answer server/discover within %gs; initialising",
            config.alias,
            timeout,
        )
        return False
    versions = result.get("supportedVersions")
    if not isinstance(versions, list) or MODERN_VERSION not in versions:
        if pinned:
            raise McpProtocolError(
                f"MCP server {config.alias!r} does not speak {MODERN_VERSION} "
                f"(it supports {versions!r})",
                server=config.alias,
            )
        return False
    conn.server_info = _server_info(result)
    caps = result.get("capabilities")
    conn.capabilities = caps if isinstance(caps, dict) else {}
    conn.protocol_version = MODERN_VERSION
    conn.modern = True
    log.info(
        "connected to MCP server %s (%s %s, protocol %s)",
        config.alias,
        conn.server_info.name,
        conn.server_info.version,
        MODERN_VERSION,
    )
    return True


def _ask(conn: Connection, params: dict[str, Any], alias: str, timeout: float) -> dict[str, Any]:
    """``server/discover``, sent once more if the exchange (not the server) failed.

    The first request on a pooled HTTP connection may meet a connection the
    server just closed; that says nothing about which generation it speaks.
    """
    try:
        return conn.rpc.request("server/discover", params, timeout=timeout)
    except TransportError as err:
        if err.http_status is not None or not conn.alive:
            raise
        log.info("MCP server %s: server/discover failed (%s); once more", alias, err)
        return conn.rpc.request("server/discover", params, timeout=timeout)


def _supported(err: McpError) -> list[str] | None:
    """The versions an "unsupported protocol version" error names (None for other errors)."""
    if err.rpc_code != UNSUPPORTED_PROTOCOL_VERSION or not isinstance(err.data, dict):
        return None
    supported = err.data.get("supported")
    return [str(v) for v in supported] if isinstance(supported, list) else None


def initialize(conn: Connection, config: ServerConfig, capabilities: dict[str, Any]) -> None:
    """The ``initialize`` handshake (and ``notifications/initialized``)."""
    result = conn.rpc.request(
        "initialize",
        {
            "protocolVersion": config.protocol_version,
            "capabilities": capabilities,
            "clientInfo": client_info(),
        },
        timeout=config.request_timeout,
    )
    version = result.get("protocolVersion")
    accepted = conn.transport.protocol_versions
    if version not in accepted:
        raise McpProtocolError(
            f"MCP server {config.alias!r} chose protocol revision {version!r}; this client "
            f"speaks {', '.join(accepted)}",
            server=config.alias,
        )
    conn.server_info = _server_info(result)
    caps = result.get("capabilities")
    conn.capabilities = caps if isinstance(caps, dict) else {}
    conn.protocol_version = str(version)
    conn.modern = False
    # Every request after initialize carries the revision, ``initialized`` included.
    conn.transport.protocol_chosen(conn.protocol_version)
    conn.rpc.notify("notifications/initialized")
    conn.transport.negotiated(conn.protocol_version)
    log.info(
        "connected to MCP server %s (%s %s, protocol %s)",
        config.alias,
        conn.server_info.name,
        conn.server_info.version,
        version,
    )


def _server_info(result: dict[str, Any]) -> ServerInfo:
    info = result.get("serverInfo")
    if not isinstance(info, dict):
        meta = result.get("_meta")
        info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
    if not isinstance(info, dict):
        info = {}
    return ServerInfo(
        name=str(info.get("name", "")), version=str(info.get("version", "")), raw=result
    )
