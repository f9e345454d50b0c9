"""Prompts, replies and tool data as the GenAI conventions' JSON, after ``redact()``.

Only used with ``Runtime(trace_content=True)``. Messages follow the
conventions' input/output message schemas (``role`` and ``parts``: ``text``,
``tool_call``, ``tool_call_response``, ``reasoning``), serialised to JSON
strings because span attributes cannot hold structured values. Every text is
passed through :func:`~agent_smith.logs.redact` (JSON text has its
secret-named fields replaced) and every argument object too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from ..logs import redact
from ..messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage
from ..observer import ToolResultFacts

JsonObject = dict[str, Any]


def system_instructions(messages: Iterable[Message]) -> str | None:
    """The system messages' text parts, or None when there are none."""
    parts = [_text(m.content) for m in messages if isinstance(m, SystemMessage)]
    return _dumps(parts) if parts else None


def input_messages(messages: Iterable[Message]) -> str:
    """Every non-system message, in the order sent."""
    return _dumps([_message(m) for m in messages if not isinstance(m, SystemMessage)])


def output_messages(message: AssistantMessage, finish_reason: str) -> str:
    """The model's reply as the one output message."""
    parts = _assistant_parts(message)
    if message.reasoning:
        parts.insert(0, {"type": "reasoning", "content": redact(message.reasoning)})
    return _dumps([{"role": "assistant", "parts": parts, "finish_reason": finish_reason}])


def tool_arguments(call: ToolCall) -> str:
    """The call's arguments (its raw text when they did not parse)."""
    return _dumps(_arguments(call))


def tool_result(result: ToolResultFacts) -> str:
    """What the tool returned: its structured value if any, else its text."""
    value = result.structured if result.structured is not None else result.content
    return _dumps(redact(value))


def _message(message: Message) -> JsonObject:
    if isinstance(message, AssistantMessage):
        return {"role": "assistant", "parts": _assistant_parts(message)}
    if isinstance(message, ToolMessage):
        part = {"type": "tool_call_response", "id": message.tool_call_id}
        part["response"] = redact(message.text)
        return {"role": "tool", "parts": [part]}
    return {"role": message.role, "parts": [_text(message.text)]}


def _assistant_parts(message: AssistantMessage) -> list[JsonObject]:
    parts = [_text(message.content)] if message.content else []
    parts.extend(
        {"type": "tool_call", "id": call.id, "name": call.name, "arguments": _arguments(call)}
        for call in message.tool_calls
    )
    return parts


def _arguments(call: ToolCall) -> Any:
    if call.invalid_arguments is not None:
        return redact(call.invalid_arguments)
    return redact(call.arguments)


def _text(content: str) -> JsonObject:
    return {"type": "text", "content": redact(content)}


def _dumps(value: Sequence[Any] | Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
