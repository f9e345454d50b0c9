"""The web app's agents over A2A 1.0: the agent card and both HTTP bindings.

``WebApp(factory, a2a=True)`` (or ``a2a=A2AOptions(...)``) serves, where the
app is mounted:

* ``GET /.well-known/agent-card.json`` — the card (:mod:`agent_smith.a2a.card`):
  the agent's name, description, a skill per tool and per active skill,
  streaming, both bindings at ``<mount>/a2a``, the security schemes;
* ``POST /a2a`` — JSON-RPC 2.0: ``SendMessage``, ``SendStreamingMessage``
  (server-sent events), ``GetTask``, ``CancelTask``, ``ListTasks``;
* ``/a2a/...`` — HTTP+JSON: ``POST /message:send``, ``POST /message:stream``,
  ``GET /tasks/{id}``, ``POST /tasks/{id}:cancel``, ``GET /tasks``.

A message without ``taskId`` starts a task: a turn of the agent built by the
app's factory on the session of the message's ``contextId`` (the same
conversations the app's other protocols use; a new context when none is
given), so a context keeps its history from task to task. A task that needs
approvals ends in ``TASK_STATE_INPUT_REQUIRED``; the caller's next message
with that ``taskId`` decides them and the turn goes on
(:mod:`agent_smith.a2a.wire` says how). Tasks: :mod:`.a2a_tasks`.

Safety: the app's ``authenticate`` applies to every call (the card is
public); tasks and contexts are the user's own, another user's task is
"not found"; POSTs from another site are refused; bodies are limited to
``A2AOptions.max_body_bytes`` (1 MB: A2A messages here are text) and never
more than the app's ``max_body_bytes``. Every bad request gets the protocol's error
answer: a JSON-RPC error object (HTTP 200, or the status an HTTP failure
has), or on HTTP+JSON the status with ``{"error": {code, status, message,
details}}``. Nothing of the server's internals is in them.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Callable, Generator, Iterable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote

from ..a2a.card import BEARER_SCHEME, agent_card
from ..a2a.wire import (
    AGENT,
    APPROVING_WORDS,
    CANCELED,
    CARD_PATH,
    EXTENDED_CARD_NOT_CONFIGURED,
    INPUT_REQUIRED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    PROTOCOL_VERSION,
    PUSH_NOT_SUPPORTED,
    TASK_NOT_CANCELABLE,
    TASK_NOT_FOUND,
    TERMINAL,
    UNSUPPORTED_OPERATION,
    USER,
    VERSION_NOT_SUPPORTED,
    WORKING,
    JsonObject,
    data_of,
    error_info,
    new_id,
    text_message,
    text_of,
)
from ..agent.agent import Agent
from ..base.paused_turn import Decision
from ..errors import AgentSmithError
from ..sessions.session import Session
from ..tools.base import ToolSchema
from .a2a_stream import Frames, event_stream, rpc_result
from .a2a_tasks import TaskBoard, TaskRecord, run_task
from .http import JSON_TYPE, Refused, cross_site_refusal, read_json, status_line
from .stream import turn_events

log = logging.getLogger(__name__)

#: Where the bindings are served, below the app's mount point.
A2A_PATH = "/a2a"
_CONTEXT_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
_TASK_PATH = re.compile(r"/tasks/([^/:]+)(:cancel|:subscribe)?")
_SSE_HEADERS = (
    ("Content-Type", "text/event-stream"),
    ("Cache-Control", "no-cache"),
    ("X-Accel-Buffering", "no"),
)
# A2A error code -> HTTP status and gRPC status name (HTTP+JSON binding).
_REST_ERRORS: Mapping[int, tuple[int, str]] = {
    TASK_NOT_FOUND: (404, "NOT_FOUND"),
    TASK_NOT_CANCELABLE: (400, "FAILED_PRECONDITION"),
    PUSH_NOT_SUPPORTED: (400, "FAILED_PRECONDITION"),
    UNSUPPORTED_OPERATION: (400, "FAILED_PRECONDITION"),
    EXTENDED_CARD_NOT_CONFIGURED: (400, "FAILED_PRECONDITION"),
    VERSION_NOT_SUPPORTED: (400, "FAILED_PRECONDITION"),
    METHOD_NOT_FOUND: (404, "NOT_FOUND"),
    INTERNAL_ERROR: (500, "INTERNAL"),
}

StartResponse = Callable[..., Any]
#: ``open_session(user, context)``: the session of that user's context.
OpenSession = Callable[[str, str], Session]


@dataclass(frozen=True)
class A2AOptions:
    """What the agent card says beyond what the agent knows of itself.

    ``name`` and ``description`` default to the agent's name and a line
    naming it; ``security_schemes`` to a bearer scheme when the app has an
    ``authenticate`` hook, else none (protobuf JSON ``SecurityScheme``
    objects by name). ``max_body_bytes`` caps an A2A request's body (the
    app's own cap still applies when smaller).
    """

    name: str | None = None
    description: str | None = None
    version: str = "1.0.0"
    security_schemes: Mapping[str, JsonObject] | None = None
    max_body_bytes: int = 1_000_000


class _Refusal(Exception):
    """A request the protocol refuses: its A2A / JSON-RPC ``code`` and a one-line message."""

    def __init__(self, code: int, message: str, *, http_status: int | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.http_status = code, message, http_status


class A2AServer:
    """The A2A routes of a :class:`~agent_smith.web.app.WebApp` (see the module doc): WSGI."""

    def __init__(
        self,
        factory: Callable[[Session], Agent],
        open_session: OpenSession,
        *,
        authenticate: Callable[[dict[str, Any]], str | None],
        options: A2AOptions,
        authenticated: bool,
        max_body_bytes: int,
        allowed_origins: frozenset[str],
    ) -> None:
        self._factory = factory
        self._open = open_session
        self._authenticate = authenticate
        self._options = options
        self._schemes = (
            options.security_schemes
            if options.security_schemes is not None
            else (BEARER_SCHEME if authenticated else None)
        )
        self._limit = min(max_body_bytes, options.max_body_bytes)
        self._origins = allowed_origins
        self.tasks = TaskBoard()

    @staticmethod
    def serves(path: str) -> bool:
        """Whether ``path`` (below the app's mount point) is an A2A route."""
        return path in (CARD_PATH, A2A_PATH) or path.startswith(A2A_PATH + "/")

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "") or ""
        method = environ.get("REQUEST_METHOD", "GET").upper()
        rest = path != A2A_PATH and path != CARD_PATH
        try:
            status, headers, body = self._answer(environ, method, path)
        except _Refusal as refusal:
            status, headers, body = _refused(refusal, rest=rest, request_id=None)
        except AgentSmithError as err:  # the factory or the session store failed
            log.warning("A2A request failed: %s", err)
            status, headers, body = _refused(
                _Refusal(INTERNAL_ERROR, "the agent could not be started"),
                rest=rest,
                request_id=None,
            )
        start_response(status_line(status), list(headers))
        return body

    def _answer(
        self, environ: dict[str, Any], method: str, path: str
    ) -> tuple[int, tuple[tuple[str, str], ...], Iterable[bytes]]:
        if path == CARD_PATH:
            _allow(method, "GET")
            return _json(200, self._card(environ))
        user = self._authenticate(environ)
        if not user:
            raise _Refusal(INVALID_REQUEST, "not authenticated", http_status=401)
        if method not in ("GET", "HEAD"):
            refusal = cross_site_refusal(environ, self._origins)
            if refusal is not None:
                raise _Refusal(INVALID_REQUEST, refusal, http_status=403)
        version = environ.get("HTTP_A2A_VERSION", "")
        if version and version.split(".")[:2] != PROTOCOL_VERSION.split("."):
            raise _Refusal(VERSION_NOT_SUPPORTED, f"A2A version {version[:20]!r} is not supported")
        if path == A2A_PATH:
            _allow(method, "POST")
            return self._jsonrpc(user, environ)
        return self._rest(user, environ, method, path.removeprefix(A2A_PATH))

    # -- the agent card --------------------------------------------------------

    def _card(self, environ: dict[str, Any]) -> JsonObject:
        name, description, tools, skills = self._described
        host = (
            environ.get("HTTP_HOST") or f"{environ.get('SERVER_NAME')}:{environ.get('SERVER_PORT')}"
        )
        url = f"{environ.get('wsgi.url_scheme', 'http')}://{host}{environ.get('SCRIPT_NAME', '')}"
        return agent_card(
            name=self._options.name or name,
            description=self._options.description or description,
            url=url + A2A_PATH,
            tools=tools,
            skills=skills,
            version=self._options.version,
            security_schemes=self._schemes,
        )

    @functools.cached_property
    def _described(self) -> tuple[str, str, tuple[ToolSchema, ...], tuple[tuple[str, str], ...]]:
        """The agent's name, a description, its tools and skills (built once, by the factory)."""
        with ExitStack() as stack:
            session = stack.enter_context(self._open("a2a-card", "card"))
            agent = stack.enter_context(self._factory(session))
            return (
                agent.name,
                f"The agent {agent.name}.",
                agent.tool_schemas,
                tuple((s.name, s.description) for s in agent.skills),
            )

    # -- JSON-RPC ----------------------------------------------------------------

    def _jsonrpc(
        self, user: str, environ: dict[str, Any]
    ) -> tuple[int, tuple[tuple[str, str], ...], Iterable[bytes]]:
        request_id: Any = None
        try:
            body = self._body(environ)
            if isinstance(body, dict):
                request_id = body.get("id")
                if not isinstance(request_id, str | int) or isinstance(request_id, bool):
                    request_id = None
            if not isinstance(body, dict) or body.get("jsonrpc") != "2.0":
                raise _Refusal(
                    INVALID_REQUEST, "not a JSON-RPC 2.0 request (batches are not taken)"
                )
            method, params = body.get("method"), body.get("params", {})
            if not isinstance(method, str) or not method:
                raise _Refusal(INVALID_REQUEST, "the request has no method")
            if not isinstance(params, dict):
                raise _Refusal(INVALID_PARAMS, "params must be an object")
            if method == "SendStreamingMessage":
                _record, items = self._start(user, params, environ)
                frames = Frames(rpc=True, request_id=request_id)
                return 200, _SSE_HEADERS, event_stream(items, frames, environ)
            result = self._unary(user, method, params, environ)
        except _Refusal as refusal:
            return _refused(refusal, rest=False, request_id=request_id)
        return _json(200, rpc_result(request_id, result))

    def _unary(self, user: str, method: str, params: JsonObject, environ: dict[str, Any]) -> Any:
        if method == "SendMessage":
            record, items = self._start(user, params, environ)
            for _ in items:  # the turn runs here, in this request's thread
                pass
            return {"task": record.snapshot(_history_length(params.get("configuration", {})))}
        if method == "GetTask":
            return self._task(user, params).snapshot(_history_length(params))
        if method == "CancelTask":
            return self._cancel(self._task(user, params))
        if method == "ListTasks":
            return self._list(user, params)
        if method == "SubscribeToTask":
            raise _Refusal(UNSUPPORTED_OPERATION, "re-subscribing to a task is not supported")
        if method == "GetExtendedAgentCard":
            raise _Refusal(EXTENDED_CARD_NOT_CONFIGURED, "this agent has no extended card")
        if "PushNotification" in method:
            raise _Refusal(PUSH_NOT_SUPPORTED, "push notifications are not supported")
        raise _Refusal(METHOD_NOT_FOUND, f"no method {method[:60]!r}")

    # -- HTTP+JSON ---------------------------------------------------------------

    def _rest(
        self, user: str, environ: dict[str, Any], method: str, path: str
    ) -> tuple[int, tuple[tuple[str, str], ...], Iterable[bytes]]:
        if path in ("/message:send", "/message:stream"):
            _allow(method, "POST")
            params = self._body(environ)
            if not isinstance(params, dict):
                raise _Refusal(
                    INVALID_PARAMS, "the request body must be a SendMessageRequest object"
                )
            if path == "/message:stream":
                _record, items = self._start(user, params, environ)
                return 200, _SSE_HEADERS, event_stream(items, Frames(rpc=False), environ)
            return _json(200, self._unary(user, "SendMessage", params, environ))
        query = {k: v[-1] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
        if path == "/tasks":
            _allow(method, "GET")
            return _json(200, self._list(user, query))
        if path == "/extendedAgentCard":
            raise _Refusal(EXTENDED_CARD_NOT_CONFIGURED, "this agent has no extended card")
        match = _TASK_PATH.fullmatch(path)
        if match is None:
            raise _Refusal(METHOD_NOT_FOUND, f"no such resource: {path[:80]}")
        params = {**query, "id": unquote(match.group(1))}
        if match.group(2) == ":cancel":
            _allow(method, "POST")
            return _json(200, self._cancel(self._task(user, params)))
        if match.group(2) == ":subscribe":
            raise _Refusal(UNSUPPORTED_OPERATION, "re-subscribing to a task is not supported")
        _allow(method, "GET")
        return _json(200, self._task(user, params).snapshot(_history_length(params)))

    # -- the operations ----------------------------------------------------------

    def _body(self, environ: dict[str, Any]) -> Any:
        kind = environ.get("CONTENT_TYPE", "").split(";", 1)[0].strip().lower()
        if kind == "application/a2a+json":
            environ = {**environ, "CONTENT_TYPE": JSON_TYPE}
        try:
            return read_json(environ, limit=self._limit)
        except Refused as refused:
            status = refused.response.status
            message = json.loads(refused.response.body).get("error", "bad request")
            code = PARSE_ERROR if status == 400 else INVALID_REQUEST
            raise _Refusal(code, message, http_status=status if status != 400 else None) from None

    def _start(
        self, user: str, params: JsonObject, environ: dict[str, Any]
    ) -> tuple[TaskRecord, Generator[list[JsonObject], None, None]]:
        """Begin the task a message starts or continues; its record and its updates to come."""
        message = _message(params.get("message"))
        task_id, context = message.get("taskId"), message.get("contextId")
        if task_id is not None and not isinstance(task_id, str):
            raise _Refusal(INVALID_PARAMS, "message.taskId must be a string")
        if context is not None and (
            not isinstance(context, str) or not _CONTEXT_ID.fullmatch(context)
        ):
            raise _Refusal(
                INVALID_PARAMS, "message.contextId must be 1-128 letters, digits or ._:-"
            )
        parts = message["parts"]
        text = text_of(parts)
        if task_id:
            record = self._task(user, {"id": task_id})
            if context and context != record.context:
                raise _Refusal(
                    INVALID_PARAMS, f"task {task_id[:40]!r} is not in context {context!r}"
                )
            with record.changed:
                if record.state != INPUT_REQUIRED:
                    raise _Refusal(
                        INVALID_PARAMS,
                        f"task {task_id[:40]!r} does not wait for input (it is {record.state})",
                    )
                record.state = WORKING  # one answer only: a second one is refused above
        else:
            if not text.strip():
                raise _Refusal(INVALID_PARAMS, "the message has no text part")
            record = self.tasks.create(user, context or new_id())
        record.history.append({**message, "taskId": record.id, "contextId": record.context})
        stack = ExitStack()
        try:
            session = stack.enter_context(self._open(user, record.context))
            agent = stack.enter_context(self._factory(session))
            if task_id:
                paused = agent.paused_turn
                if paused is None:
                    raise _Refusal(INVALID_PARAMS, "nothing waits for approval in this task")
                decisions = _decisions(data_of(parts), text, paused.waiting)
                start = functools.partial(
                    turn_events, lambda: agent.resume_stream(paused, decisions)
                )
            else:
                start = functools.partial(turn_events, lambda: agent.stream(text))
            return record, run_task(record, stack, agent, start)
        except BaseException:
            stack.close()
            if task_id:
                record.set_state(INPUT_REQUIRED, record.message)
            raise

    def _task(self, user: str, params: Mapping[str, Any]) -> TaskRecord:
        task_id = params.get("id")
        if not isinstance(task_id, str) or not task_id:
            raise _Refusal(INVALID_PARAMS, "the task id must be a non-empty string")
        record = self.tasks.find(user, task_id)
        if record is None:
            raise _Refusal(TASK_NOT_FOUND, f"no task {task_id[:40]!r}")
        return record

    def _cancel(self, record: TaskRecord) -> JsonObject:
        with record.changed:
            if record.state in TERMINAL:
                raise _Refusal(TASK_NOT_CANCELABLE, f"task {record.id!r} is already {record.state}")
            record.cancel_requested = True
            agent = record.agent
        if agent is not None:
            agent.cancel()
            record.wait_settled()
        if record.state not in TERMINAL:  # waiting for input, or a turn that would not stop
            record.set_state(CANCELED, text_message("cancelled by the caller", role=AGENT))
        return record.snapshot()

    def _list(self, user: str, params: Mapping[str, Any]) -> JsonObject:
        context = params.get("contextId")
        records = self.tasks.of(user, context if isinstance(context, str) and context else None)
        size = params.get("pageSize", 50)
        try:
            size = max(1, min(100, int(size)))
        except (TypeError, ValueError):
            raise _Refusal(INVALID_PARAMS, "pageSize must be a number") from None
        tasks = [r.snapshot(0) for r in records[:size]]
        return {"tasks": tasks, "nextPageToken": "", "pageSize": size, "totalSize": len(records)}


def _message(value: object) -> JsonObject:
    if not isinstance(value, dict):
        raise _Refusal(INVALID_PARAMS, "params.message must be a Message object")
    if not isinstance(value.get("messageId"), str) or not value["messageId"]:
        raise _Refusal(INVALID_PARAMS, "message.messageId must be a non-empty string")
    if value.get("role") != USER:
        raise _Refusal(INVALID_PARAMS, f"message.role must be {USER}")
    parts = value.get("parts")
    if not isinstance(parts, list) or not parts or not all(isinstance(p, dict) for p in parts):
        raise _Refusal(INVALID_PARAMS, "message.parts must be a non-empty list of parts")
    return value


def _decisions(data: list[Any], text: str, waiting: Iterable[str]) -> dict[str, Decision]:
    """The caller's answer to the waiting calls: a ``decisions`` data part, else yes / no text."""
    waiting = list(waiting)
    for value in data:
        if isinstance(value, dict) and isinstance(value.get("decisions"), dict):
            given = value["decisions"]
            unknown = [call for call in given if call not in waiting]
            if unknown:
                raise _Refusal(
                    INVALID_PARAMS, f"no call {str(unknown[0])[:40]!r} waits for approval"
                )
            decisions = {}
            for call in waiting:
                answer = given.get(call, False)
                if isinstance(answer, bool):
                    decisions[call] = Decision.approve() if answer else Decision.deny()
                elif isinstance(answer, str):
                    decisions[call] = Decision.deny(answer[:500])
                else:
                    raise _Refusal(INVALID_PARAMS, "a decision must be true, false or a reason")
            return decisions
    words = text.strip().lower().rstrip(".!")
    if words in APPROVING_WORDS:
        return {call: Decision.approve() for call in waiting}
    reason = text.strip()[:500] or "denied by the caller"
    return {call: Decision.deny(reason) for call in waiting}


def _history_length(params: object) -> int | None:
    value = params.get("historyLength") if isinstance(params, dict) else None
    if value is None:
        return None
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        raise _Refusal(INVALID_PARAMS, "historyLength must be a number") from None


def _allow(method: str, *allowed: str) -> None:
    if method not in allowed and not (method == "HEAD" and "GET" in allowed):
        raise _Refusal(METHOD_NOT_FOUND, f"{method} is not allowed here", http_status=405)


def _json(status: int, data: Any) -> tuple[int, tuple[tuple[str, str], ...], list[bytes]]:
    body = json.dumps(data, ensure_ascii=False).encode()
    return status, (("Content-Type", JSON_TYPE), ("Cache-Control", "no-store")), [body]


def _refused(
    refusal: _Refusal, *, rest: bool, request_id: Any
) -> tuple[int, tuple[tuple[str, str], ...], list[bytes]]:
    """The protocol's error answer to ``refusal``: HTTP+JSON's, or a JSON-RPC error object."""
    if rest:
        status, grpc_status = _REST_ERRORS.get(refusal.code, (400, "INVALID_ARGUMENT"))
        status = refusal.http_status or status
        error = {
            "code": status,
            "status": grpc_status,
            "message": refusal.message,
            "details": error_info(refusal.code),
        }
        return _json(status, {"error": error})
    error = {"code": refusal.code, "message": refusal.message}
    return _json(refusal.http_status or 200, {"jsonrpc": "2.0", "id": request_id, "error": error})
