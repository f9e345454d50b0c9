"""The synchronous chat-completions client: ``complete``, ``stream``, ``cancel``.

One HTTP path: the runtime's ``requests.Session``, always with
``stream=True`` so a live request has a socket that :meth:`LlmClient.cancel`
can shut down from another thread (``response.close()`` from another thread
can block inside ``http.client``; ``socket.shutdown`` wakes the reader at
once). Failed requests are retried per :class:`RetryPolicy` until a byte of
a streamed body has been delivered.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import requests
from urllib3.exceptions import HTTPError as _Urllib3Error
from urllib3.exceptions import ReadTimeoutError

from .._internal import json_input
from .._internal.posting import Poster
from .._internal.request_errors import request_error_cause
from .._internal.sockets import shutdown, shutdown_socket, watch_socket
from .._internal.sse_reader import read_chunks
from ..cancellation import CancellationToken
from ..errors import (
    AgentTimeoutError,
    CancelledError,
    ContextOverflowError,
    ParseError,
    TransportError,
)
from ..logs import TRACE, redact_headers, trace
from ..observer import ChatObservation, get_observer
from ..runtime import Runtime, default_runtime
from .api_error import error_from_body, error_from_json
from .body import build_body
from .endpoint import display_url, resolve_chat_url
from .events import Finished, StreamEvent
from .request import LlmRequest, LlmResponse, SamplingParams
from .retry import RetryPolicy
from .server_props import KnownWindow, fetch_context_window, props_url
from .stream_decoder import StreamDecoder, response_events
from .token_count import TokenCounter

log = logging.getLogger(__name__)

_OPERATION = "LLM request"
_ERROR_BODY_LIMIT = 64 * 1024


class _LiveCall:
    """One request in flight: its socket or response, and its abort switch."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._response: requests.Response | None = None
        self._waiting_on: socket.socket | None = None  # before the headers arrived
        self.cancelled = threading.Event()
        self.aborted = False  # mirrors `cancelled`; a plain read in the per-chunk loop

    def waiting_on(self, sock: socket.socket) -> None:
        """The request was sent on ``sock`` and now waits for response headers."""
        with self._lock:
            self._waiting_on = sock
        if self.cancelled.is_set():
            shutdown(sock)

    def attach(self, response: requests.Response) -> None:
        with self._lock:
            self._response = response
            self._waiting_on = None
        if self.cancelled.is_set():
            response.close()
            raise _cancelled()

    def detach(self) -> None:
        with self._lock:
            self._response = None

    def abort(self) -> None:
        """Mark cancelled and wake a reader blocked on the socket (any thread)."""
        self.aborted = True
        self.cancelled.set()
        with self._lock:
            response, sock = self._response, self._waiting_on
        if response is not None:
            shutdown_socket(response)
        elif sock is not None:
            shutdown(sock)

    def check(self) -> None:
        if self.cancelled.is_set():
            raise _cancelled()


