"""The HTTP path every provider shares: POST with retries, cancellation, the body's chunks.

One HTTP path: the runtime's ``requests.Session``, always with
``stream=True`` so a live request has a socket that :meth:`HttpTransport.cancel`
can shut down from another thread (``response.close()`` from another thread
can block inside ``http.client``; ``socket.shutdown`` wakes the reader at
once). Failed requests are retried per :class:`RetryPolicy` until a byte of
a streamed body has been delivered: connect failures, timeouts, 5xx (529
"overloaded" included) and 429, waiting what ``Retry-After`` says.

A provider client owns one :class:`HttpTransport` and wraps each request in
:meth:`HttpTransport.live_call`; it builds the body and decodes the reply,
the transport moves the bytes and turns every failure into a typed error
that names the provider (``who``) and its server.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import requests
from urllib3.exceptions import HTTPError as _Urllib3Error
from urllib3.exceptions import ReadTimeoutError

from .._internal import json_input
from .._internal.posting import Poster
from .._internal.request_errors import request_error_cause
from .._internal.sockets import shutdown, shutdown_socket, watch_socket
from .._internal.sse_reader import read_chunks
from ..base.cancellation import CancellationToken
from ..errors import AgentTimeoutError, CancelledError, LlmApiError, ParseError, TransportError
from ..logs import TRACE, redact_headers, trace
from ..observer import NO_CHAT, ChatObservation
from ..runtime import Runtime, default_runtime
from .api_error import error_from_body, error_from_json
from .retry import RetryPolicy
from .wire_bytes import encode_body

log = logging.getLogger(__name__)

_OPERATION = "LLM request"
Signer = Callable[[str, bytes, dict[str, str]], None]
E = TypeVar("E")
_ERROR_BODY_LIMIT = 64 * 1024


class LiveCall:
    """One request in flight: its socket or response, and its abort switch.

    The socket is shut down only while the call still holds it: the pool's
    release hook (:meth:`released`) and :meth:`abort` take the same lock, so a
    connection on its way back to the pool is never shut down under the next
    request that takes it; one an abort may have reached is closed instead.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._response: requests.Response | None = None
        self._sock: socket.socket | None = None  # the connection's, while this call holds it
        self.cancelled = threading.Event()
        self.aborted = False  # mirrors `cancelled`; a plain read in the per-chunk loop

    def waiting_on(self, sock: socket.socket) -> Callable[[], bool]:
        """The request was sent on ``sock`` and now waits for response headers.

        Returns the connection's release hook (:meth:`released`).
        """
        with self._lock:
            self._sock = sock
            if self.cancelled.is_set():
                shutdown(sock)
        return self.released

    def released(self) -> bool:
        """The connection goes back to the pool: let go of it; True if it must be closed."""
        with self._lock:
            self._sock = None
            self._response = None
            return self.cancelled.is_set()

    def attach(self, response: requests.Response) -> None:
        with self._lock:
            self._response = response
        if self.cancelled.is_set():
            response.close()
            raise cancelled_error()

    def detach(self) -> None:
        with self._lock:
            self._response = None

    def abort(self) -> None:
        """Mark cancelled and wake a reader blocked on the socket (any thread)."""
        with self._lock:
            self.aborted = True
            self.cancelled.set()
            if self._sock is not None:
                shutdown(self._sock)
            elif self._response is not None:  # a connection the pool did not announce
                shutdown_socket(self._response)

    def check(self) -> None:
        if self.cancelled.is_set():
            raise cancelled_error()


