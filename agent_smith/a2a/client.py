"""A2AClient: call a remote A2A agent, synchronously, over either HTTP binding.

::

    client = A2AClient("http://127.0.0.1:8000/agent")
    task = client.send(text_message("What is the weather in Paris?"))
    for item in client.stream(text_message("And in Rome?")):
        ...

The agent's card is fetched once from ``<url>/.well-known/agent-card.json``
(or from ``url`` itself when it ends in ``.json``), checked
(:func:`~agent_smith.a2a.card.read_card`), and names the interface to call:
JSON-RPC when offered, else HTTP+JSON (``binding=`` picks one). Requests go
through the runtime's ``requests.Session``; streams are read by the one SSE
reader (:mod:`agent_smith._internal.sse_reader`) as bytes arrive.

Failures are typed: an error answer (JSON-RPC error, HTTP error status) is
an :class:`~agent_smith.errors.A2AError` with its code; an answer of the
wrong shape, an invalid card or a stream that ends before its task is
final or waiting for input, an :class:`~agent_smith.errors.A2AProtocolError`;
no answer at all a :class:`~agent_smith.errors.TransportError`; a read that
outlives ``timeout`` an :class:`~agent_smith.errors.AgentTimeoutError`. A
stream given a ``cancel`` token stops reading when it fires
(:class:`~agent_smith.errors.CancelledError`); cancelling the remote task
is the caller's decision (:meth:`A2AClient.cancel_task`).
"""

from __future__ import annotations

import itertools
import json
import logging
import threading
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import quote

import requests

from .._internal.posting import Poster
from .._internal.request_errors import request_error_cause
from .._internal.sockets import shutdown_socket
from .._internal.sse_reader import SseReader, read_chunks
from ..base.cancellation import CancellationToken
from ..errors import (
    A2AError,
    A2AProtocolError,
    AgentTimeoutError,
    CancelledError,
    ConfigError,
    TransportError,
)
from ..runtime import Runtime, default_runtime
from .card import RemoteCard, read_card
from .wire import (
    CARD_PATH,
    HTTP_JSON,
    INTERRUPTED,
    JSONRPC,
    PROTOCOL_VERSION,
    TERMINAL,
    VERSION_HEADER,
    AgentMessage,
    JsonObject,
    StatusUpdate,
    StreamItem,
    TaskView,
    error_code,
    read_send_result,
    read_stream_item,
    read_task,
)

log = logging.getLogger(__name__)

#: The largest answer read whole (a task with its history and artifacts).
MAX_ANSWER_BYTES = 16_000_000
_ids = itertools.count(1)


