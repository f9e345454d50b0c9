"""``transport="auto"``: Streamable HTTP, or the 2024-11-05 HTTP+SSE transport for an old server.

The backwards-compatibility rule of MCP's transports (2025-03-26 on): POST
``initialize`` to the URL; if that succeeds the server speaks Streamable
HTTP. If it fails with a 4xx (405 and 404 are typical), GET the same URL
expecting an SSE stream whose first event is ``endpoint``: the server speaks
the old transport. A 401 or 403 is not a sign of either: the auth answers it
first (both transports authorize the same way).

Everything after ``initialize`` goes to the transport that answered it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..errors import TransportError
from .http import StreamableHttpTransport
from .legacy_sse import LegacySseTransport
from .transport import CloseHandler, Frame, FrameHandler, Transport

if TYPE_CHECKING:
    from ..runtime import Runtime
    from .config import ServerConfig
    from .http_request import RequestAuth

log = logging.getLogger(__name__)


class AutoTransport(Transport):
    """Streamable HTTP first, falling back to HTTP+SSE on a 4xx to ``initialize``."""

    def __init__(
        self, config: ServerConfig, runtime: Runtime, *, auth: RequestAuth | None = None
    ) -> None:
        self.server = config.alias
        self.where = config.url or ""
        self._config = config
        self._runtime = runtime
        self._auth = auth
        self._current: Transport = StreamableHttpTransport(config, runtime, auth=auth)
        self._settled = False
        self._on_frame: FrameHandler | None = None
        self._on_closed: CloseHandler | None = None

    def start(self, on_frame: FrameHandler, on_closed: CloseHandler) -> None:
        self._on_frame, self._on_closed = on_frame, on_closed
        self._current.start(on_frame, on_closed)

    def send(self, frame: Frame, *, timeout: float | None = None) -> None:
        """Send ``frame``; the first ``initialize`` decides which transport carries the rest."""
        if self._settled or frame.get("method") != "initialize":
            self._current.send(frame, timeout=timeout)
            return
        try:
            self._current.send(frame, timeout=timeout)
        except TransportError as err:
            status = err.http_status
            if status is None or not 400 <= status < 500 or status in (401, 403):
                raise
            log.info(
                "MCP server %s answered HTTP %d to a Streamable HTTP initialize; "
                "trying the HTTP+SSE transport",
                self.server,
                status,
            )
            self._fall_back(err)
            self._current.send(frame, timeout=timeout)
        self._settled = True

    def _fall_back(self, first: TransportError) -> None:
        self._current.close()
        legacy = LegacySseTransport(self._config, self._runtime, auth=self._auth)
        if self._on_frame is None or self._on_closed is None:
            raise self._error("send", "transport is not started")
        try:
            legacy.start(self._on_frame, self._on_closed)
        except TransportError as err:
            raise self._error(
                "connect",
                f"neither transport answered: Streamable HTTP with HTTP {first.http_status}, "
                f"HTTP+SSE with: {err.message}",
                http_status=err.http_status,
            ) from err
        self._current = legacy
        self.protocol_versions = legacy.protocol_versions

    def protocol_chosen(self, protocol_version: str) -> None:
        self._current.protocol_chosen(protocol_version)

    def negotiated(self, protocol_version: str) -> None:
        self._current.negotiated(protocol_version)

    def describe_tools(self, tools: dict[str, dict[str, str]]) -> None:
        self._current.describe_tools(tools)

    def cancel_by_closing(self, request_id: int) -> bool:
        return self._current.cancel_by_closing(request_id)

    def close(self) -> None:
        self._current.close()
