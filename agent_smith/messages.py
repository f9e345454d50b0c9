"""Conversation messages and their OpenAI chat-completions wire form.

Four frozen dataclasses model a history: :class:`SystemMessage`,
:class:`UserMessage`, :class:`AssistantMessage` and :class:`ToolMessage`.
``to_openai()`` is total; ``message_from_openai()`` validates untrusted JSON
and raises :class:`~agent_smith.errors.ParseError`. ``messages_to_json`` /
``messages_from_json`` (in :mod:`agent_smith.base.history_json`) persist a whole
history, internal fields included.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from dataclasses_json import DataClassJsonMixin, config

from ._internal import json_input, json_output
from .base.content_parts import content_from_wire, details_text, made_up_call_id
from .base.json_fields import JsonObject, expect_object
from .base.parts import Content, as_parts, content_text
from .errors import ConfigError, ParseError

# A field kept out of to_dict() and ignored by from_dict().
_NOT_SERIALISED = config(exclude=lambda _value: True, decoder=lambda _value: None)


@dataclass(frozen=True)
class TokenUsage(DataClassJsonMixin):
    """Token counts reported by the server for one or more completions.

    ``prompt`` counts every input token, cached or not; ``cache_read`` and
    ``cache_write`` say how many of them were read from or written to the
    provider's prompt cache (when it reports them).
    ``cost`` is what they cost, in the currency of the price table an agent's
    :class:`~agent_smith.UsageLimits` gives (None when no price applies); a
    sum is None only when every part is. ``reasoning`` says how many of the
    ``completion`` tokens were the model's reasoning (when it reports them).
    """

    prompt: int = 0
    completion: int = 0
    total: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float | None = None
    reasoning: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        cost = self.cost
        if other.cost is not None:
            cost = other.cost if cost is None else cost + other.cost
        return TokenUsage(
            self.prompt + other.prompt,
            self.completion + other.completion,
            self.total + other.total,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            cost,
            self.reasoning + other.reasoning,
        )

    @classmethod
    def from_openai(cls, data: object) -> TokenUsage:
        """Parse an OpenAI ``usage`` object (with the cached prompt tokens and the reasoning
        tokens its details give, when present); raise ParseError on wrong types."""
        obj = expect_object(data, "usage")
        prompt, completion, total = (_count(obj, key, "usage") for key in _OPENAI_COUNTS)
        cached = reasoning = 0
        prompt_details = obj.get("prompt_tokens_details")
        if prompt_details is not None:
            details = expect_object(prompt_details, "usage.prompt_tokens_details")
            cached = _count(details, "cached_tokens", "usage.prompt_tokens_details")
        completion_details = obj.get("completion_tokens_details")
        if completion_details is not None:
            details = expect_object(completion_details, "usage.completion_tokens_details")
            reasoning = _count(details, "reasoning_tokens", "usage.completion_tokens_details")
        return cls(prompt, completion, total or prompt + completion, cached, reasoning=reasoning)


_OPENAI_COUNTS = ("prompt_tokens", "completion_tokens", "total_tokens")


def _count(obj: JsonObject, key: str, where: str) -> int:
    """``obj[key]`` as a token count (absent or null: 0); ParseError naming ``where.key``."""
    value = obj.get(key)
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ParseError(f"{where}.{key} must be a non-negative integer, got {value!r}")
    return value


@dataclass(frozen=True)
class ToolCall(DataClassJsonMixin):
    """One function call requested by the model.

    ``arguments`` is the parsed JSON object. When the model produced text that
    is not a JSON object, ``arguments`` is empty and ``invalid_arguments`` keeps
    the raw text so the loop can tell the model what was wrong.
    """

    id: str
    name: str
    arguments: JsonObject = field(default_factory=dict)
    invalid_arguments: str | None = None

    @classmethod
    def from_wire(
        cls, call_id: str, name: str, arguments_text: str, *, lenient: bool = False
    ) -> ToolCall:
        """Build a call from its wire ``arguments`` string.

        Strict mode raises ParseError when the text is not a JSON object;
        lenient mode keeps the text in ``invalid_arguments`` instead.
        """
        text = arguments_text.strip()
        if not text:
            return cls(call_id, name, {})
        try:
            parsed = json_input.loads(text)
        except json.JSONDecodeError as err:
            if lenient:
                return cls(call_id, name, {}, arguments_text)
            raise ParseError(
                f"tool call {name!r}: arguments are not valid JSON ({err.msg})", offset=err.pos
            ) from err
        if not isinstance(parsed, dict):
            if lenient:
                return cls(call_id, name, {}, arguments_text)
            raise ParseError(
                f"tool call {name!r}: arguments must be a JSON object, got {type(parsed).__name__}"
            )
        return cls(call_id, name, parsed)

    def arguments_text(self) -> str:
        """The arguments as sent on the wire (the raw text if they were invalid)."""
        if self.invalid_arguments is not None:
            return self.invalid_arguments
        return json_output.dumps(self.arguments)

    def to_openai(self) -> JsonObject:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments_text()},
        }


@dataclass(frozen=True)
class SystemMessage(DataClassJsonMixin):
    """Instructions for the model."""

    content: str
    role: ClassVar[str] = "system"

    @property
    def text(self) -> str:
        """The instructions (the same as ``content``; every message but the assistant's has it)."""
        return self.content

    def to_openai(self) -> JsonObject:
        return {"role": self.role, "content": self.content}


class _PartsContent:
    """A message whose ``content`` is a string or parts (user messages, tool results)."""

    content: Content

    def __post_init__(self) -> None:
        if type(self.content) is not str:  # parts: strings among them become TextParts
            object.__setattr__(self, "content", as_parts(self.content))

    @property
    def text(self) -> str:
        """The text: the string, or the text parts joined by newlines."""
        return content_text(self.content)


@dataclass(frozen=True)
class UserMessage(_PartsContent, DataClassJsonMixin):
    """What the user said: a string, or a tuple of parts (text, images, documents, audio).

    ``text`` is the text of either form (see :mod:`agent_smith.base.parts`).
    """

    content: Content
    role: ClassVar[str] = "user"

    def to_openai(self) -> JsonObject:
        return {"role": self.role, "content": _plain(self.content, self.role)}


@dataclass(frozen=True)
class ProviderData(DataClassJsonMixin):
    """What one provider needs sent back verbatim with a model turn; opaque to the rest.

    Anthropic's signed thinking blocks, Gemini's thought signatures and the
    Responses API's reasoning items must be replayed to the provider that
    made them (in a tool loop) and mean nothing to any other. ``provider``
    names the client that wrote ``data`` (a JSON value); another provider
    drops it, so a history can move between providers.
    """

    provider: str
    data: Any


@dataclass(frozen=True)
class AssistantMessage(DataClassJsonMixin):
    """A model turn: text, tool calls, or both.

    ``reasoning`` holds the model's thinking text when the server streams it
    separately; it is never sent back to the server. ``output`` holds the
    validated typed output (an instance of the turn's ``output_type``) of a
    final answer, whose raw JSON stays in ``content``. It is derived data:
    never on the wire, left out of ``messages_to_json`` (a loaded history has
    ``output=None``; ``parse_output(T, message.content)`` rebuilds it) and
    not compared by ``==``. ``provider_data`` is what the provider that
    wrote this turn needs replayed (see :class:`ProviderData`).
    """

    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: TokenUsage | None = None
    reasoning: str | None = None
    provider_data: ProviderData | None = None
    output: Any = field(default=None, compare=False, metadata=_NOT_SERIALISED)
    role: ClassVar[str] = "assistant"

    def to_openai(self) -> JsonObject:
        wire: JsonObject = {"role": self.role, "content": self.content}
        if self.tool_calls:
            wire["content"] = self.content or None
            wire["tool_calls"] = [call.to_openai() for call in self.tool_calls]
        return wire

    def replay_for(self, provider: str) -> Any:
        """This turn's provider data if ``provider`` wrote it, else None (dropped)."""
        data = self.provider_data
        return data.data if data is not None and data.provider == provider else None

    @classmethod
    def from_openai(
        cls, data: object, *, usage: TokenUsage | None = None, lenient_arguments: bool = False
    ) -> AssistantMessage:
        """Validate an OpenAI assistant ``message`` object from a server."""
        obj = expect_object(data, "message")
        content = obj.get("content")
        thinking = ""
        if content is None:
            content = ""
        elif not isinstance(content, str):
            content, thinking = content_from_wire(content, "message.content")
        reasoning = obj.get("reasoning_content") or obj.get("reasoning")
        if reasoning is None and obj.get("reasoning_details"):
            reasoning = details_text(obj["reasoning_details"])
        if reasoning is not None and not isinstance(reasoning, str):
            raise ParseError("message.reasoning_content must be a string")
        reasoning = (reasoning or "") + thinking
        raw_calls = obj.get("tool_calls")
        if raw_calls is None:
            raw_calls = []
        if not isinstance(raw_calls, list):
            raise ParseError("message.tool_calls must be an array")
        calls = tuple(
            _tool_call_from_openai(raw, i, lenient_arguments) for i, raw in enumerate(raw_calls)
        )
        return cls(content, calls, usage, reasoning or None)


@dataclass(frozen=True)
class ToolMessage(_PartsContent, DataClassJsonMixin):
    """The result of one tool call. ``is_error`` is internal, never on the wire.

    ``content`` is a string or a tuple of parts (a tool that returned an image,
    say); ``text`` is the text of either form.
    """

    tool_call_id: str
    name: str
    content: Content
    is_error: bool = False
    role: ClassVar[str] = "tool"

    def to_openai(self) -> JsonObject:
        return {
            "role": self.role,
            "tool_call_id": self.tool_call_id,
            "content": _plain(self.content, self.role),
        }


Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage

#: The message class of each OpenAI role.
BY_ROLE: dict[str, type[Message]] = {
    cls.role: cls for cls in (SystemMessage, UserMessage, AssistantMessage, ToolMessage)
}


def message_from_openai(data: object) -> Message:
    """Validate one OpenAI wire message of any role."""
    obj = expect_object(data, "message")
    role = obj.get("role")
    if role == "assistant":
        return AssistantMessage.from_openai(obj)
    if not isinstance(role, str) or role not in BY_ROLE:
        raise ParseError(f"message.role must be one of {sorted(BY_ROLE)}, got {role!r}")
    content = obj.get("content")
    if not isinstance(content, str):
        raise ParseError(f"{role} message content must be a string")
    if role == "tool":
        call_id = obj.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise ParseError("tool message needs a string tool_call_id")
        name = obj.get("name", "")
        return ToolMessage(call_id, name if isinstance(name, str) else "", content)
    return SystemMessage(content) if role == "system" else UserMessage(content)


def _plain(content: Content, role: str) -> str:
    """String content as it is; parts are converted by each provider's module, not here."""
    if isinstance(content, str):
        return content
    raise ConfigError(
        f"a {role} message with content parts has no plain OpenAI form; "
        "the provider's client converts its parts"
    )


def _tool_call_from_openai(data: object, index: int, lenient: bool) -> ToolCall:
    where = f"message.tool_calls[{index}]"
    obj = expect_object(data, where)
    call_id = obj.get("id")
    if call_id is None or call_id == "":
        call_id = made_up_call_id(index)
    if not isinstance(call_id, str):
        raise ParseError(f"{where} has no string id")
    function = expect_object(obj.get("function"), f"{where}.function")
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise ParseError(f"{where}.function has no string name")
    arguments = function.get("arguments")
    if arguments is None:
        arguments = ""
    if isinstance(arguments, Mapping):  # a few servers send an object, not a string
        return ToolCall(call_id, name, dict(arguments))
    if not isinstance(arguments, str):
        raise ParseError(f"{where}.function.arguments must be a string")
    return ToolCall.from_wire(call_id, name, arguments, lenient=lenient)