class A2AClient:
    """A remote A2A agent at ``url`` (see the module doc). Thread-safe; holds no connection.

    ``headers`` go with every request (``{"Authorization": "Bearer ..."}``);
    ``timeout`` bounds connecting and each wait for bytes (seconds);
    ``binding`` is ``"JSONRPC"`` or ``"HTTP+JSON"`` (default: what the card
    offers, JSON-RPC first).
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        binding: str | None = None,
        runtime: Runtime | None = None,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"an A2A agent's URL must be http(s)://..., got {url[:80]!r}")
        if binding not in (None, JSONRPC, HTTP_JSON):
            raise ConfigError(f"binding must be {JSONRPC!r} or {HTTP_JSON!r}, got {binding!r}")
        if not timeout > 0:
            raise ConfigError(f"timeout must be positive, got {timeout!r}")
        self.url = url.rstrip("/")
        self._headers = {
            VERSION_HEADER: PROTOCOL_VERSION,
            "Content-Type": "application/json",
            **(headers or {}),
        }
        self._timeout = timeout
        self._binding = binding
        self._runtime = runtime
        self._card: RemoteCard | None = None
        self._lock = threading.Lock()
        self._posters: dict[str, Poster] = {}  # the few URLs messages go to

    @property
    def _session(self) -> requests.Session:
        return (self._runtime or default_runtime()).session

    def card(self) -> RemoteCard:
        """The agent's checked card (fetched on first use)."""
        with self._lock:
            if self._card is None:
                where = self.url if self.url.endswith(".json") else self.url + CARD_PATH
                response = self._request("GET", where, None, stream=False)
                self._card = read_card(
                    self._answer(response, where), agent=self.url, binding=self._binding
                )
            return self._card

    # -- the operations --------------------------------------------------------

    def send(
        self, message: JsonObject, *, history_length: int | None = None
    ) -> TaskView | AgentMessage:
        """Send ``message`` and wait for the task to finish or to wait for input."""
        params: JsonObject = {"message": message}
        if history_length is not None:
            params["configuration"] = {"historyLength": history_length}
        return read_send_result(self._call("SendMessage", params), agent=self.url)

    def get_task(self, task_id: str, *, history_length: int | None = None) -> TaskView:
        """The task as it is now."""
        params: JsonObject = {"id": task_id}
        if history_length is not None:
            params["historyLength"] = history_length
        return read_task(self._call("GetTask", params), agent=self.url)

    def cancel_task(self, task_id: str) -> TaskView:
        """Ask the agent to cancel the task; the task as the agent reports it then."""
        return read_task(self._call("CancelTask", {"id": task_id}), agent=self.url)

    def stream(
        self, message: JsonObject, *, cancel: CancellationToken | None = None
    ) -> Iterator[StreamItem]:
        """Send ``message`` and yield the task's updates until it is final or waits for input."""
        card = self.card()
        if card.binding == JSONRPC:
            body: JsonObject = _envelope("SendStreamingMessage", {"message": message})
            response = self._request("POST", card.url, body, stream=True)
        else:
            response = self._request(
                "POST", card.url + "/message:stream", {"message": message}, stream=True
            )

        # Closing does not wake a thread blocked reading; shutting the socket down does.
        def wake() -> None:
            shutdown_socket(response)

        unregister = cancel.on_cancel(wake) if cancel is not None else None
        try:
            yield from self._stream_items(response, cancel)
        finally:
            if unregister is not None:
                unregister()
            response.close()

    # -- plumbing --------------------------------------------------------------

    def _call(self, method: str, params: JsonObject) -> Any:
        card = self.card()
        if card.binding == JSONRPC:
            response = self._request("POST", card.url, _envelope(method, params), stream=False)
            return _rpc_result(self._answer(response, method), agent=self.url, method=method)
        verb, path, body = _rest_route(method, params)
        response = self._request(verb, card.url + path, body, stream=False)
        return self._answer(response, method)

    def _request(
        self, method: str, url: str, body: JsonObject | None, *, stream: bool
    ) -> requests.Response:
        """The response, its body not read yet (``stream``: events are asked for)."""
        headers = dict(self._headers)
        if stream:
            headers["Accept"] = "text/event-stream"
        data = json.dumps(body).encode() if body is not None else None
        try:
            if method == "POST" and data is not None and (poster := self._poster(url)):
                return poster.post(
                    self._session, data=data, headers=headers, timeout=self._timeout, stream=True
                )
            return self._session.request(
                method, url, data=data, headers=headers, timeout=self._timeout, stream=True
            )
        except requests.Timeout as err:
            raise AgentTimeoutError(
                f"A2A agent {self.url} did not answer within {self._timeout:g} s",
                operation="a2a request",
                budget=self._timeout,
            ) from err
        except requests.RequestException as err:
            raise TransportError(
                f"A2A agent {self.url} could not be reached: {request_error_cause(err)}",
                operation=f"a2a {method}",
                endpoint_or_server=self.url,
            ) from err

    def _poster(self, url: str) -> Poster | None:
        """What POSTs messages to ``url`` with the environment read once (not a task's URL)."""
        if ":cancel" in url:
            return None
        with self._lock:
            poster = self._posters.get(url)
            if poster is None and len(self._posters) < 4:
                poster = self._posters[url] = Poster(url)
            return poster

    def _answer(self, response: requests.Response, what: str) -> Any:
        """The JSON of a whole answer; A2AError for an error status."""
        with response:
            try:
                raw = response.raw.read(MAX_ANSWER_BYTES + 1, decode_content=True)
            except requests.RequestException as err:
                raise TransportError(
                    f"A2A agent {self.url}: reading the answer to {what} failed: "
                    f"{request_error_cause(err)}",
                    operation="a2a read",
                    endpoint_or_server=self.url,
                ) from err
        if len(raw) > MAX_ANSWER_BYTES:
            raise A2AProtocolError(
                f"the answer to {what} is over {MAX_ANSWER_BYTES} bytes", agent=self.url
            )
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        if response.status_code >= 400:
            raise _http_error(response.status_code, body, agent=self.url, what=what)
        if body is None:
            raise A2AProtocolError(f"the answer to {what} is not JSON", agent=self.url)
        return body

    def _stream_items(
        self, response: requests.Response, cancel: CancellationToken | None
    ) -> Iterator[StreamItem]:
        kind = response.headers.get("Content-Type", "")
        if response.status_code >= 400 or "text/event-stream" not in kind:
            body = self._answer(response, "the stream request")
            if isinstance(body, dict) and "error" in body:  # a JSON-RPC error answer
                _rpc_result(body, agent=self.url, method="SendStreamingMessage")
            raise A2AProtocolError(
                f"the stream request was answered with {kind or 'no content type'}, not events",
                agent=self.url,
            )
        jsonrpc = self.card().binding == JSONRPC
        reader = SseReader(read_chunks(response))
        finished = False
        try:
            for event in reader.all_events():
                if not event.data:
                    continue
                item = _stream_payload(event.data, event.event, jsonrpc=jsonrpc, agent=self.url)
                finished = _ends(item)
                yield item
                if finished:
                    return
        except (requests.RequestException, AttributeError, ValueError) as err:
            # A closed response (cancel) surfaces as one of these, depending on timing.
            if cancel is not None and cancel.cancelled:
                raise CancelledError(
                    "the A2A stream was cancelled", operation="a2a stream"
                ) from err
            if isinstance(err, requests.Timeout):
                raise AgentTimeoutError(
                    f"A2A agent {self.url} sent nothing for {self._timeout:g} s",
                    operation="a2a stream",
                    budget=self._timeout,
                ) from err
            raise A2AProtocolError(
                f"the stream broke off: {request_error_cause(err)}", agent=self.url
            ) from err
        if cancel is not None and cancel.cancelled:
            raise CancelledError("the A2A stream was cancelled", operation="a2a stream")
        if not finished:
            raise A2AProtocolError(
                "the stream ended before the task finished or asked for input", agent=self.url
            )


