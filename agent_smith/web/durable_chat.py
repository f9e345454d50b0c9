"""Durable web turns: the app's chat turns as durable turns, streamed from their durable stream.

With ``WebApp(durable_chat=DurableChat(engine, agent_factory, sessions=...))``
(:class:`~agent_smith.durable.DurableChat`), a new message on ``POST
/api/chat`` or ``POST /api/agui`` starts a durable turn — a DBOS workflow on
the worker that got the request, named ``<conversation's session id>#<turn>``
— and the response *follows* that turn's durable stream; it runs apart from
the response, so a client that goes away does not stop it. A reconnect
(``GET /api/chat/<id>/stream`` with or without ``Last-Event-ID``, an AG-UI
run posted again with the same ``runId``), on any worker, follows the same
stream from the client's offset.

Frames are a pure function of the stream: every reader maps the turn's
records, from the first, through a fresh mapper of the protocol, and numbers
the frames 1, 2, 3, ...; each goes out with ``id: <turn>:<n>``, and a reader
after ``Last-Event-ID: <turn>:<n>`` sends those after ``n``. The same frame
has the same id on every read, on every worker, before and after a crash,
so a resumed client gets every frame it missed and none twice.

The stream holds agent-level records (:mod:`agent_smith.durable.event_stream`):
a reply's text arrives whole when the model has answered, not token by
token — a durable web turn streams per step. When the worker running a turn
dies, its followers notice and one of them takes the turn over
(:mod:`agent_smith.durable.chat`): the turn completes on that worker and
every follower gets the rest. A turn that fails ends with the protocol's
error frame.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from ..agent.events import (
    AgentEvent,
    AssistantTurn,
    FinalAnswer,
    ToolCallRequested,
    ToolResultReady,
)
from ..base.history_json import message_from_dict, tool_call_from_dict
from ..base.json_fields import JsonObject
from ..base.parts import Content
from ..errors import ParseError
from ..messages import AssistantMessage, ToolMessage, UserMessage
from .http import Response, error_response
from .resumable import stream_key
from .stream import FrameMapper, TurnFailed, WebEvent

log = logging.getLogger(__name__)


class ChatTurns(Protocol):
    """What the app needs of :class:`~agent_smith.durable.DurableChat`."""

    def start(self, turn_id: str, session_id: str, message: UserMessage) -> None: ...

    def status(self, turn_id: str) -> str | None: ...

    def running(self, prefix: str) -> str | None: ...

    def cancel(self, turn_id: str) -> None: ...

    def follow(self, turn_id: str, offset: int = 0) -> Iterator[JsonObject]: ...


def exists(chat: ChatTurns, session_id: str, turn: str) -> bool:
    """Whether the conversation ``session_id`` has a durable turn ``turn``."""
    return chat.status(stream_key(session_id, turn)) is not None


def start(chat: ChatTurns, session_id: str, turn: str, content: Content | None) -> Response | None:
    """Start durable turn ``turn`` of the conversation ``session_id`` on ``content``; the
    refusal (409) when it cannot start."""
    if content is None:
        return error_response(409, "a durable chat turn does not pause: nothing to decide")
    if chat.running(stream_key(session_id, "")) is not None:
        return error_response(409, "this conversation is busy with another turn")
    chat.start(stream_key(session_id, turn), session_id, UserMessage(content))
    return None


def resume_point(
    chat: ChatTurns, session_id: str, mark: tuple[str, int] | None
) -> tuple[str, int] | Response:
    """Where a reconnect follows: the turn of ``mark`` (``Last-Event-ID``) after its number,
    else the running turn from its start; 404 for a turn the conversation does not have,
    204 when no turn runs (the client reloads the conversation)."""
    if mark is not None:
        if not exists(chat, session_id, mark[0]):
            return error_response(404, f"no stream {mark[0]!r} in this conversation")
        return mark
    running = chat.running(stream_key(session_id, ""))
    if running is None:
        return Response(204)
    return running.rpartition("#")[2], 0


def follow(
    chat: ChatTurns,
    session_id: str,
    turn: str,
    after: int,
    mapper: FrameMapper,
    *,
    disconnected: Callable[[], bool] | None = None,
) -> Iterator[bytes]:
    """The frames of durable turn ``turn`` after number ``after``, as SSE events with ids
    (``mapper`` is fresh: it sees the turn's records from the first)."""
    # A comment first: the server sends the headers with it, so the client knows at once
    # that it is connected, even while the model thinks.
    yield f": {turn} after {after}\n\n".encode()
    number = 0

    def numbered(frames: Iterable[bytes]) -> bytes:
        nonlocal number
        out = []
        for frame in frames:
            number += 1
            if number > after:
                out.append(f"id: {turn}:{number}\n".encode() + frame)
        return b"".join(out)

    yield numbered(mapper.begin())
    for record in chat.follow(stream_key(session_id, turn)):
        if disconnected is not None and disconnected():
            return  # the turn goes on: the client may come back
        event = web_event(record)
        if event is not None:
            chunk = numbered(mapper.event(event))
            if chunk:
                yield chunk
    yield numbered(mapper.end())


def web_event(record: JsonObject) -> WebEvent | None:
    """The event a durable stream's record stands for (None: nothing to show)."""
    kind = record.get("type")
    try:
        if kind == "assistant":
            return _assistant(AssistantTurn, record)
        if kind == "final":
            return _assistant(FinalAnswer, record)
        if kind == "tool_call":
            return ToolCallRequested(tool_call_from_dict(record.get("call"), "a tool call record"))
        if kind == "tool_result":
            message = message_from_dict(record.get("message"), "a tool result record")
            return ToolResultReady(message) if isinstance(message, ToolMessage) else None
    except ParseError as err:
        log.warning("durable web turn: a record of kind %s is malformed: %s", kind, err)
        return TurnFailed(f"the turn's stream is malformed: {err}", "ParseError")
    if kind == "failed":
        return TurnFailed(str(record.get("message", "the turn failed")), "DurableTurnFailed")
    return None


def _assistant(
    kind: type[AssistantTurn] | type[FinalAnswer], record: JsonObject
) -> AgentEvent | None:
    message = message_from_dict(record.get("message"), f"a {record.get('type')} record")
    return kind(message) if isinstance(message, AssistantMessage) else None
