"""What goes into a chat completion and what comes out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..base.json_fields import expect_object
from ..errors import ParseError, TruncatedReplyError
from ..messages import AssistantMessage, Message, TokenUsage
from ..tools.base import ToolSchema
from .events import ServerToolUsed
from .server_tools import executed_tools

#: The tag of what the chat-completions dialect reports (the server tools some servers run).
PROVIDER = "openai"


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
    """The assembled reply: the assistant message (with usage) and finish reason.

    ``response_id`` and ``model`` are what the server said of itself (``""``
    when it did not say). ``server_tools`` are the tools the provider ran
    itself within the reply (never dispatched; see
    :mod:`agent_smith.llm.server_tools`).
    """

    message: AssistantMessage
    finish_reason: str
    response_id: str = ""
    model: str = ""
    server_tools: tuple[ServerToolUsed, ...] = ()

    @property
    def usage(self) -> TokenUsage | None:
        return self.message.usage

    @classmethod
    def from_openai(cls, body: object, *, lenient_arguments: bool = True) -> LlmResponse:
        """Validate a non-streamed chat-completions body from a server.

        Raises ParseError on a wrong shape. Tool calls whose arguments do not
        parse are kept in ``invalid_arguments`` (``lenient_arguments``), except
        when the reply was cut off by ``max_tokens``: that raises
        TruncatedReplyError.
        """
        body = expect_object(body, "response")
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices:
            raise ParseError("response has no choices (expected a non-empty array)")
        choice = expect_object(choices[0], "response.choices[0]")
        finish = choice.get("finish_reason")
        if finish is None:
            finish = "stop"
        if not isinstance(finish, str):
            raise ParseError(f"response finish_reason must be a string, got {finish!r}")
        raw_usage = body.get("usage")
        usage = None if raw_usage is None else TokenUsage.from_openai(raw_usage)
        message = AssistantMessage.from_openai(
            choice.get("message"), usage=usage, lenient_arguments=True
        )
        raw_message = choice.get("message")
        ran = raw_message.get("executed_tools") if isinstance(raw_message, dict) else None
        response = cls.checked(
            message,
            finish,
            response_id=string_field(body.get("id")),
            model=string_field(body.get("model")),
            server_tools=executed_tools(ran, PROVIDER) if ran else (),
        )
        if not lenient_arguments:
            for call in message.tool_calls:
                if call.invalid_arguments is not None:
                    raise ParseError(f"tool call {call.name!r}: arguments are not a JSON object")
        return response

    @classmethod
    def checked(
        cls,
        message: AssistantMessage,
        finish_reason: str,
        *,
        response_id: str = "",
        model: str = "",
        server_tools: tuple[ServerToolUsed, ...] = (),
    ) -> LlmResponse:
        """A response, refusing one cut off by ``max_tokens`` inside a tool call."""
        if finish_reason == "length":
            for call in message.tool_calls:
                if call.invalid_arguments is not None:
                    raise TruncatedReplyError(
                        f"reply was cut off by max_tokens inside tool call {call.name!r}"
                        " (raise max_tokens)"
                    )
        return cls(message, finish_reason, response_id, model, server_tools)


def string_field(value: object) -> str:
    """A self-description field of a reply (``id``, ``model``): kept only if it is a string."""
    return value if isinstance(value, str) else ""