class HttpTransport:
    """POSTs JSON for one provider client and reads the replies (see the module doc).

    ``who`` names the provider in errors (``"LLM server"``, ``"Anthropic API"``);
    ``shown`` is the server's URL without secrets; ``secret`` (the API key)
    is cut out of every error text. Thread-safe.
    """

    def __init__(
        self,
        *,
        who: str,
        shown: str,
        timeout: float,
        policy: RetryPolicy,
        runtime: Runtime | None,
        secret: str | None,
    ) -> None:
        if timeout <= 0:
            raise ValueError("request_timeout must be positive")
        self.who = who
        self.shown = shown
        self.timeout = timeout
        self.policy = policy
        self.runtime = runtime
        self.secret = secret
        self._lock = threading.Lock()
        self._live: set[LiveCall] = set()
        self._posters: dict[str, Poster] = {}  # environment settings read once per URL

    def cancel(self) -> None:
        """Abort every request in flight, from any thread."""
        with self._lock:
            calls = list(self._live)
        for call in calls:
            call.abort()

    @contextmanager
    def live_call(self, cancel: CancellationToken | None) -> Iterator[LiveCall]:
        """A call registered for :meth:`cancel` and linked to ``cancel`` while the block runs."""
        call = LiveCall()
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

    def post(
        self,
        url: str,
        body: dict[str, Any],
        headers: dict[str, str],
        call: LiveCall,
        observer: ChatObservation = NO_CHAT,
        sign: Signer | None = None,
    ) -> requests.Response:
        """POST ``body`` with retries; return a response with a 2xx status, body unread.

        ``observer`` (the call's observation from the observer seam) gets the
        trace context into the headers and hears of each retry. ``sign(url, data,
        headers)`` adds a request signature (AWS SigV4) to the headers of each attempt.
        """
        data = encode_body(body)
        observer.inject(headers)
        if log.isEnabledFor(TRACE):
            log.log(TRACE, "POST %s headers: %s", self.shown, redact_headers(headers))
            trace(log, "request body", body)
        log.debug("POST %s (stream=%s)", self.shown, body.get("stream"))
        session = (self.runtime or default_runtime()).session
        attempt = 0
        while True:
            call.check()
            retry_after: str | None = None
            if sign is not None:
                sign(url, data, headers)
            try:
                with watch_socket(call.waiting_on):
                    if sign is not None:  # signed headers differ each time: nothing to reuse
                        response = session.post(
                            url, data=data, headers=headers, stream=True, timeout=self.timeout
                        )
                    else:
                        response = self._poster(url).post(
                            session, data=data, headers=headers, stream=True, timeout=self.timeout
                        )
            except requests.Timeout as err:
                call.check()
                failure: Exception = AgentTimeoutError(
                    f"{_OPERATION} to {self.who} {self.shown} timed out after {self.timeout:g} s",
                    operation=_OPERATION,
                    budget=self.timeout,
                )
                cause: BaseException = err
            except requests.ConnectionError as err:
                call.check()
                failure = TransportError(
                    f"cannot reach {self.who} {self.shown}: {request_error_cause(err)}",
                    operation=_OPERATION,
                    endpoint_or_server=self.shown,
                )
                cause = err
            except requests.RequestException as err:
                raise TransportError(
                    f"{_OPERATION} to {self.who} {self.shown} failed: {request_error_cause(err)}",
                    operation=_OPERATION,
                    endpoint_or_server=self.shown,
                ) from err
            else:
                call.attach(response)
                status = response.status_code
                if status < 400:
                    return response
                try:
                    text = self.read_body(response, call, limit=_ERROR_BODY_LIMIT)
                finally:
                    response.close()
                    call.detach()
                failure = error_from_body(
                    status,
                    text.decode("utf-8", "replace"),
                    endpoint=self.shown,
                    secret=self.secret,
                    who=self.who,
                    kind=response.headers.get("x-amzn-ErrorType", "").split(":", 1)[0],
                )
                cause = failure
                if status != 429 and status < 500:
                    raise failure
                retry_after = response.headers.get("Retry-After")
            if attempt >= self.policy.max_retries:
                if cause is failure:
                    raise failure
                raise failure from cause
            attempt += 1
            delay = self.policy.delay(attempt, retry_after)
            log.warning(
                "%s; retry %d/%d in %.2f s", failure, attempt, self.policy.max_retries, delay
            )
            observer.retry(attempt, delay, failure)
            self._pause(delay, call)

    def post_json(
        self,
        url: str,
        body: dict[str, Any],
        headers: dict[str, str],
        cancel: CancellationToken | None,
        observer: ChatObservation = NO_CHAT,
        sign: Signer | None = None,
    ) -> tuple[Any, bytes, int]:
        """POST ``body`` (see :meth:`post`) and read the whole JSON reply: parsed, bytes, status."""
        with self.live_call(cancel) as call:
            response = self.post(url, body, headers, call, observer, sign)
            try:
                parsed, data = self.read_json(response, call)
            finally:
                response.close()
        return parsed, data, response.status_code

    def post_stream(
        self,
        url: str,
        body: dict[str, Any],
        headers: dict[str, str],
        cancel: CancellationToken | None,
        decode: Callable[[Iterable[bytes]], Iterator[E]],
        observer: ChatObservation = NO_CHAT,
        sign: Signer | None = None,
    ) -> Iterator[E]:
        """POST ``body`` and yield what ``decode`` makes of the body's chunks as they arrive.

        Closing the generator early closes the HTTP response.
        """
        with self.live_call(cancel) as call:
            response = self.post(url, body, headers, call, observer, sign)
            try:
                yield from decode(self.chunks(response, call))
                call.check()
            finally:
                response.close()

    def json_error(self, parsed: Any, data: bytes, status: int) -> LlmApiError:
        """The error a 2xx JSON reply reports in its body, naming the provider."""
        return error_from_json(
            parsed,
            endpoint=self.shown,
            status=status,
            excerpt=data.decode("utf-8", "replace"),
            secret=self.secret,
            who=self.who,
        )

    def _poster(self, url: str) -> Poster:
        poster = self._posters.get(url)
        if poster is None:
            with self._lock:
                poster = self._posters.setdefault(url, Poster(url))
        return poster

    def read_body(
        self, response: requests.Response, call: LiveCall, *, limit: int | None = None
    ) -> bytes:
        """The whole body (or its first ``limit`` bytes)."""
        parts: list[bytes] = []
        size = 0
        for chunk in self.chunks(response, call):
            parts.append(chunk)
            size += len(chunk)
            if limit is not None and size >= limit:
                break
        call.check()
        return b"".join(parts)

    def read_json(self, response: requests.Response, call: LiveCall) -> tuple[Any, bytes]:
        """The whole body parsed as JSON, and its bytes; ParseError naming the provider."""
        return self.read_json_bytes(self.read_body(response, call))

    def read_json_bytes(self, data: bytes) -> tuple[Any, bytes]:
        """``data`` parsed as JSON, and ``data``; ParseError naming the provider."""
        trace(log, "response body", data)
        try:
            return json_input.loads(data), data
        except ValueError as err:
            raise ParseError(
                f"reply from {self.who} {self.shown} is not valid JSON"
                f" ({getattr(err, 'msg', err)}): {data[:80]!r}",
                offset=getattr(err, "pos", 0),
            ) from err

    def chunks(self, response: requests.Response, call: LiveCall) -> Iterator[bytes]:
        """The body's bytes as the server flushes them; errors mapped to ours."""
        try:
            for chunk in read_chunks(response):
                if call.aborted:
                    raise cancelled_error()
                yield chunk
        except (requests.RequestException, _Urllib3Error, OSError) as err:
            call.check()
            inner = err.args[0] if err.args else None
            if isinstance(err, (requests.Timeout, ReadTimeoutError)) or isinstance(
                inner, ReadTimeoutError
            ):
                raise AgentTimeoutError(
                    f"{self.who} {self.shown} sent nothing for {self.timeout:g} s",
                    operation="stream",
                    budget=self.timeout,
                ) from err
            raise TransportError(
                f"reply from {self.who} {self.shown} broke off: {request_error_cause(err)}",
                operation="stream",
                endpoint_or_server=self.shown,
            ) from err
        call.check()

    def _pause(self, delay: float, call: LiveCall) -> None:
        if self.policy.sleep is not None:
            self.policy.sleep(delay)
        elif call.cancelled.wait(delay):
            raise cancelled_error()
        call.check()


def cancelled_error() -> CancelledError:
    """The error of a cancelled LLM request."""
    return CancelledError(f"{_OPERATION} was cancelled", operation=_OPERATION)
