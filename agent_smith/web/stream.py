"""One turn as a WSGI response body: the agent's events, mapped to protocol frames.

:func:`turn_events` runs a turn (or the rest of a paused one) and yields the
agent's events, plus one closing event the protocols need: :class:`TurnPaused`
when calls wait for a person (each :class:`ApprovalRequested` is deferred: the
agent keeps the paused turn in its session, where a later request, in any
worker process, resumes it) or :class:`TurnFailed` when an error ended the
turn (the headers are sent by then, so the protocol reports it in the body).

:class:`TurnStream` is the iterable a WSGI application returns. It owns the
turn's session and agent; its ``close()`` — which every WSGI server calls, also
when the client went away mid-stream — closes the agent's event iterator,
which cancels the turn (the LLM response is closed, running tools are
cancelled, the history stays consistent), then the agent and the session.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Generator, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Literal, Protocol

from .._internal.closing import close_iterator
from ..agent.approvals import ApprovalRequested
from ..agent.events import AgentEvent
from ..base.paused_turn import ApprovalRequest
from ..errors import AgentBusyError, AgentSmithError, ApprovalRequired
from ..messages import TokenUsage, ToolMessage

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TurnPaused:
    """The turn paused: ``requests`` wait for a decision; ``usage`` is the turn's so far."""

    requests: tuple[ApprovalRequest, ...]
    usage: TokenUsage


@dataclass(frozen=True)
class TurnFailed:
    """An error ended the turn: a one-line ``message`` and ``code`` (the error's class name)."""

    message: str
    code: str


WebEvent = AgentEvent | TurnPaused | TurnFailed


def turn_events(start: Callable[[], Iterator[AgentEvent]]) -> Generator[WebEvent, None, None]:
    """The events of the turn ``start()`` begins, ending with a pause or a failure if any.

    Closing this iterator closes the agent's, which cancels the turn.
    """
    try:
        events = start()
        try:
            for event in events:
                if isinstance(event, ApprovalRequested):
                    event.defer()  # decided by a later request: the turn pauses
                yield event
        finally:
            close_iterator(events)
    except ApprovalRequired as paused:
        yield TurnPaused(paused.state.requests, paused.state.usage)
    except AgentBusyError as err:
        yield TurnFailed(f"this conversation is busy with another turn ({err})", "busy")
    except AgentSmithError as err:
        log.info("web turn ended with %s: %s", type(err).__name__, err)
        yield TurnFailed(str(err), type(err).__name__)


class FrameMapper(Protocol):
    """A wire protocol: the frames that open a response, stand for one event, close it."""

    def begin(self) -> list[bytes]: ...

    def event(self, event: WebEvent) -> list[bytes]: ...

    def end(self) -> list[bytes]: ...


def frames(
    mapper: FrameMapper,
    events: Iterator[WebEvent],
    *,
    disconnected: Callable[[], bool] | None = None,
) -> Generator[bytes, None, None]:
    """The response body: ``mapper``'s frames for ``events``; closing it closes ``events``.

    ``disconnected`` (waitress's ``environ["waitress.client_disconnected"]``)
    says the client went away: the body then ends at once (cancelling the
    turn) instead of at the next write that fails.
    """
    try:
        yield b"".join(mapper.begin())  # the first byte goes out before the model answers
        for event in events:
            if disconnected is not None and disconnected():
                log.info("web client went away: cancelling its turn")
                return
            chunk = mapper.event(event)
            if chunk:
                yield b"".join(chunk)
        yield b"".join(mapper.end())
    finally:
        close_iterator(events)


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool message means for a user interface: an output, an error or a denial."""

    kind: Literal["output", "error", "denied"]
    text: str


def tool_outcome(message: ToolMessage) -> ToolOutcome:
    """Read a tool result: its content, or the message of an error result (denied or not)."""
    content = message.text
    if not message.is_error:
        return ToolOutcome("output", content)
    try:
        body = json.loads(content)
    except ValueError:
        return ToolOutcome("error", content)
    if not isinstance(body, dict):
        return ToolOutcome("error", content)
    text = str(body.get("message", content))
    return ToolOutcome("denied" if body.get("denied") is True else "error", text)


#: ``value`` as compact JSON text (no spaces, non-ASCII kept as it is).
compact_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def sse(data: object) -> bytes:
    """One server-sent event whose data is ``data`` as compact JSON."""
    return b"data: " + compact_json(data).encode() + b"\n\n"


class TurnStream:
    """A WSGI response body that streams frames and owns what the turn needs (see the module doc).

    ``body`` yields the chunks (from :func:`frames`); ``resources`` holds the
    session and the agent, closed (in reverse order) after ``body`` by
    :meth:`close`.
    """

    __slots__ = ("_frames", "_resources")

    def __init__(self, body: Iterator[bytes], resources: ExitStack) -> None:
        self._frames = body
        self._resources = resources

    def __iter__(self) -> TurnStream:
        return self

    def __next__(self) -> bytes:
        return next(self._frames)

    def close(self) -> None:
        """Stop the turn if it still runs (a client that went away), then free its resources."""
        try:
            close_iterator(self._frames)
        finally:
            self._resources.close()
