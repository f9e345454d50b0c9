"""The Streamable HTTP transport: JSON-RPC frames over POST, SSE and GET (MCP 2025-06-18).

Each frame is POSTed on its own. The server answers with 202 (nothing to
read), a JSON body (one frame or a batch), or an SSE stream that carries
server requests and notifications before the response to the POSTed request.
Every frame of that body goes to ``on_frame``. A request's body is read on a
thread of its own (``agent_smith-mcp-post-<alias>-<n>``) so the caller waits
for the answer with its own timeout and can cancel it; notifications, answers
and ``initialize`` are sent and read in the caller's thread.

If an SSE response stream ends before its response arrived, the stream is
resumed with ``GET`` and ``Last-Event-ID`` after the server's ``retry`` delay
(SEP-1699; reading and resuming streams is :mod:`.sse_streams`); a stream that never
carried an event id cannot be resumed and the send fails. After
``initialized`` the GET listening stream (:mod:`.listener`) carries server
messages between calls.

The session (its id, the revision, stale detection, DELETE) is
:mod:`.http_session`; every request goes out through
:func:`~agent_smith.mcp.http_request.authorized_request`, which adds the
auth's headers and lets it answer a 401 or 403 (OAuth, :mod:`.auth`).
"""

from __future__ import annotations

import contextvars
import itertools
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import requests

from .._internal import json_input
from ..errors import AgentSmithError, McpProtocolError
from ..logs import trace
from .handoff import Handoff
from .http_headers import request_headers
from .http_request import (
    BearerToken,
    RequestAuth,
    authorized_request,
    error_excerpt,
    rpc_error_answer,
)
from .http_session import ACCEPT_POST, HttpSession
from .listener import GetStreamListener
from .open_responses import OpenResponses
from .sse_streams import (
    NOTHING,
    StreamPosition,
    content_type,
    no_read_timeout,
    pump,
    resume_until,
)
from .transport import (
    CloseHandler,
    Frame,
    FrameHandler,
    StaleSession,
    Transport,
    encode_frame,
    transport_failure,
)

if TYPE_CHECKING:
    from ..runtime import Runtime
    from .config import ServerConfig

log = logging.getLogger(__name__)

# How long send() waits for a request's status before leaving it to its thread.
_HEADER_GRACE = 0.5
_CONNECT_TIMEOUT = 10.0
# A POST's read timeout is its caller's wait plus this, so the caller's own
# timeout (which cancels the request on the server) fires first.
_READ_MARGIN = 5.0
_JOIN_TIMEOUT = 10.0


