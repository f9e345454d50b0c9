"""JSON-RPC 2.0 over one MCP transport: ids, the pending table, routing, errors.

Many threads may have requests in flight at once. Each request gets the next
integer id (starting at 0: ids are never tested for truthiness) and a
``queue.Queue`` its caller blocks on; the transport's frame callback routes a
response to that queue, a server request to a handler, and a notification to
the notification callback. A request that was given up (timeout or
cancellation) is removed from the table first, so a late answer is dropped.
A request's timeout leaves out the time the client's
:class:`~agent_smith.tools.person_wait.WaitClock` was held (a person was
asked something); while it is held, the request waits on.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from ..errors import (
    AgentSmithError,
    AgentTimeoutError,
    CancelledError,
    McpError,
    McpProtocolError,
    TransportError,
)
from ..tools.person_wait import WaitClock
from .transport import TRANSPORT_FAILURE, Frame, FrameSender, encode_frame

log = logging.getLogger(__name__)

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

#: Answers one server-to-client request: takes ``params``, returns ``result``.
#: Raise McpError with ``rpc_code`` to answer with that JSON-RPC error; any
#: other exception, or a result that is not a JSON object, answers -32603.
RequestHandler = Callable[[dict[str, Any]], dict[str, Any]]
NotificationHandler = Callable[[str, dict[str, Any]], None]
RequestDispatcher = Callable[[Callable[[], None]], None]


class PendingRequest:
    """One request in flight: its id and the queue its answer arrives on."""

    __slots__ = ("_queue", "id", "method")

    def __init__(self, request_id: int, method: str) -> None:
        self.id = request_id
        self.method = method
        self._queue: queue.SimpleQueue[Frame | AgentSmithError | None] = queue.SimpleQueue()


class JsonRpcPeer:
    """The client side of a JSON-RPC conversation with server ``server``.

    ``send`` delivers a frame (the transport's ``send``). Server requests are
    answered by ``handlers`` (by method; ``ping`` is built in, anything else
    unknown gets "method not found"). Handlers run through ``dispatch``, which
    may hand them to another thread so a slow handler does not hold up the
    reader; ``ping`` is always answered inline. ``abandon`` (the transport's
    ``cancel_by_closing``) may cancel a request by closing its stream instead
    of sending ``notifications/cancelled``. ``clock``: the client's clock of
    waits for a person, which request timeouts leave out.
    """

    def __init__(
        self,
        server: str,
        send: FrameSender,
        *,
        on_notification: NotificationHandler,
        handlers: dict[str, RequestHandler] | None = None,
        dispatch: RequestDispatcher | None = None,
        abandon: Callable[[int], bool] | None = None,
        clock: WaitClock | None = None,
    ) -> None:
        self.server = server
        self._send = send
        self._on_notification = on_notification
        self._handlers = dict(handlers or {})
        self._dispatch = dispatch or (lambda job: job())
        self._abandon = abandon or (lambda request_id: False)
        self._ids = itertools.count()
        self._pending: dict[int, PendingRequest] = {}
        self._lock = threading.Lock()
        self._failed: AgentSmithError | None = None
        self._clock = clock or WaitClock()
        self._unlisten = self._clock.listen(self._wake_waiters)

    # -- outgoing -----------------------------------------------------------

    def start(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> PendingRequest:
        """Register and send a request; the caller then waits with :meth:`wait`.

        ``timeout`` is how long the caller will wait (passed to ``send``).
        Raises whatever the transport's ``send`` raises (the request is then
        no longer pending).
        """
        with self._lock:
            if self._failed is not None:
                raise self._failed
            pending = PendingRequest(next(self._ids), method)
            self._pending[pending.id] = pending
        frame: Frame = {"jsonrpc": "2.0", "id": pending.id, "method": method}
        if params is not None:
            frame["params"] = params
        try:
            self._send(frame, timeout=timeout)
        except BaseException:
            self._forget(pending)
            raise
        return pending

    def wait(self, pending: PendingRequest, timeout: float) -> dict[str, Any]:
        """Block until ``pending`` is answered; return its ``result``.

        Raises McpError for an error response, AgentTimeoutError when
        ``timeout`` seconds pass (the server is then sent
        ``notifications/cancelled``, see :meth:`cancel`), or the error the
        request was failed with.
        """
        clock = self._clock
        deadline = time.monotonic() + timeout - clock.held()  # moved on by each hold
        while True:
            asking = clock.holding_since() is not None
            left = None if asking else max(deadline + clock.held() - time.monotonic(), 0.0)
            try:
                answer = pending._queue.get(timeout=left)
            except queue.Empty:
                if clock.holding_since() is not None:
                    continue  # a person is being asked now: wait on
                break
            if answer is None:
                continue  # a wait for a person ended: the deadline moved
            if isinstance(answer, AgentSmithError):
                raise answer
            return self._result(pending, answer)
        if pending.method == "initialize":  # the spec forbids cancelling it
            self._forget(pending)
        else:
            self.cancel(pending, f"timed out after {timeout:g}s")
        raise AgentTimeoutError(
            f"MCP {pending.method} to {self.server!r} got no answer within {timeout:g}s",
            operation=pending.method,
            budget=timeout,
        )

    def request(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float
    ) -> dict[str, Any]:
        """Send a request and wait for its result (see :meth:`start`, :meth:`wait`)."""
        return self.wait(self.start(method, params, timeout=timeout), timeout)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification (no answer expected)."""
        frame: Frame = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            frame["params"] = params
        self._send(frame)

    def cancel(self, pending: PendingRequest, reason: str) -> None:
        """Give up on ``pending``: tell the server, wake its waiter with CancelledError.

        After ``notifications/cancelled`` no response will come, so the waiter
        is failed here and any late frame for the id is dropped.
        """
        if not self._forget(pending):
            return  # already answered or failed
        try:
            if not self._abandon(pending.id):
                self.notify("notifications/cancelled", {"requestId": pending.id, "reason": reason})
        except Exception as err:  # the connection may be gone; the caller is failed anyway
            log.debug("could not send cancellation to %s: %s", self.server, err)
        what = f"MCP {pending.method} to {self.server!r}: {reason}"
        pending._queue.put(CancelledError(what, operation=pending.method))

    def fail_all(self, error: AgentSmithError) -> None:
        """Fail every pending request (and every later one) with ``error``."""
        with self._lock:
            self._failed = error
            pending = list(self._pending.values())
            self._pending.clear()
        self._unlisten()
        for item in pending:
            item._queue.put(error)

    def _wake_waiters(self) -> None:
        """A wait for a person ended: each waiter looks at its deadline again."""
        with self._lock:
            pending = list(self._pending.values())
        for item in pending:
            item._queue.put(None)

    def _forget(self, pending: PendingRequest) -> bool:
        with self._lock:
            return self._pending.pop(pending.id, None) is not None

    def _result(self, pending: PendingRequest, frame: Frame) -> dict[str, Any]:
        if "error" in frame:
            error = frame["error"] if isinstance(frame["error"], dict) else {}
            code = error.get("code")
            message = error.get("message") or "error"
            data = error.get("data")
            if isinstance(data, dict) and data.get(TRANSPORT_FAILURE) is True:
                # Not the server's answer: the transport could not read one.
                status = data.get("httpStatus")
                raise TransportError(
                    str(message),
                    operation=pending.method,
                    endpoint_or_server=self.server,
                    http_status=status if isinstance(status, int) else None,
                )
            raise McpError(
                f"MCP server {self.server!r}: {pending.method} failed with {code}: {message}",
                server=self.server,
                rpc_code=code if isinstance(code, int) else None,
                data=data,
            )
        result = frame.get("result")
        if not isinstance(result, dict):
            raise McpProtocolError(
                f"MCP server {self.server!r} answered {pending.method} with a non-object result",
                server=self.server,
            )
        return result

    # -- incoming -----------------------------------------------------------

    def handle_frame(self, frame: Frame) -> None:
        """Route one frame from the server (the transport's ``on_frame``)."""
        if not isinstance(frame, dict):
            if isinstance(frame, list):  # a batch (2025-03-26): route each member
                for member in frame:
                    self.handle_frame(member)
                return
            log.warning("MCP server %s sent a frame that is not an object; skipped", self.server)
            return
        method = frame.get("method")
        if isinstance(method, str):
            params = frame.get("params")
            params = params if isinstance(params, dict) else {}
            if "id" in frame:
                self._answer(frame["id"], method, params)
            else:
                self._on_notification(method, params)
            return
        if "id" in frame and ("result" in frame or "error" in frame):
            request_id = frame["id"]
            with self._lock:
                pending = self._pending.pop(request_id, None) if _hashable(request_id) else None
            if pending is None:
                log.debug("MCP server %s: dropped answer to id %r", self.server, request_id)
                return
            pending._queue.put(frame)
            return
        log.warning("MCP server %s sent a frame that is neither request nor answer", self.server)

    def _answer(self, request_id: Any, method: str, params: dict[str, Any]) -> None:
        if method == "ping":
            self._reply(request_id, {"jsonrpc": "2.0", "id": request_id, "result": {}})
            return
        handler = self._handlers.get(method)
        if handler is None:
            reply = _error(request_id, METHOD_NOT_FOUND, f"method not found: {method}")
            self._reply(request_id, reply)
            return

        def job() -> None:
            self._reply(request_id, self._handled(handler, request_id, method, params))

        self._dispatch(job)

    def _handled(
        self, handler: RequestHandler, request_id: Any, method: str, params: dict[str, Any]
    ) -> Frame:
        """The answer to a server request: the handler's result, or an error answer.

        Whatever goes wrong in a user's handler (it raises, or returns what
        JSON cannot carry) still gets the server an answer, so it does not
        wait out its own timeout for one.
        """
        try:
            result = handler(params)
        except (McpError, McpProtocolError) as err:
            return _error(request_id, err.rpc_code or INTERNAL_ERROR, err.message)
        except Exception as err:
            log.warning("handler for server request %s failed", method, exc_info=True)
            return _error(request_id, INTERNAL_ERROR, f"{type(err).__name__}: {err}")
        reply: Frame = {"jsonrpc": "2.0", "id": request_id, "result": result}
        if not isinstance(result, dict):
            problem = f"returned {type(result).__name__}, not an object"
        else:
            try:
                # Encoded once here too: failing in send() would leave the server unanswered.
                encode_frame(reply, self.server)
                return reply
            except McpError as err:
                problem = f"returned what JSON cannot carry ({err.__cause__})"
        log.warning("handler for server request %s %s", method, problem)
        return _error(request_id, INTERNAL_ERROR, f"the client's {method} handler {problem}")

    def _reply(self, request_id: Any, frame: Frame) -> None:
        try:
            self._send(frame)
        except Exception as err:  # the server will time out; nothing else to do
            log.warning("could not answer request %r of %s: %s", request_id, self.server, err)


def _error(request_id: Any, code: int, message: str) -> Frame:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _hashable(value: Any) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)