def _envelope(method: str, params: JsonObject) -> JsonObject:
    return {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}


def _rest_route(method: str, params: JsonObject) -> tuple[str, str, JsonObject | None]:
    """The HTTP+JSON verb, path and body of a JSON-RPC method's call."""
    if method == "SendMessage":
        return "POST", "/message:send", params
    task = quote(str(params["id"]), safe="")
    if method == "GetTask":
        query = f"?historyLength={params['historyLength']}" if "historyLength" in params else ""
        return "GET", f"/tasks/{task}{query}", None
    return "POST", f"/tasks/{task}:cancel", params  # CancelTask: the only other call made


def _rpc_result(body: Any, *, agent: str, method: str) -> Any:
    if not isinstance(body, dict) or body.get("jsonrpc") != "2.0":
        raise A2AProtocolError(f"the answer to {method} is not a JSON-RPC response", agent=agent)
    error = body.get("error")
    if error is not None:
        code = error.get("code") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        raise A2AError(
            f"A2A agent {agent} refused {method}: {str(message or 'error')[:300]}",
            agent=agent,
            rpc_code=code if isinstance(code, int) else None,
        )
    if "result" not in body:
        raise A2AProtocolError(f"the answer to {method} has no result", agent=agent)
    return body["result"]


def _http_error(status: int, body: Any, *, agent: str, what: str) -> A2AError:
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    details = error.get("details") if isinstance(error, dict) else None
    return A2AError(
        f"A2A agent {agent} answered {status} to {what}"
        + (f": {str(message)[:300]}" if message else ""),
        agent=agent,
        http_status=status,
        rpc_code=error_code(details),
    )


def _stream_payload(data: str, event: str, *, jsonrpc: bool, agent: str) -> StreamItem:
    try:
        body = json.loads(data)
    except ValueError as err:
        raise A2AProtocolError(f"a stream event is not JSON ({err})", agent=agent) from None
    if jsonrpc:
        body = _rpc_result(body, agent=agent, method="SendStreamingMessage")
    elif event == "error" or (isinstance(body, dict) and "error" in body):
        raise _http_error(500, body, agent=agent, what="the stream")
    return read_stream_item(body, agent=agent)


def _ends(item: StreamItem) -> bool:
    """Whether the stream is over after ``item``: a final or waiting state, or a message."""
    if isinstance(item, AgentMessage):
        return True
    if isinstance(item, TaskView | StatusUpdate):
        return item.state in TERMINAL or item.state in INTERRUPTED
    return False
