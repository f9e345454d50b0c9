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
(SEP-1699); a stream that never carried an event id cannot be resumed and the
send fails.

After ``initialized`` a thread holds the optional GET listening stream open so
server requests and ``list_changed`` notifications reach the client between
calls; 405 (or any other refusal) means the server does not offer one. A
dropped listening stream is resumed the same way.

A 404, or a 400 naming the session, while a session id is held raises
:class:`~agent_smith.mcp.transport.StaleSession`; the client initialises again.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import requests
from sseclient import SSEClient

from ..errors import AgentSmithError, McpProtocolError, TransportError
from ..logs import redact, redact_headers, trace
from ..text import truncate_utf8
from .transport import CloseHandler, Frame, FrameHandler, StaleSession, Transport, encode_frame

if TYPE_CHECKING:
    from ..runtime import Runtime
    from .config import ServerConfig

log = logging.getLogger(__name__)

_ACCEPT_POST = "application/json, text/event-stream"
_NOTHING = object()  # an id no response carries: read a stream to its end
_DEFAULT_RETRY = 1.0  # seconds before resuming a stream when the server named no delay
_MAX_RESUMES = 5  # resumptions in a row that delivered nothing before giving up
_EXCERPT_BYTES = 300
# How long send() waits for a request's status before leaving it to its thread.
_HEADER_GRACE = 0.5
_CONNECT_TIMEOUT = 10.0
# A POST's read timeout is its caller's wait plus this, so the caller's own
# timeout (which cancels the request on the server) fires first.
_READ_MARGIN = 5.0
_DELETE_TIMEOUT = 5.0
_JOIN_TIMEOUT = 10.0


@dataclass
class _SseEvent:
    """One SSE event, including the data-less ones sseclient-py does not yield."""

    data: str
    id: str | None
    retry: int | None


class _SseReader(SSEClient):
    """sseclient-py's framing, yielding every event so ``id``/``retry`` are never lost.

    ``SSEClient.events()`` drops events without data, but per the SSE rules
    their ``id`` and ``retry`` still count, and MCP servers send exactly such
    "priming" events so a client can resume a stream (SEP-1699).
    """

    def all_events(self) -> Iterator[_SseEvent]:
        # _read() is sseclient-py's chunk stitching (not in its stubs); we parse the fields.
        for block in self._read():  # type: ignore[attr-defined]
            data: list[str] = []
            event_id: str | None = None
            retry: int | None = None
            for raw in block.splitlines():
                line = raw.decode("utf-8", errors="replace")
                if not line or line.startswith(":"):
                    continue  # blank line or comment
                field, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if field == "data":
                    data.append(value)
                elif field == "id" and "\0" not in value:
                    event_id = value
                elif field == "retry" and value.isdigit():
                    retry = int(value)
            yield _SseEvent("\n".join(data), event_id, retry)


class _Handoff:
    """Passes a POST's status outcome from its thread to send(), unless send() moved on."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.done = threading.Event()
        self._error: Exception | None = None
        self._abandoned = False

    def report(self, error: Exception | None) -> bool:
        """Record the outcome; False when send() no longer listens (or already heard)."""
        with self._lock:
            if self._abandoned or self.done.is_set():
                return False
            self._error = error
            self.done.set()
            return True

    def abandon(self) -> Exception | None:
        """send() stops listening; the error it must raise, if one came in time."""
        with self._lock:
            self._abandoned = True
            return self._error


class _Stream:
    """Where a resumable SSE stream got to: last event id and the server's retry delay."""

    def __init__(self) -> None:
        self.last_event_id: str | None = None
        self.retry = _DEFAULT_RETRY


