"""Events yielded while a chat completion streams in."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
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
class Finished:
    """The last event of a stream: why it ended, usage, and the whole response."""

    finish_reason: str
    usage: TokenUsage | None
    response: LlmResponse


StreamEvent = TokenDelta | ReasoningDelta | ToolCallStarted | ToolCallCompleted | Finished


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
    for index, call in enumerate(message.tool_calls):
        yield ToolCallCompleted(index, call.arguments)
    yield Finished(response.finish_reason, message.usage, response)
