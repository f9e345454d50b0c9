"""Conversation messages and their OpenAI chat-completions wire form.

Four frozen dataclasses model a history: :class:`SystemMessage`,
:class:`UserMessage`, :class:`AssistantMessage` and :class:`ToolMessage`.
``to_openai()`` is total; ``message_from_openai()`` validates untrusted JSON
and raises :class:`~agent_smith.errors.ParseError`. ``messages_to_json`` /
``messages_from_json`` persist a whole history (internal fields included);
the library itself never writes it anywhere.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from dataclasses_json import DataClassJsonMixin, config

from ._internal import json_input
from .errors import ConfigError, ParseError

JsonObject = dict[str, Any]

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
    sum is None only when every part is.
    """

    prompt: int = 0
    completion: int = 0
    total: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float | None = None

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
        )

    @classmethod
    def from_openai(cls, data: object) -> TokenUsage:
        """Parse an OpenAI ``usage`` object; raise ParseError on wrong types."""
        obj = expect_object(data, "usage")
        counts = []
        for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
            value = obj.get(key, 0)
            if value is None:
                value = 0
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ParseError(f"usage.{key} must be a non-negative integer, got {value!r}")
            counts.append(value)
        prompt, completion, total = counts
        return cls(prompt, completion, total or prompt + completion)


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
        return json.dumps(self.arguments, ensure_ascii=False)

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

    def to_openai(self) -> JsonObject:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class UserMessage(DataClassJsonMixin):
    """What the user said."""

    content: str
    role: ClassVar[str] = "user"

    def to_openai(self) -> JsonObject:
        return {"role": self.role, "content": self.content}


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
class ToolMessage(DataClassJsonMixin):
    """The result of one tool call. ``is_error`` is internal, never on the wire."""

    tool_call_id: str
    name: str
    content: str
    is_error: bool = False
    role: ClassVar[str] = "tool"

    def to_openai(self) -> JsonObject:
        return {"role": self.role, "tool_call_id": self.tool_call_id, "content": self.content}


Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage

_BY_ROLE: dict[str, type[Message]] = {
    cls.role: cls for cls in (SystemMessage, UserMessage, AssistantMessage, ToolMessage)
}


def message_from_openai(data: object) -> Message:
    """Validate one OpenAI wire message of any role."""
    obj = expect_object(data, "message")
    role = obj.get("role")
    if role == "assistant":
        return AssistantMessage.from_openai(obj)
    if not isinstance(role, str) or role not in _BY_ROLE:
        raise ParseError(f"message.role must be one of {sorted(_BY_ROLE)}, got {role!r}")
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


def messages_to_json(messages: Iterable[Message]) -> str:
    """Serialise a history, internal fields included, for the caller to persist."""
    return json.dumps([message_to_dict(m) for m in messages], ensure_ascii=False)


def messages_from_json(text: str) -> list[Message]:
    """Load a history written by :func:`messages_to_json`."""
    try:
        items = json_input.loads(text)
    except json.JSONDecodeError as err:
        raise ParseError(f"history is not valid JSON ({err.msg})", offset=err.pos) from err
    if not isinstance(items, list):
        raise ParseError("history must be a JSON array")
    return [message_from_dict(item, f"history[{i}]") for i, item in enumerate(items)]


def message_to_dict(message: Message) -> JsonObject:
    """One message in the JSON form of :func:`messages_to_json`: its role, then every field.

    Written out by hand rather than through ``to_dict()``: a stored history is
    read and written a message at a time (sessions), and dataclasses-json
    costs tens of microseconds per message where this costs one or two.
    """
    if isinstance(message, AssistantMessage):
        usage = message.usage
        replay = message.provider_data
        return {
            "role": message.role,
            "content": message.content,
            "tool_calls": [tool_call_to_dict(call) for call in message.tool_calls],
            "usage": None if usage is None else usage_to_dict(usage),
            "reasoning": message.reasoning,
            "provider_data": None
            if replay is None
            else {"provider": replay.provider, "data": replay.data},
        }
    if isinstance(message, ToolMessage):
        return {
            "role": message.role,
            "tool_call_id": message.tool_call_id,
            "name": message.name,
            "content": message.content,
            "is_error": message.is_error,
        }
    if isinstance(message, (SystemMessage, UserMessage)):
        return {"role": message.role, "content": message.content}
    raise ConfigError(f"not a message: {type(message).__name__}")


def message_from_dict(data: object, where: str = "message") -> Message:
    """Read one message written by :func:`message_to_dict`; ParseError naming ``where``."""
    obj = expect_object(data, where)
    role = obj.get("role")
    if not isinstance(role, str) or role not in _BY_ROLE:  # a list would not hash
        raise ParseError(f"{where} has unknown role {role!r}")
    what = f"{role} message"
    if role == "assistant":
        calls = json_field(obj, "tool_calls", list, [], where, what)
        usage = json_field(obj, "usage", dict, None, where, what)
        replay = json_field(obj, "provider_data", dict, None, where, what)
        return AssistantMessage(
            json_field(obj, "content", str, "", where, what),
            tuple(tool_call_from_dict(c, f"{where}.tool_calls[{i}]") for i, c in enumerate(calls)),
            None if usage is None else usage_from_dict(usage, f"{where}.usage"),
            json_field(obj, "reasoning", str, None, where, what),
            None if replay is None else _provider_data_from_dict(replay, f"{where}.provider_data"),
        )
    if role == "tool":
        return ToolMessage(
            json_field(obj, "tool_call_id", str, REQUIRED, where, what),
            json_field(obj, "name", str, REQUIRED, where, what),
            json_field(obj, "content", str, REQUIRED, where, what),
            json_field(obj, "is_error", bool, False, where, what),
        )
    content = json_field(obj, "content", str, REQUIRED, where, what)
    return SystemMessage(content) if role == "system" else UserMessage(content)