class LlmClient:
    """A client for one OpenAI-compatible chat-completions endpoint.

    ``endpoint`` is a base URL (``http://127.0.0.1:8080`` or
    ``https://api.openai.com/v1``); ``model`` is sent when non-empty.
    ``request_timeout`` bounds connecting and each wait for data (seconds).
    ``retry_policy`` overrides ``max_retries``. Thread-safe: many threads may
    call one client at once.
    """

    def __init__(
        self,
        endpoint: str,
        model: str = "",
        *,
        api_key: str | None = None,
        request_timeout: float = 60.0,
        max_retries: int = 3,
        default_sampling: SamplingParams = SamplingParams(),  # noqa: B008 (frozen value)
        runtime: Runtime | None = None,
        retry_policy: RetryPolicy | None = None,
    ) -> None:
        if request_timeout <= 0:
            raise ValueError("request_timeout must be positive")
        self._endpoint = endpoint
        self._url = resolve_chat_url(endpoint)
        self._poster = Poster(self._url)  # reads proxy/CA/netrc settings once, not per request
        self._shown = display_url(self._url)
        self._model = model
        self._api_key = api_key or None
        self._timeout = request_timeout
        self._defaults = default_sampling
        self._runtime = runtime
        self._policy = retry_policy or RetryPolicy(max_retries=max_retries)
        self._lock = threading.Lock()
        self._live: set[_LiveCall] = set()
        self._window = KnownWindow()
        self._counter = TokenCounter(self._url)
        log.info("LLM client for %s (model %r)", self._shown, model)

    @property
    def endpoint(self) -> str:
        """The endpoint as configured."""
        return self._endpoint

    @property
    def model(self) -> str:
        return self._model

    @property
    def url(self) -> str:
        """The resolved chat-completions URL requests are posted to."""
        return self._url

    @property
    def default_sampling(self) -> SamplingParams:
        """The sampling every request starts from (its own fields override these)."""
        return self._defaults

    @property
    def runtime(self) -> Runtime | None:
        """The runtime given at construction (``None``: the process default is used)."""
        return self._runtime

    def complete(
        self, request: LlmRequest, *, cancel: CancellationToken | None = None
    ) -> LlmResponse:
        """Send ``request`` and return the whole reply (no streaming)."""
        body = build_body(request, model=self._model, defaults=self._defaults, stream=False)
        with self._chat_span(request, body) as span:
            return span.finish(self._complete(body, cancel, span))

    def _complete(
        self, body: dict[str, Any], cancel: CancellationToken | None, span: ChatObservation
    ) -> LlmResponse:
        with self._live_call(cancel) as call:
            response = self._send(body, call, span)
            try:
                data = self._read_body(response, call)
            finally:
                response.close()
        return self._whole_reply(data, response.status_code)

    def _whole_reply(self, data: bytes, status: int) -> LlmResponse:
        """A whole JSON reply body: the response, or the error it reports."""
        trace(log, "response body", data)
        try:
            parsed = json_input.loads(data)
        except ValueError as err:
            raise ParseError(
                f"reply from {self._shown} is not valid JSON ({getattr(err, 'msg', err)})",
                offset=getattr(err, "pos", 0),
            ) from err
        if isinstance(parsed, dict) and "error" in parsed and "choices" not in parsed:
            raise error_from_json(
                parsed,
                endpoint=self._shown,
                status=status,
                excerpt=data.decode("utf-8", "replace"),
                secret=self._api_key,
            )
        return LlmResponse.from_openai(parsed, lenient_arguments=True)

    def stream(
        self, request: LlmRequest, *, cancel: CancellationToken | None = None
    ) -> Iterator[StreamEvent]:
        """Send ``request`` streaming; yield events as they arrive, ``Finished`` last.

        Closing the generator early closes the HTTP response.
        """
        body = build_body(request, model=self._model, defaults=self._defaults, stream=True)
        with self._chat_span(request, body) as span, self._live_call(cancel) as call:
            response = self._send(body, call, span)
            try:
                decoder = StreamDecoder(endpoint=self._shown)
                if _is_json(response):
                    # Some proxies answer stream: true with the whole reply
                    # (and a few label their SSE as JSON: the body tells).
                    data = self._read_body(response, call)
                    if data.lstrip()[:1] == b"{":
                        events = response_events(self._whole_reply(data, 200))
                    else:
                        events = decoder.events([data])
                    yield from span.watch(events)
                else:
                    yield from span.watch(decoder.events(self._chunks(response, call)))
                call.check()
            finally:
                response.close()

    def complete_stream(
        self,
        request: LlmRequest,
        on_event: Callable[[StreamEvent], object],
        *,
        cancel: CancellationToken | None = None,
    ) -> LlmResponse:
        """Stream ``request``, calling ``on_event`` for each event; return the response.

        An exception raised by ``on_event`` ends the stream and propagates.
        """
        result: LlmResponse | None = None
        for event in self.stream(request, cancel=cancel):
            on_event(event)
            if isinstance(event, Finished):
                result = event.response
        if result is None:  # stream() always ends with Finished or raises
            raise TransportError(
                f"stream from {self._shown} ended without a result",
                operation="stream",
                endpoint_or_server=self._shown,
            )
        return result

    def context_window(self, *, ask: bool = True) -> int | None:
        """The tokens one request may fill, when the server says; None while unknown.

        Asked of the server once (llama-server's ``GET /props``, see
        :mod:`~agent_smith.llm.server_props`) and remembered; also learned from a
        :class:`~agent_smith.errors.ContextOverflowError` that names it.
        ``ask=False`` returns what is known without asking.
        """
        return self._window.get(self._ask_window if ask else None)

    def _ask_window(self) -> int | None:
        session = (self._runtime or default_runtime()).session
        url = props_url(self._url)
        return fetch_context_window(
            session, url, headers=self._headers(), timeout=min(self._timeout, 10.0)
        )

    def count_tokens(self, request: LlmRequest) -> int | None:
        """The exact prompt tokens of ``request`` where the server counts them, else None.

        llama-server renders and tokenizes it (see :mod:`~agent_smith.llm.token_count`);
        a server that cannot is asked once. None means: estimate (~4 characters a token).
        """
        body = build_body(request, model=self._model, defaults=self._defaults, stream=False)
        session = (self._runtime or default_runtime()).session
        timeout = min(self._timeout, 10.0)
        return self._counter.count(session, body, headers=self._headers(), timeout=timeout)

    def cancel(self) -> None:
        """Abort every request of this client in flight, from any thread."""
        with self._lock:
            calls = list(self._live)
        for call in calls:
            call.abort()

    # -- internals ---------------------------------------------------------

    def _chat_span(self, request: LlmRequest, body: dict[str, Any]) -> ChatObservation:
        return get_observer().on_chat_start(self, request, body)

    @contextmanager
    def _live_call(self, cancel: CancellationToken | None) -> Iterator[_LiveCall]:
        call = _LiveCall()
        with self._lock:
            self._live.add(call)
        unlink = cancel.on_cancel(call.abort) if cancel is not None else None
        try:
            yield call
        finally:
            if unlink is not None:
                unlink()
            call.detach()
            with self._lock:
                self._live.discard(call)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _send(
        self, body: dict[str, Any], call: _LiveCall, span: ChatObservation
    ) -> requests.Response:
        """POST ``body`` with retries; return a response with a 2xx status, body unread."""
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = self._headers()
        span.inject(headers)
        if body.get("stream"):
            headers["Accept"] = "text/event-stream"
        if log.isEnabledFor(TRACE):
            log.log(TRACE, "POST %s headers: %s", self._shown, redact_headers(headers))
            trace(log, "request body", body)
        log.debug(
            "POST %s (stream=%s, %d messages, %d tools)",
            self._shown,
            body.get("stream"),
            len(body["messages"]),
            len(body.get("tools", ())),
        )
        session = (self._runtime or default_runtime()).session
        attempt = 0
        while True:
            call.check()
            retry_after: str | None = None
            try:
                with watch_socket(call.waiting_on):
                    response = self._poster.post(
                        session, data=data, headers=headers, stream=True, timeout=self._timeout
                    )
            except requests.Timeout as err:
                call.check()
                failure: Exception = AgentTimeoutError(
                    f"{_OPERATION} to {self._shown} timed out after {self._timeout:g} s",
                    operation=_OPERATION,
                    budget=self._timeout,
                )
                cause: BaseException = err
            except requests.ConnectionError as err:
                call.check()
                failure = TransportError(
                    f"cannot reach LLM server {self._shown}: {request_error_cause(err)}",
                    operation=_OPERATION,
                    endpoint_or_server=self._shown,
                )
                cause = err
            except requests.RequestException as err:
                raise TransportError(
                    f"{_OPERATION} to {self._shown} failed: {request_error_cause(err)}",
                    operation=_OPERATION,
                    endpoint_or_server=self._shown,
                ) from err
            else:
                call.attach(response)
                status = response.status_code
                if status < 400:
                    return response
                try:
                    text = self._read_body(response, call, limit=_ERROR_BODY_LIMIT)
                finally:
                    response.close()
                    call.detach()
                failure = error_from_body(
                    status,
                    text.decode("utf-8", "replace"),
                    endpoint=self._shown,
                    secret=self._api_key,
                )
                cause = failure
                if status != 429 and status < 500:
                    if isinstance(failure, ContextOverflowError):
                        self._window.learn(failure.context_window)
                    raise failure
                retry_after = response.headers.get("Retry-After")
            if attempt >= self._policy.max_retries:
                if cause is failure:
                    raise failure
                raise failure from cause
            attempt += 1
            delay = self._policy.delay(attempt, retry_after)
            log.warning(
                "%s; retry %d/%d in %.2f s", failure, attempt, self._policy.max_retries, delay
            )
            span.retry(attempt, delay, failure)
            self._pause(delay, call)

    def _pause(self, delay: float, call: _LiveCall) -> None:
        if self._policy.sleep is not None:
            self._policy.sleep(delay)
        elif call.cancelled.wait(delay):
            raise _cancelled()
        call.check()

    def _read_body(
        self, response: requests.Response, call: _LiveCall, *, limit: int | None = None
    ) -> bytes:
        parts: list[bytes] = []
        size = 0
        for chunk in self._chunks(response, call):
            parts.append(chunk)
            size += len(chunk)
            if limit is not None and size >= limit:
                break
        call.check()
        return b"".join(parts)

    def _chunks(self, response: requests.Response, call: _LiveCall) -> Iterator[bytes]:
        """The body's bytes as the server flushes them; errors mapped to ours."""
        try:
            for chunk in read_chunks(response):
                if call.aborted:
                    raise _cancelled()
                yield chunk
        except (requests.RequestException, _Urllib3Error, OSError) as err:
            call.check()
            inner = err.args[0] if err.args else None
            if isinstance(err, (requests.Timeout, ReadTimeoutError)) or isinstance(
                inner, ReadTimeoutError
            ):
                raise AgentTimeoutError(
                    f"LLM server {self._shown} sent nothing for {self._timeout:g} s",
                    operation="stream",
                    budget=self._timeout,
                ) from err
            raise TransportError(
                f"reply from {self._shown} broke off: {request_error_cause(err)}",
                operation="stream",
                endpoint_or_server=self._shown,
            ) from err
        call.check()


def _is_json(response: requests.Response) -> bool:
    """Whether a reply to a streamed request came as one JSON body instead of SSE."""
    kind = response.headers.get("Content-Type", "")
    return kind.split(";", 1)[0].strip().lower() == "application/json"


def _cancelled() -> CancelledError:
    return CancelledError(f"{_OPERATION} was cancelled", operation=_OPERATION)
