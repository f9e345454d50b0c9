"""Events yielded while a chat completion streams in."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..messages import TokenUsage

if TYPE_CHECKING:
    from .request import LlmResponse


@dataclass(frozen=True)
class TokenDelta:
    """A piece of the reply text, as soon as the server sent it."""

    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of the model's thinking (``reasoning_content``); not kept in history."""

    text: str


@dataclass(frozen=True)
class ToolCallStarted:
    """The model began a tool call; its arguments are still arriving."""

    id: str
    name: str
    index: int


@dataclass(frozen=True)
class ToolCallCompleted:
    """A tool call's arguments, parsed once the stream finished."""

    index: int
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ServerToolUsed:
    """The provider ran one of its own tools (web search, code execution) within the reply.

    Shown, never dispatched: the call and its results stay in the turn's
    provider data and go back to the same provider with the history, where
    the provider takes them back (:mod:`agent_smith.llm.server_tools`).
    ``name`` is the provider's name for the tool, ``id`` its id for the call
    (made up, ``<provider>_server_<n>``, when it gives none), ``arguments``
    what the model gave the tool and ``results`` what the tool returned, each
    as the provider wrote it; ``provider`` tags the client that read it.
    """

    name: str
    id: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    results: tuple[Any, ...] = ()
    provider: str = ""


@dataclass(frozen=True)
class Finished:
    """The last event of a stream: why it ended, usage, and the whole response."""

    finish_reason: str
    usage: TokenUsage | None
    response: LlmResponse


StreamEvent = (
    TokenDelta | ReasoningDelta | ToolCallStarted | ToolCallCompleted | ServerToolUsed | Finished
)


def response_events(
    response: LlmResponse, *, pieces: Callable[[str], Iterable[str]] | None = None
) -> Iterator[StreamEvent]:
    """The events a stream of ``response`` would have given, for a reply that came whole.

    ``pieces`` splits the text into several :class:`TokenDelta` (default: one).
    """
    message = response.message
    if message.reasoning:
        yield ReasoningDelta(message.reasoning)
    if pieces is not None:
        for piece in pieces(message.content):
            yield TokenDelta(piece)
    elif message.content:
        yield TokenDelta(message.content)
    for index, call in enumerate(message.tool_calls):
        yield ToolCallStarted(call.id, call.name, index)
    yield from ending_events(response)


def ending_events(response: LlmResponse, *, shown: Collection[str] = ()) -> Iterator[StreamEvent]:
    """The events that end a stream of ``response``: its server tools, its calls, Finished.

    ``shown`` holds the ids of the server tools the stream showed already.
    """
    for used in response.server_tools:
        if used.id not in shown:
            yield used
    for index, call in enumerate(response.message.tool_calls):
        yield ToolCallCompleted(index, call.arguments)
    yield Finished(response.finish_reason, response.usage, response)
