"""What goes into a chat completion and what comes out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..messages import AssistantMessage, Message, TokenUsage
from ..tools.base import ToolSchema


@dataclass(frozen=True)
class SamplingParams:
    """Sampling settings; ``None`` means "not set" (the server decides).

    ``extra`` holds provider-specific request fields merged last; it may not
    override ``model``, ``messages``, ``tools``, ``tool_choice`` or ``stream``.
    """

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()
    response_format: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LlmRequest:
    """One chat-completion request: history, tools, per-request sampling."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSchema, ...] = ()
    sampling: SamplingParams = field(default_factory=SamplingParams)
    tool_choice: str | dict[str, Any] | None = None


@dataclass(frozen=True)
class LlmResponse:
    """The assembled reply: the assistant message (with usage) and finish reason."""

    message: AssistantMessage
    finish_reason: str

    @property
    def usage(self) -> TokenUsage | None:
        return self.message.usage
