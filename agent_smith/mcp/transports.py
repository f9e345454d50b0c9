"""Which transport a ServerConfig asks for, built: stdio, Streamable HTTP, HTTP+SSE or auto.

The transport modules are imported only when used, so a stdio-only program
never loads the HTTP ones (nor OAuth).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..runtime import Runtime
    from .auth.provider import OAuthProvider
    from .config import ServerConfig
    from .http_request import RequestAuth
    from .transport import Transport


def make_transport(
    config: ServerConfig, runtime: Runtime | None, *, auth: RequestAuth | None
) -> Transport:
    """A new, unstarted transport for ``config`` (``runtime`` is needed for a URL)."""
    if config.command:
        from .stdio import StdioTransport

        return StdioTransport(config)
    if runtime is None:
        raise ValueError(f"MCP server {config.alias!r}: an HTTP transport needs a runtime")
    if config.transport == "sse":
        from .legacy_sse import LegacySseTransport

        return LegacySseTransport(config, runtime, auth=auth)
    if config.transport == "auto":
        from .auto_transport import AutoTransport

        return AutoTransport(config, runtime, auth=auth)
    from .http import StreamableHttpTransport

    return StreamableHttpTransport(config, runtime, auth=auth)


def oauth_provider(config: ServerConfig, runtime: Runtime) -> OAuthProvider:
    """The OAuth provider for ``config.auth`` (which must be set)."""
    from .auth.provider import OAuthProvider

    if config.auth is None or config.url is None:
        raise ValueError(f"MCP server {config.alias!r} has no OAuth config")
    return OAuthProvider(
        config.auth,
        server=config.alias,
        url=config.url,
        session=runtime.session,
        protocol_version=config.protocol_version,
    )