#: The ``default`` of :func:`json_field` for a key that must be present.
REQUIRED: Any = object()


def json_field(
    obj: JsonObject, key: str, kind: type[Any], default: Any, where: str, what: str
) -> Any:
    """``obj[key]`` if it is a ``kind``; ``default`` if absent (or null, when that is None).

    ParseError saying ``where`` is not a valid ``what`` otherwise, or when a
    ``REQUIRED`` key is missing.
    """
    value = obj.get(key, REQUIRED)
    if type(value) is kind:  # the common case; exact, so True is no int and 1 no bool
        return value
    if value is REQUIRED or (value is None and default is None):
        if default is REQUIRED:
            raise ParseError(f"{where} is not a valid {what}: {key!r} is missing")
        return default
    raise ParseError(
        f"{where} is not a valid {what}: {key!r} must be {kind.__name__}, "
        f"got {type(value).__name__}"
    )


def tool_call_to_dict(call: ToolCall) -> JsonObject:
    """A tool call in the JSON form of :func:`messages_to_json`."""
    return {
        "id": call.id,
        "name": call.name,
        "arguments": call.arguments,
        "invalid_arguments": call.invalid_arguments,
    }


def tool_call_from_dict(data: object, where: str) -> ToolCall:
    """Read a tool call written by :func:`tool_call_to_dict`; ParseError naming ``where``."""
    obj = expect_object(data, where)
    return ToolCall(
        json_field(obj, "id", str, REQUIRED, where, "tool call"),
        json_field(obj, "name", str, REQUIRED, where, "tool call"),
        json_field(obj, "arguments", dict, {}, where, "tool call"),
        json_field(obj, "invalid_arguments", str, None, where, "tool call"),
    )


def usage_to_dict(usage: TokenUsage) -> JsonObject:
    """Token usage in the JSON form of :func:`messages_to_json`."""
    return {
        "prompt": usage.prompt,
        "completion": usage.completion,
        "total": usage.total,
        "cache_read": usage.cache_read,
        "cache_write": usage.cache_write,
        "cost": usage.cost,
    }


def usage_from_dict(data: JsonObject, where: str) -> TokenUsage:
    """Read usage written by :func:`usage_to_dict`; ParseError naming ``where``."""
    return TokenUsage(
        json_field(data, "prompt", int, 0, where, "usage"),
        json_field(data, "completion", int, 0, where, "usage"),
        json_field(data, "total", int, 0, where, "usage"),
        json_field(data, "cache_read", int, 0, where, "usage"),
        json_field(data, "cache_write", int, 0, where, "usage"),
        json_field(data, "cost", float, None, where, "usage"),
    )


def _provider_data_from_dict(data: JsonObject, where: str) -> ProviderData:
    return ProviderData(
        json_field(data, "provider", str, REQUIRED, where, "provider data"), data.get("data")
    )


def content_from_wire(value: object, where: str) -> tuple[str, str]:
    """A ``content`` that is not a string, as ``(text, thinking)``.

    Some servers send a list of typed parts (Mistral: ``{"type": "text",
    "text": ...}`` and ``{"type": "thinking", "thinking": [text parts]}``);
    some send the JSON value itself when a ``response_format`` asked for an
    object. Parts of other types (images, audio) carry no text and are skipped.
    ParseError naming ``where`` for anything else.
    """
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False), ""
    if not isinstance(value, list):
        raise ParseError(f"{where} must be a string or a list of parts, got {type(value).__name__}")
    text: list[str] = []
    thinking: list[str] = []
    for part in value:
        if not isinstance(part, dict):
            raise ParseError(f"{where} parts must be objects, got {type(part).__name__}")
        kind = part.get("type")
        if kind == "text":
            text.append(_part_text(part.get("text"), where))
        elif kind == "thinking":
            inner = part.get("thinking")
            if isinstance(inner, list):
                thinking.append(content_from_wire(inner, where)[0])
            else:
                thinking.append(_part_text(inner, where))
    return "".join(text), "".join(thinking)


def _part_text(value: object, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ParseError(f"{where}: a part's text must be a string, got {type(value).__name__}")
    return value


def made_up_call_id(index: int) -> str:
    """The id given to a tool call the server sent without one (its position in the reply)."""
    return f"call_{index}"


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


def details_text(details: object) -> str | None:
    """The text of OpenRouter-style ``reasoning_details`` (``reasoning.text`` and
    ``reasoning.summary`` entries; encrypted ones have none); ParseError if not a list."""
    if not isinstance(details, list):
        raise ParseError("reasoning_details must be an array")
    parts: list[str] = []
    for detail in details:
        text = (detail.get("text") or detail.get("summary")) if isinstance(detail, dict) else None
        if isinstance(text, str):
            parts.append(text)
    return "".join(parts) or None


def expect_object(data: object, where: str) -> JsonObject:
    """``data`` as a JSON object; ParseError naming ``where`` if it is something else."""
    if not isinstance(data, dict):
        raise ParseError(f"{where} must be a JSON object, got {type(data).__name__}")
    return data
