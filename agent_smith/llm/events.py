"""Events yielded while a chat completion streams in."""

from __future__ import annotations

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
