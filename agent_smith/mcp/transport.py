"""The interface every MCP transport implements (stdio, Streamable HTTP).

A transport moves JSON-RPC frames (already-parsed JSON objects) between the
client and one server. It knows nothing of ids, methods or the lifecycle; the
client's JSON-RPC layer does. Frames from the server are handed to the
``on_frame`` callback given to :meth:`Transport.start`:

* stdio calls it from its reader thread;
* Streamable HTTP calls it from the thread that reads a POST's JSON or SSE
  body (the caller of :meth:`send`, or a per-request thread for requests so
  the caller's timeout governs), and from its GET-stream thread.

``on_frame`` must therefore be thread-safe and must not block for long.
"""

from __future__ import annotations

import json
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Protocol

from ..errors import McpError, TransportError
from ..logs import trace
from .config import SUPPORTED_PROTOCOL_VERSIONS

log = logging.getLogger(__name__)

Frame = dict[str, Any]
FrameHandler = Callable[[Frame], None]
CloseHandler = Callable[[Exception | None], None]


class FrameSender(Protocol):
    """:meth:`Transport.send`'s shape: a frame, and how long its sender will wait."""

    def __call__(self, frame: Frame, *, timeout: float | None = None) -> None: ...


def hand_over(on_frame: FrameHandler, frame: Frame, server: str) -> None:
    """Give a reader's frame to ``on_frame``; what it raises is logged, the reader goes on.

    One bad frame (or a bug in handling it) must not end the connection.
    """
    trace(log, f"mcp {server} recv", frame)
    try:
        on_frame(frame)
    except Exception:
        log.exception("MCP server %s: failed to handle a frame", server)


def encode_frame(frame: Frame, server: str) -> bytes:
    """``frame`` as compact UTF-8 JSON (one line), as every transport sends it.

    Raises McpError when the frame holds what JSON cannot carry (an object,
    a set, NaN, a lone surrogate): the caller's mistake, found before
    anything reaches the wire.
    """
    try:
        text = json.dumps(frame, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8")
    except (TypeError, ValueError) as err:  # UnicodeEncodeError is a ValueError
        what = frame.get("method") or "an answer"
        raise McpError(
            f"MCP server {server!r}: cannot send {what}: not valid JSON ({err})", server=server
        ) from err


#: Marks an error answer a transport made up for a request whose answer could not be read.
TRANSPORT_FAILURE = "agent_smith/transportFailure"


def transport_failure(message: str, *, http_status: int | None = None) -> dict[str, Any]:
    """The ``error`` of such an answer: the waiter raises TransportError (with the status)."""
    data = {TRANSPORT_FAILURE: True, "httpStatus": http_status}
    return {"code": -32000, "message": message, "data": data}


class StaleSession(Exception):
    """Raised by :meth:`Transport.send` when the server no longer knows the session.

    The client answers by initialising again once and, unless the frame was a
    ``tools/call``, sending it again.
    """


class Transport(ABC):
    """Moves JSON-RPC frames to and from one MCP server."""

    #: What error messages and logs call the server (its alias).
    server: str
    #: Where the server is, for error messages ("stdio", its URL).
    where: str = ""
    #: The protocol revisions a server may choose over this transport.
    protocol_versions: tuple[str, ...] = SUPPORTED_PROTOCOL_VERSIONS
    #: Whether the transport can carry the stateless 2026-07-28 generation.
    speaks_modern: bool = True

    @abstractmethod
    def start(self, on_frame: FrameHandler, on_closed: CloseHandler) -> None:
        """Open the connection (spawn the process, prepare the session).

        ``on_closed`` is called once if the connection ends without
        :meth:`close` (with the error, or ``None`` for a clean EOF).
        Raises :class:`~agent_smith.errors.TransportError` on failure.
        """

    @abstractmethod
    def send(self, frame: Frame, *, timeout: float | None = None) -> None:
        """Deliver one frame; raise TransportError (or StaleSession) on failure.

        ``timeout`` is how long the sender of a request will wait for its
        answer (None: the config's request timeout), for transports that
        must bound their own reads.
        """

    def protocol_chosen(self, protocol_version: str) -> None:
        """Called once ``initialize`` answered, before ``initialized`` is sent."""
        return None

    def negotiated(self, protocol_version: str) -> None:
        """Called once ``initialize`` succeeded and ``initialized`` was sent."""
        return None

    def describe_tools(self, tools: dict[str, dict[str, str]]) -> None:
        """The listed tools' ``x-mcp-header`` parameters: tool -> {argument: header name}."""
        return None

    def cancel_by_closing(self, request_id: int) -> bool:
        """Cancel a request by closing the stream its answer comes on; False if it cannot.

        A 2026-07-28 server over HTTP takes a closed stream as the
        cancellation; everywhere else the client sends ``notifications/cancelled``.
        """
        return False

    @abstractmethod
    def close(self) -> None:
        """Release everything: threads joined, child reaped, session deleted."""

    def _error(
        self, operation: str, what: str, *, http_status: int | None = None
    ) -> TransportError:
        """A TransportError about this server, saying where it is."""
        place = f" ({self.where})" if self.where else ""
        return TransportError(
            f"MCP server {self.server!r}{place}: {what}",
            operation=operation,
            endpoint_or_server=self.server,
            http_status=http_status,
        )