class StreamableHttpTransport(Transport):
    """MCP Streamable HTTP client transport on ``runtime.session``.

    ``on_frame`` is called from the thread that called :meth:`send` and from
    the GET listening thread (``agent_smith-mcp-listen-<alias>``).
    ``on_closed`` is never called: an HTTP server that goes away shows up as
    a :class:`~agent_smith.errors.TransportError` from the next :meth:`send`.
    ``auth`` authorizes every request (default: ``config.bearer_token``).
    """

    def __init__(
        self, config: ServerConfig, runtime: Runtime, *, auth: RequestAuth | None = None
    ) -> None:
        if not config.url:
            raise ValueError(f"MCP server {config.alias!r} has no url")
        self.server = config.alias
        self._url: str = config.url
        self.where = config.url
        self._timeout = float(config.request_timeout)
        self._session = runtime.session
        self._auth = auth or BearerToken(config.bearer_token)
        # The GET stream holds a connection for its whole life: keep it out of the shared pool.
        self._listen_session = requests.Session()
        self._lock = threading.Lock()
        self._state = HttpSession(self.server, config.headers)
        self._on_frame: FrameHandler | None = None
        self._closing = threading.Event()
        self._listener = GetStreamListener(
            self.server,
            # A listening stream never starts an authorization flow: requests do.
            open_stream=lambda last_id: self._open_get(
                last_id, self._listen_session, challenge=False
            ),
            read_stream=lambda response, position: self._pump(response, position, want=NOTHING),
        )
        self._responses = OpenResponses()
        self._header_params: dict[str, dict[str, str]] = {}
        self._readers: set[threading.Thread] = set()
        self._reader_ids = itertools.count(1)

    # -- Transport ---------------------------------------------------------------

    def start(self, on_frame: FrameHandler, on_closed: CloseHandler) -> None:
        """Remember the frame handler; no network I/O happens until the first send."""
        self._on_frame = on_frame
        self._closing.clear()

    def send(self, frame: Frame, *, timeout: float | None = None) -> None:
        """POST ``frame``; every frame of the answer goes to ``on_frame``.

        ``initialize``, notifications and answers are sent synchronously. A
        request's answer is read on its own thread
        (``agent_smith-mcp-post-<alias>-<n>``) so the caller's own timeout and
        cancellation govern how long it waits: ``send`` returns once the
        server's status is known, or after a short grace if the server holds
        its headers back (JSON response mode answers only when done). Failures
        found after ``send`` returned reach the waiter as an error answer to
        its id; a session found gone then makes the next ``send`` raise
        StaleSession. The POST's read timeout (in JSON response mode: how long
        the server may take to answer at all) is ``timeout`` (default: the
        config's request timeout) plus a margin. Raises StaleSession,
        TransportError, McpProtocolError, or McpError for a frame JSON cannot carry.
        """
        if self._closing.is_set():
            raise self._error("send", "transport is closed")
        body = encode_frame(frame, self.server)
        read_timeout = (self._timeout if timeout is None else timeout) + _READ_MARGIN
        method = frame.get("method")
        is_request = isinstance(method, str) and "id" in frame
        if method == "initialize":
            self._state.restart()
        elif self._state.stale:
            raise StaleSession(f"MCP server {self.server} dropped the session")
        if not is_request or method == "initialize":
            self._exchange(frame, body, read_timeout, None)
            return
        handoff = Handoff()
        thread = threading.Thread(
            target=contextvars.copy_context().run,  # its POST carries our trace context
            args=(self._exchange_on_thread, frame, body, read_timeout, handoff),
            name=f"agent_smith-mcp-post-{self.server}-{next(self._reader_ids)}",
            daemon=True,  # joined in close()
        )
        with self._lock:
            self._readers.add(thread)
        thread.start()
        error = handoff.wait(_HEADER_GRACE)
        if error is not None:
            raise error

    def _exchange(
        self, frame: Frame, body: bytes, read_timeout: float, handoff: Handoff | None
    ) -> None:
        """One POST: check the status, then read the answer (SSE resumed as needed)."""
        method = frame.get("method")
        headers = self._state.headers(accept=ACCEPT_POST)
        headers["Content-Type"] = "application/json"
        if self._state.modern:
            headers.update(request_headers(frame, self._header_params))
        trace(log, f"mcp {self.server} send", frame)
        had_session = headers.get("Mcp-Session-Id") is not None
        try:
            response = authorized_request(
                self._session,
                "POST",
                self._url,
                headers=headers,
                auth=self._auth,
                authorizing=handoff.authorizing if handoff is not None else None,
                data=body,
                stream=True,
                timeout=(_CONNECT_TIMEOUT, read_timeout),
            )
        except requests.RequestException as err:
            raise self._error("send", f"POST failed: {type(err).__name__}") from err
        with self._tracked(response, answering=frame.get("id") if handoff is not None else None):
            if self._check_status(response, frame, had_session=had_session):
                if handoff is not None:
                    handoff.report(None)
                return
            if method == "initialize":
                self._state.started(response)
            if handoff is not None:
                handoff.report(None)
            if response.status_code == 202:
                return
            if handoff is not None and content_type(response) == "text/event-stream":
                no_read_timeout(response)  # the caller's budget governs from here
                position = StreamPosition()
                if not self._pump(response, position, want=frame["id"]):
                    response.close()
                    self._resume_until(position, want=frame["id"])
                return
            self._read_body(response, want=frame.get("id"), waiting=handoff is not None)

    def _exchange_on_thread(
        self, frame: Frame, body: bytes, read_timeout: float, handoff: Handoff
    ) -> None:
        try:
            try:
                self._exchange(frame, body, read_timeout, handoff)
            except (AgentSmithError, StaleSession):
                raise
            except Exception as err:  # a bug here must fail the waiter, not leave it hanging
                log.exception("MCP server %s: reading an answer failed", self.server)
                raise self._error("send", f"reading the answer failed: {err}") from err
        except (AgentSmithError, StaleSession) as err:
            if handoff.report(err):
                return  # send() raises it
            if self._responses.abandoned(frame["id"]):
                return  # we closed its stream to cancel it: nobody waits
            if isinstance(err, StaleSession):
                self._state.stale = True
            if not self._closing.is_set():
                # The waiter learns of the failure through an error answer to its id.
                log.warning("MCP server %s: %s", self.server, err)
                message = str(err)
                self._deliver(
                    {
                        "jsonrpc": "2.0",
                        "id": frame["id"],
                        "error": transport_failure(
                            message, http_status=getattr(err, "http_status", None)
                        ),
                    }
                )
        finally:
            with self._lock:
                self._readers.discard(threading.current_thread())
            self._responses.finished(frame["id"])

    def protocol_chosen(self, protocol_version: str) -> None:
        """Send ``MCP-Protocol-Version: protocol_version`` on every later request."""
        self._state.use_protocol_version(protocol_version)

    def negotiated(self, protocol_version: str) -> None:
        """Send ``protocol_version`` from now on and open the GET listening stream."""
        self.protocol_chosen(protocol_version)
        if self._closing.is_set():
            return
        self._listener.start()

    def describe_tools(self, tools: dict[str, dict[str, str]]) -> None:
        """Keep the tools' ``x-mcp-header`` arguments for the ``Mcp-Param-*`` headers."""
        self._header_params = dict(tools)

    def cancel_by_closing(self, request_id: int) -> bool:
        """At 2026-07-28, close the stream of ``request_id``'s answer: that cancels it."""
        if not self._state.modern:
            return False
        return self._responses.cancel(request_id)

    def close(self) -> None:
        """Stop the listening thread, end the session with DELETE, release connections."""
        if self._closing.is_set():
            return
        self._closing.set()
        self._listener.stop()
        self._responses.wake_all()
        with self._lock:
            readers = list(self._readers)
        for thread in readers:
            thread.join(_JOIN_TIMEOUT)
            if thread.is_alive():
                log.warning("SSE reader %s of %s did not stop", thread.name, self.server)
        self._state.delete(self._session, self._url, self._auth)
        self._listen_session.close()

    # -- POST bodies -------------------------------------------------------------

    def _read_body(self, response: requests.Response, *, want: Any, waiting: bool) -> None:
        ctype = content_type(response)
        if ctype == "text/event-stream":  # an SSE answer to a notification: read it inline
            self._pump(response, StreamPosition(), want=NOTHING)
            return
        try:
            raw = response.content
        except (requests.RequestException, OSError) as err:
            raise self._error("send", f"reading the answer failed: {type(err).__name__}") from err
        if not raw.strip():
            if waiting:
                raise self._error("send", f"empty {response.status_code} answer to a request")
            return
        if ctype != "application/json":
            raise self._error("send", f"unexpected Content-Type {ctype or 'none'!r}")
        try:
            parsed = json_input.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as err:
            raise McpProtocolError(
                f"MCP server {self.server} sent a JSON body that does not parse", server=self.server
            ) from err
        for item in parsed if isinstance(parsed, list) else [parsed]:
            self._deliver(item)

    def _pump(self, response: requests.Response, position: StreamPosition, *, want: Any) -> bool:
        return pump(response, position, self._deliver, want=want, server=self.server)

    def _resume_until(self, position: StreamPosition, *, want: Any) -> None:
        """Resume a POST's SSE stream with GET + Last-Event-ID until ``want`` is answered."""

        def reopen(last_event_id: str) -> bool | None:
            response = self._open_get(last_event_id, self._session)
            if response is None:
                return None
            with self._tracked(response):
                return self._pump(response, position, want=want)

        resume_until(
            position, reopen, closing=self._closing, fail=lambda why: self._error("send", why)
        )

    # -- GET streams -------------------------------------------------------------

    def _open_get(
        self, last_event_id: str | None, session: requests.Session, *, challenge: bool = True
    ) -> requests.Response | None:
        """Open a GET SSE stream; None when the server does not offer one (or refuses)."""
        headers = self._state.headers(accept="text/event-stream")
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        try:
            response = authorized_request(
                session,
                "GET",
                self._url,
                headers=headers,
                auth=self._auth,
                challenge=challenge,
                stream=True,
                timeout=(_CONNECT_TIMEOUT, None),
            )
        except requests.RequestException as err:
            raise self._error("listen", f"GET failed: {type(err).__name__}") from err
        ctype = content_type(response)
        if response.status_code == 405:
            log.debug("MCP server %s offers no GET stream (405)", self.server)
        elif not response.ok or ctype != "text/event-stream":
            log.debug("MCP server %s refused the GET stream: %s", self.server, response.status_code)
        else:
            return response
        response.close()
        return None

    # -- helpers -----------------------------------------------------------------

    def _deliver(self, item: Any) -> None:
        if not isinstance(item, dict) or not ("method" in item or "id" in item):
            log.debug("MCP server %s sent a non-message frame; ignored", self.server)
            return
        trace(log, f"mcp {self.server} recv", item)
        handler = self._on_frame
        if handler is not None:
            handler(item)

    def _check_status(
        self, response: requests.Response, frame: Frame, *, had_session: bool
    ) -> bool:
        """Raise for an error status; True when its body was the request's JSON-RPC error answer."""
        status = response.status_code
        if status < 400:
            return False
        excerpt = error_excerpt(response)
        self._state.check_gone(status, excerpt, had_session=had_session)
        answer = rpc_error_answer(response, frame.get("id"))
        if answer is not None:
            self._deliver(answer)
            return True
        what = frame.get("method") or "frame"
        raise self._error("send", f"HTTP {status} for {what}: {excerpt}", http_status=status)

    @contextmanager
    def _tracked(self, response: requests.Response, *, answering: Any = None) -> Iterator[None]:
        """Read ``response`` registered (see :class:`.OpenResponses`); not once closing."""
        with self._responses.tracked(response, answering=answering):
            if self._closing.is_set():
                raise self._error("send", "transport is closed")
            yield
