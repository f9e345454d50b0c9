"""The stored JSON form of a history: every message with its internal fields.

:func:`messages_to_json` / :func:`messages_from_json` persist a whole history
(the library itself never writes it anywhere); sessions and paused turns read
and write the same form a message, tool call or usage at a time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from .._internal import json_input
from ..errors import ConfigError, ParseError
from ..messages import (
    BY_ROLE,
    AssistantMessage,
    Message,
    ProviderData,
    SystemMessage,
    TokenUsage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from .json_fields import REQUIRED, JsonObject, expect_object, json_field
from .parts import Content, content_from_json, content_to_json


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
            "content": content_to_json(message.content),
            "is_error": message.is_error,
        }
    if isinstance(message, UserMessage):
        return {"role": message.role, "content": content_to_json(message.content)}
    if isinstance(message, SystemMessage):
        return {"role": message.role, "content": message.content}
    raise ConfigError(f"not a message: {type(message).__name__}")


def message_from_dict(data: object, where: str = "message") -> Message:
    """Read one message written by :func:`message_to_dict`; ParseError naming ``where``."""
    if type(data) is dict:
        message = _written_message(data)
        if message is not None:
            return message
    return _checked_message(data, where)


def _checked_message(data: object, where: str) -> Message:
    """:func:`message_from_dict` field by field: ParseError saying what is wrong, and where."""
    obj = expect_object(data, where)
    role = obj.get("role")
    if not isinstance(role, str) or role not in BY_ROLE:  # a list would not hash
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
            _content(obj, where, what),
            json_field(obj, "is_error", bool, False, where, what),
        )
    if role == "user":
        return UserMessage(_content(obj, where, what))
    return SystemMessage(json_field(obj, "content", str, REQUIRED, where, what))


def _content(obj: JsonObject, where: str, what: str) -> Content:
    """A user message's or tool result's content: a string, or a list of stored parts."""
    if isinstance(obj.get("content"), list):
        return content_from_json(obj["content"], f"{where}.content")
    text: str = json_field(obj, "content", str, REQUIRED, where, what)
    return text


def _written_message(obj: JsonObject) -> Message | None:
    """``obj`` read at once if it has the shape :func:`message_to_dict` writes, else None.

    Loading a long session reads thousands of messages: a message as written
    is checked here with a few type tests; anything else (a missing, null or
    mistyped field, provider data) returns None and goes through the
    field-by-field reading that explains what is wrong. Both readings give
    the same message.
    """
    role = obj.get("role")
    if role == "user" or role == "system":
        content = obj.get("content")
        if type(content) is not str:
            return None
        return UserMessage(content) if role == "user" else SystemMessage(content)
    if role == "tool":
        call_id, name = obj.get("tool_call_id"), obj.get("name")
        content, is_error = obj.get("content"), obj.get("is_error", False)
        if type(call_id) is not str or type(name) is not str or type(content) is not str:
            return None
        return ToolMessage(call_id, name, content, is_error) if type(is_error) is bool else None
    if role != "assistant":
        return None
    content, written_calls = obj.get("content", ""), obj.get("tool_calls", [])
    usage, reasoning = obj.get("usage"), obj.get("reasoning")
    if type(content) is not str or type(written_calls) is not list:
        return None
    if obj.get("provider_data") is not None:
        return None
    if reasoning is not None and type(reasoning) is not str:
        return None
    calls = []
    for call in written_calls:
        if type(call) is not dict:
            return None
        call_id, name = call.get("id"), call.get("name")
        arguments, invalid = call.get("arguments", {}), call.get("invalid_arguments")
        if type(call_id) is not str or type(name) is not str or type(arguments) is not dict:
            return None
        if invalid is not None and type(invalid) is not str:
            return None
        calls.append(ToolCall(call_id, name, arguments, invalid))
    if usage is not None:
        if type(usage) is not dict:
            return None
        prompt, completion, total = (
            usage.get("prompt", 0),
            usage.get("completion", 0),
            usage.get("total", 0),
        )
        read, write, cost, reasoning_tokens = (
            usage.get("cache_read", 0),
            usage.get("cache_write", 0),
            usage.get("cost"),
            usage.get("reasoning", 0),
        )
        if not (
            type(prompt)
            is type(completion)
            is type(total)
            is type(read)
            is type(write)
            is type(reasoning_tokens)
            is int
        ):
            return None
        if cost is not None and type(cost) is not float:
            return None
        usage = TokenUsage(prompt, completion, total, read, write, cost, reasoning_tokens)
    return AssistantMessage(content, tuple(calls), usage, reasoning)


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
        "reasoning": usage.reasoning,
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
        json_field(data, "reasoning", int, 0, where, "usage"),
    )


def _provider_data_from_dict(data: JsonObject, where: str) -> ProviderData:
    return ProviderData(
        json_field(data, "provider", str, REQUIRED, where, "provider data"), data.get("data")
    )
