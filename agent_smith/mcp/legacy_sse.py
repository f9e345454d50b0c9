"""The legacy HTTP+SSE transport of MCP 2024-11-05: one GET stream down, POSTs up.

``start`` opens the server's SSE endpoint with GET and waits for its first
``endpoint`` event, whose data is the URL to POST messages to (relative to
the SSE URL, and refused unless on the same origin). A reader thread
(``agent_smith-mcp-sse-<alias>``) then hands every ``message`` event's
JSON-RPC frame to ``on_frame``: answers to our POSTs, server requests and
notifications all travel down this one stream. ``send`` POSTs one frame and
expects 202 (or any 2xx); the answer comes on the stream.

The stream ending (the server went away) is reported once through
``on_closed``; the client reconnects on its next operation. Requests are
authorized like Streamable HTTP's (:mod:`.http_request`), OAuth included.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING
from urllib.parse import urljoin

import requests

from .._internal.sse_reader import SseReader, read_chunks
from ..logs import trace
from .auth.urls import origin
from .config import SUPPORTED_PROTOCOL_VERSIONS
from .http_request import BearerToken, RequestAuth, authorized_request, error_excerpt
from .sse_streams import STREAM_ERRORS, content_type, event_frames, no_read_timeout, wake_reader
from .transport import CloseHandler, Frame, FrameHandler, Transport, encode_frame, hand_over

if TYPE_CHECKING:
    from ..runtime import Runtime
    from .config import ServerConfig

log = logging.getLogger(__name__)

LEGACY_PROTOCOL_VERSION = "2024-11-05"
_CONNECT_TIMEOUT = 10.0
_JOIN_TIMEOUT = 10.0


class LegacySseTransport(Transport):
    """MCP's 2024-11-05 HTTP+SSE client transport; ``config.url`` is the SSE endpoint.

    ``auth`` authorizes every request (default: ``config.bearer_token``).
    """

    protocol_versions = (LEGACY_PROTOCOL_VERSION, *SUPPORTED_PROTOCOL_VERSIONS)
    speaks_modern = False

    def __init__(
        self, config: ServerConfig, runtime: Runtime, *, auth: RequestAuth | None = None
    ) -> None:
        if not config.url:
            raise ValueError(f"MCP server {config.alias!r} has no url")
        self.server = config.alias
        self.where = config.url
        self._url: str = config.url
        self._extra = dict(config.headers or {})
        self._timeout = float(config.request_timeout)
        self._session = runtime.session
        # The stream holds its connection for the transport's life: not from the shared pool.
        self._stream_session = requests.Session()
        self._auth = auth or BearerToken(config.bearer_token)
        self._lock = threading.Lock()
        self._endpoint: str | None = None
        self._endpoint_known = threading.Event()
        self._protocol_version: str | None = None
        self._response: requests.Response | None = None
        self._reader: threading.Thread | None = None
        self._closing = threading.Event()
        self._ended_once = threading.Lock()

    # -- Transport ---------------------------------------------------------------

    def start(self, on_frame: FrameHandler, on_closed: CloseHandler) -> None:
        """Open the SSE stream and wait (up to the request timeout) for its ``endpoint`` event."""
        headers = {**self._extra, "Accept": "text/event-stream"}
        try:
            response = authorized_request(
                self._stream_session,
                "GET",
                self._url,
                headers=headers,
                auth=self._auth,
                stream=True,
                timeout=(_CONNECT_TIMEOUT, None),
            )
        except requests.RequestException as err:
            self._stream_session.close()
            raise self._error("connect", f"GET failed: {type(err).__name__}") from err
        if not response.ok or content_type(response) != "text/event-stream":
            status = response.status_code
            what = (
                f"HTTP {status}: {error_excerpt(response)}"
                if not response.ok
                else (f"the answer is {content_type(response) or 'untyped'}, not an SSE stream")
            )
            response.close()
            self._stream_session.close()
            raise self._error(
                "connect", f"GET of the SSE stream failed: {what}", http_status=status
            )
        self._response = response
        self._reader = threading.Thread(
            target=self._read,
            args=(response, on_frame, on_closed),
            name=f"agent_smith-mcp-sse-{self.server}",
            daemon=True,  # joined in close()
        )
        self._reader.start()
        if not self._endpoint_known.wait(self._timeout) or self._endpoint is None:
            self.close()
            raise self._error("connect", "the SSE stream sent no endpoint event")
        log.debug("MCP server %s: messages go to %s", self.server, self._endpoint)

    def send(self, frame: Frame, *, timeout: float | None = None) -> None:
        """POST one frame to the message endpoint; its answer comes on the stream."""
        endpoint = self._endpoint
        if self._closing.is_set() or endpoint is None:
            raise self._error("send", "transport is closed")
        body = encode_frame(frame, self.server)
        headers = {**self._extra, "Content-Type": "application/json"}
        with self._lock:
            if self._protocol_version is not None:
                headers["MCP-Protocol-Version"] = self._protocol_version
        trace(log, f"mcp {self.server} send", frame)
        try:
            response = authorized_request(
                self._session,
                "POST",
                endpoint,
                headers=headers,
                auth=self._auth,
                data=body,
                timeout=(_CONNECT_TIMEOUT, self._timeout),
            )
        except requests.RequestException as err:
            raise self._error("send", f"POST failed: {type(err).__name__}") from err
        with response:
            if not response.ok:
                status = response.status_code
                what = f"HTTP {status} for {frame.get('method') or 'an answer'}"
                raise self._error("send", f"{what}: {error_excerpt(response)}", http_status=status)

    def protocol_chosen(self, protocol_version: str) -> None:
        """Send ``MCP-Protocol-Version`` on every later POST (harmless to a 2024-11-05 server)."""
        with self._lock:
            self._protocol_version = protocol_version

    def close(self) -> None:
        """Close the stream and join the reader thread."""
        if self._closing.is_set():
            return
        self._closing.set()
        response = self._response
        if response is not None:
            wake_reader(response)
        reader = self._reader
        if reader is not None and reader is not threading.current_thread():
            reader.join(_JOIN_TIMEOUT)
            if reader.is_alive():
                log.warning("SSE reader %s of %s did not stop", reader.name, self.server)
        if response is not None:
            response.close()
        self._stream_session.close()

    # -- the stream ----------------------------------------------------------------

    def _read(
        self, response: requests.Response, on_frame: FrameHandler, on_closed: CloseHandler
    ) -> None:
        no_read_timeout(response)  # a quiet stream is normal
        error: Exception | None = None
        try:
            for event in SseReader(read_chunks(response)).all_events():
                if event.event == "endpoint":
                    self._found_endpoint(event.data.strip())
                elif event.event == "message" and event.data.strip():
                    self._deliver(event.data, on_frame)
        except STREAM_ERRORS as err:
            error = err
        finally:
            self._endpoint_known.set()  # start() must not wait for an endpoint that cannot come
        if self._closing.is_set() or not self._ended_once.acquire(blocking=False):
            return
        why = f"the SSE stream broke: {type(error).__name__}" if error else "the SSE stream ended"
        log.info("MCP server %s: %s", self.server, why)
        on_closed(self._error("receive", f"connection lost: {why}"))

    def _found_endpoint(self, data: str) -> None:
        if self._endpoint is not None:
            return  # only the first endpoint event counts
        endpoint = urljoin(self._url, data)
        if origin(endpoint) != origin(self._url):
            log.warning("MCP server %s named an endpoint on another origin; refused", self.server)
        else:
            self._endpoint = endpoint
        self._endpoint_known.set()

    def _deliver(self, data: str, on_frame: FrameHandler) -> None:
        for item in event_frames(data, self.server):
            if isinstance(item, dict):
                hand_over(on_frame, item, self.server)