class StreamableHttpTransport(Transport):
    """MCP Streamable HTTP client transport on ``runtime.session``.

    ``on_frame`` is called from the thread that called :meth:`send` and from
    the GET listening thread (``agent_smith-mcp-listen-<alias>``).
    ``on_closed`` is never called: an HTTP server that goes away shows up as
    a :class:`~agent_smith.errors.TransportError` from the next :meth:`send`.
    """

    def __init__(self, config: ServerConfig, runtime: Runtime) -> None:
        if not config.url:
            raise ValueError(f"MCP server {config.alias!r} has no url")
        self.server = config.alias
        self._config = config
        self._url: str = config.url
        self._timeout = float(config.request_timeout)
        self._session = runtime.session
        # The GET stream holds a connection for its whole life: keep it out of the shared pool.
        self._listen_session = requests.Session()
        self._lock = threading.Lock()
        self._session_id: str | None = None
        self._protocol_version: str | None = None
        self._on_frame: FrameHandler | None = None
        self._closing = threading.Event()
        self._listener: threading.Thread | None = None
        self._listener_stop = threading.Event()
        self._listen_response: requests.Response | None = None
        # POST bodies and resumed streams being read now: close() shuts them to wake readers.
        self._open: set[requests.Response] = set()
        self._readers: set[threading.Thread] = set()
        self._stale = False  # a request thread found the session gone
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
            with self._lock:
                self._session_id = None  # a fresh session: never offer the stale id
                self._protocol_version = None
                self._stale = False
        elif self._stale:
            raise StaleSession(f"MCP server {self.server} dropped the session")
        if not is_request or method == "initialize":
            self._exchange(frame, body, read_timeout, None)
            return
        handoff = _Handoff()
        thread = threading.Thread(
            target=self._exchange_on_thread,
            args=(frame, body, read_timeout, handoff),
            name=f"agent_smith-mcp-post-{self.server}-{next(self._reader_ids)}",
            daemon=True,  # joined in close()
        )
        with self._lock:
            self._readers.add(thread)
        thread.start()
        handoff.done.wait(_HEADER_GRACE)
        error = handoff.abandon()
        if error is not None:
            raise error

    def _exchange(
        self, frame: Frame, body: bytes, read_timeout: float, handoff: _Handoff | None
    ) -> None:
        """One POST: check the status, then read the answer (SSE resumed as needed)."""
        method = frame.get("method")
        headers = self._headers(accept=_ACCEPT_POST)
        headers["Content-Type"] = "application/json"
        log.debug("POST %s (%s) headers=%s", self._url, method, redact_headers(headers))
        trace(log, f"mcp {self.server} send", frame)
        had_session = headers.get("Mcp-Session-Id") is not None
        try:
            response = self._session.post(
                self._url,
                data=body,
                headers=headers,
                stream=True,
                timeout=(_CONNECT_TIMEOUT, read_timeout),
            )
        except requests.RequestException as err:
            raise self._error("send", f"POST failed: {type(err).__name__}") from err
        with self._tracked(response):
            self._check_status(response, had_session=had_session, what=str(method or "frame"))
            if method == "initialize":
                session_id = response.headers.get("Mcp-Session-Id")
                if session_id:
                    with self._lock:
                        self._session_id = session_id
            if handoff is not None:
                handoff.report(None)
            if response.status_code == 202:
                return
            if handoff is not None and _content_type(response) == "text/event-stream":
                # The caller's budget governs from here: no read timeout on the stream.
                sock = _socket_of(response)
                if sock is not None:
                    sock.settimeout(None)
                stream = _Stream()
                if not self._pump(response, stream, want=frame["id"]):
                    response.close()
                    self._resume_until(stream, want=frame["id"])
                return
            self._read_body(response, want=frame.get("id"), waiting=handoff is not None)

    def _exchange_on_thread(
        self, frame: Frame, body: bytes, read_timeout: float, handoff: _Handoff
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
            if isinstance(err, StaleSession):
                self._stale = True
            if not self._closing.is_set():
                # The waiter learns of the failure through an error answer to its id.
                log.warning("MCP server %s: %s", self.server, err)
                message = str(err)
                self._deliver(
                    {
                        "jsonrpc": "2.0",
                        "id": frame["id"],
                        "error": {"code": -32000, "message": message},
                    }
                )
        finally:
            with self._lock:
                self._readers.discard(threading.current_thread())

    def negotiated(self, protocol_version: str) -> None:
        """Send ``protocol_version`` from now on and open the GET listening stream."""
        with self._lock:
            self._protocol_version = protocol_version
        self._stop_listener()
        if self._closing.is_set():
            return
        self._listener_stop = threading.Event()
        thread = threading.Thread(
            target=self._listen,
            args=(self._listener_stop,),
            name=f"agent_smith-mcp-listen-{self.server}",
            daemon=True,  # joined in close(); daemon only so a forgotten client cannot hang exit
        )
        self._listener = thread
        thread.start()

    def close(self) -> None:
        """Stop the listening thread, end the session with DELETE, release connections."""
        if self._closing.is_set():
            return
        self._closing.set()
        self._stop_listener()
        with self._lock:
            open_now = list(self._open)
        for response in open_now:
            _shutdown(response)
        with self._lock:
            readers = list(self._readers)
        for thread in readers:
            thread.join(_JOIN_TIMEOUT)
            if thread.is_alive():
                log.warning("SSE reader %s of %s did not stop", thread.name, self.server)
        self._delete_session()
        self._listen_session.close()

    # -- POST bodies -------------------------------------------------------------

    def _read_body(self, response: requests.Response, *, want: Any, waiting: bool) -> None:
        ctype = _content_type(response)
        if ctype == "text/event-stream":  # an SSE answer to a notification: read it inline
            self._pump(response, _Stream(), want=_NOTHING)
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
            parsed = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as err:
            raise McpProtocolError(
                f"MCP server {self.server} sent a JSON body that does not parse", server=self.server
            ) from err
        for item in parsed if isinstance(parsed, list) else [parsed]:
            self._deliver(item)

    def _pump(self, response: requests.Response, stream: _Stream, *, want: Any) -> bool:
        """Feed one SSE body to on_frame; True once the response with id ``want`` passed."""
        reader = _SseReader(_chunks(response))
        try:
            for event in reader.all_events():
                if event.id is not None:
                    stream.last_event_id = event.id
                if event.retry is not None:
                    stream.retry = event.retry / 1000.0
                if not event.data.strip():
                    continue
                try:
                    parsed = json.loads(event.data)
                except ValueError:
                    log.warning("MCP server %s sent an SSE event that is not JSON", self.server)
                    continue
                got = False
                for item in parsed if isinstance(parsed, list) else [parsed]:
                    self._deliver(item)
                    got = got or _is_response_to(item, want)
                if got:
                    return True
        except (requests.RequestException, OSError, ValueError) as err:
            # Also how close() wakes a blocked reader: the caller checks _closing.
            log.debug("SSE stream from %s ended: %s", self.server, type(err).__name__)
        return False

    def _resume_until(self, stream: _Stream, *, want: Any) -> None:
        """Resume a POST's SSE stream with GET + Last-Event-ID until ``want`` is answered."""
        for _ in range(_MAX_RESUMES):
            if stream.last_event_id is None:
                raise self._error("send", "SSE stream ended before the response")
            if self._closing.wait(stream.retry):
                raise self._error("send", "transport closed while resuming a stream")
            before = stream.last_event_id
            response = self._open_get(stream.last_event_id, self._session)
            if response is None:
                raise self._error("send", "SSE stream ended and the server refused to resume it")
            with self._tracked(response):
                if self._pump(response, stream, want=want):
                    return
            if stream.last_event_id == before:
                continue  # nothing new came; counts against the budget
        raise self._error("send", "SSE stream kept ending before the response")

    # -- GET listening stream ----------------------------------------------------

    def _listen(self, stop: threading.Event) -> None:
        stream = _Stream()
        failures = 0
        while not stop.is_set():
            try:
                response = self._open_get(stream.last_event_id, self._listen_session)
            except TransportError as err:
                response = None
                failures += 1
                log.debug("GET stream of %s failed: %s", self.server, err)
                if failures >= _MAX_RESUMES:
                    log.warning("GET stream of %s: giving up after %d tries", self.server, failures)
                    return
            else:
                if response is None:
                    return  # not offered
                with self._lock:
                    self._listen_response = response
                before = stream.last_event_id
                try:
                    if not stop.is_set():  # stop was set before we registered: do not block
                        self._pump(response, stream, want=_NOTHING)
                finally:
                    with self._lock:
                        self._listen_response = None
                    response.close()
                failures = 0 if stream.last_event_id != before else failures + 1
                if failures >= _MAX_RESUMES:
                    log.warning("GET stream of %s keeps ending without events", self.server)
                    return
            if stop.wait(stream.retry):
                return
            log.debug("resuming GET stream of %s after %s", self.server, stream.last_event_id)

    def _open_get(
        self, last_event_id: str | None, session: requests.Session
    ) -> requests.Response | None:
        """Open a GET SSE stream; None when the server does not offer one (or refuses)."""
        headers = self._headers(accept="text/event-stream")
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        log.debug("GET %s headers=%s", self._url, redact_headers(headers))
        try:
            response = session.get(
                self._url, headers=headers, stream=True, timeout=(_CONNECT_TIMEOUT, None)
            )
        except requests.RequestException as err:
            raise self._error("listen", f"GET failed: {type(err).__name__}") from err
        ctype = _content_type(response)
        if response.status_code == 405:
            log.debug("MCP server %s offers no GET stream (405)", self.server)
        elif not response.ok or ctype != "text/event-stream":
            log.debug("MCP server %s refused the GET stream: %s", self.server, response.status_code)
        else:
            return response
        response.close()
        return None

    def _stop_listener(self) -> None:
        thread = self._listener
        if thread is None:
            return
        self._listener_stop.set()
        with self._lock:
            response = self._listen_response
        if response is not None:
            _shutdown(response)  # wakes the thread blocked reading it
        thread.join(_JOIN_TIMEOUT)
        if thread.is_alive():
            log.warning("GET stream thread of %s did not stop", self.server)
        self._listener = None

    # -- helpers -----------------------------------------------------------------

    def _deliver(self, item: Any) -> None:
        if not isinstance(item, dict) or not ("method" in item or "id" in item):
            log.debug("MCP server %s sent a non-message frame; ignored", self.server)
            return
        trace(log, f"mcp {self.server} recv", item)
        handler = self._on_frame
        if handler is not None:
            handler(item)

    def _headers(self, *, accept: str) -> dict[str, str]:
        headers = dict(self._config.headers or {})
        headers["Accept"] = accept
        if self._config.bearer_token:
            headers["Authorization"] = f"Bearer {self._config.bearer_token}"
        with self._lock:
            if self._session_id is not None:
                headers["Mcp-Session-Id"] = self._session_id
            if self._protocol_version is not None:
                headers["MCP-Protocol-Version"] = self._protocol_version
        return headers

    def _check_status(self, response: requests.Response, *, had_session: bool, what: str) -> None:
        status = response.status_code
        if status < 400:
            return
        excerpt = _excerpt(response)
        if had_session and (status == 404 or (status == 400 and "session" in excerpt.lower())):
            log.info("MCP server %s no longer knows our session (HTTP %d)", self.server, status)
            with self._lock:
                self._session_id = None
            raise StaleSession(f"MCP server {self.server} answered {status}: session gone")
        raise self._error("send", f"HTTP {status} for {what}: {excerpt}")

    @contextmanager
    def _tracked(self, response: requests.Response) -> Iterator[None]:
        """Register a response being read so close() can wake its reader."""
        with self._lock:
            self._open.add(response)
        try:
            if self._closing.is_set():
                raise self._error("send", "transport is closed")
            yield
        finally:
            self._untrack(response)

    def _untrack(self, response: requests.Response) -> None:
        with self._lock:
            self._open.discard(response)
        response.close()

    def _delete_session(self) -> None:
        with self._lock:
            session_id = self._session_id
            self._session_id = None
        if session_id is None:
            return
        headers = self._headers(accept=_ACCEPT_POST)
        headers["Mcp-Session-Id"] = session_id
        try:
            response = self._session.delete(self._url, headers=headers, timeout=_DELETE_TIMEOUT)
        except requests.RequestException as err:
            log.debug("DELETE of %s session failed: %s", self.server, type(err).__name__)
            return
        response.close()
        if response.status_code not in (200, 202, 204, 405):
            log.debug("DELETE of %s session answered %d", self.server, response.status_code)

    def _error(self, operation: str, what: str) -> TransportError:
        return TransportError(
            f"MCP server {self.server} ({self._url}): {what}",
            operation=operation,
            endpoint_or_server=self.server,
        )


def _is_response_to(item: Any, want: Any) -> bool:
    # Ids may be 0: compare, never test for truthiness.
    return (
        isinstance(item, dict)
        and "method" not in item
        and ("result" in item or "error" in item)
        and item.get("id") == want
        and type(item.get("id")) is type(want)
    )


def _content_type(response: requests.Response) -> str:
    return response.headers.get("Content-Type", "").split(";")[0].strip().lower()


def _chunks(response: requests.Response) -> Iterator[bytes]:
    """The body's bytes as they arrive (never waiting to fill a buffer)."""
    raw = response.raw
    read1 = getattr(raw, "read1", None)
    if getattr(raw, "chunked", False) or read1 is None:
        # Each HTTP chunk is yielded as soon as it is complete.
        yield from response.iter_content(chunk_size=None)
        return
    # A body delimited by the connection closing: iter_content(None) would read to EOF.
    while True:
        data = read1(65536, decode_content=True)
        if not data:
            return
        yield data


def _excerpt(response: requests.Response) -> str:
    """A short, redacted, one-line excerpt of an error body."""
    try:
        text = response.content[: 64 * 1024].decode("utf-8", errors="replace")
    except (requests.RequestException, OSError):
        return "<body unreadable>"
    shown = redact(text)
    return " ".join(truncate_utf8(str(shown), _EXCERPT_BYTES).split())


def _shutdown(response: requests.Response) -> None:
    """Wake a thread blocked reading ``response`` by shutting its socket down.

    Closing a socket from another thread does not interrupt a blocked recv()
    on Linux; shutdown() does.
    """
    sock = _socket_of(response)
    if sock is not None:
        with contextlib.suppress(OSError):  # already closed
            sock.shutdown(socket.SHUT_RDWR)
    else:
        response.close()


def _socket_of(response: requests.Response) -> socket.socket | None:
    raw = response.raw
    connection = getattr(raw, "_connection", None) or getattr(raw, "connection", None)
    sock = getattr(connection, "sock", None)
    if isinstance(sock, socket.socket):
        return sock
    fp = getattr(getattr(getattr(raw, "_fp", None), "fp", None), "raw", None)
    sock = getattr(fp, "_sock", None)
    return sock if isinstance(sock, socket.socket) else None
