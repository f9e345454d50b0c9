"""The JSON a durable turn records: its start, each model reply, each tool result.

Every record is a JSON object of our own (never a pickle), written by
:func:`start_record`, :func:`reply_record` and :func:`result_record` and read
back by :func:`decode_record` and the ``*_from`` readers below. A record that
cannot be read (not JSON, another shape, a message that does not parse) is a
:class:`~agent_smith.errors.DurableStateError` naming the turn and the step.

The start record keeps what the turn must replay under (the agent's name, its
model, its tools' schemas) and the history it started from; a model reply
keeps a digest of the request it answered, so a replay that would send a
different request fails closed (:class:`~agent_smith.errors.ReplayMismatchError`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._internal import json_input
from ..base.history_json import message_from_dict, message_to_dict
from ..base.json_fields import JsonObject
from ..base.parts import content_to_json, parts_from_json
from ..errors import AgentSmithError, DurableStateError
from ..llm.request import LlmRequest, LlmResponse
from ..messages import AssistantMessage, Message
from ..tools.base import ToolResult, ToolSchema


@dataclass(frozen=True)
class TurnStart:
    """What a durable turn started from: who ran it, with what, on which history."""

    agent: str
    model: str
    tools: dict[str, str]  # tool name -> digest of its schema
    history: tuple[Message, ...]


def _digest(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def schema_digests(schemas: Sequence[ToolSchema]) -> dict[str, str]:
    """Each tool's name with a digest of its description and parameters."""
    return {s.name: _digest([s.description, s.parameters]) for s in schemas}


def request_digest(request: LlmRequest) -> str:
    """A digest of what a request asks: its messages and its tools."""
    messages = [message_to_dict(m) for m in request.messages]
    tools = [[t.name, t.description, t.parameters] for t in request.tools]
    return _digest([messages, tools, request.tool_choice])


def start_record(start: TurnStart) -> str:
    return _dumps(
        {
            "kind": "start",
            "agent": start.agent,
            "model": start.model,
            "tools": start.tools,
            "history": [message_to_dict(m) for m in start.history],
        }
    )


def reply_record(response: LlmResponse, digest: str) -> str:
    return _dumps(
        {
            "kind": "reply",
            "request": digest,
            "message": message_to_dict(response.message),
            "finish_reason": response.finish_reason,
            "response_id": response.response_id,
            "model": response.model,
        }
    )


def result_record(result: ToolResult) -> str:
    structured = result.structured
    try:
        json.dumps(structured)
    except (TypeError, ValueError):
        structured = None  # only JSON is recorded; the content carries the result
    record = {"kind": "result", "content": result.content, "error": result.is_error}
    record["data"] = structured
    if result.parts:
        record["parts"] = content_to_json(result.parts)
    return _dumps(record)


def _dumps(record: JsonObject) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def decode_record(text: str, kind: str, turn_id: str, step: str) -> JsonObject:
    """Parse the record of ``step``; DurableStateError unless it is a ``kind`` record."""
    where = f"durable turn {turn_id!r} step {step!r}"
    try:
        record = json_input.loads(text)
    except (json.JSONDecodeError, RecursionError) as err:
        raise DurableStateError(f"{where}: the record is not JSON", turn_id=turn_id) from err
    if not isinstance(record, dict) or record.get("kind") != kind:
        raise DurableStateError(f"{where}: not a {kind} record", turn_id=turn_id)
    return record


def start_from(record: JsonObject, turn_id: str) -> TurnStart:
    def field(name: str, kind: type[Any]) -> Any:
        value = record.get(name)
        if not isinstance(value, kind):
            raise DurableStateError(
                f"durable turn {turn_id!r}: the start record's {name} is not a {kind.__name__}",
                turn_id=turn_id,
            )
        return value

    tools = field("tools", dict)
    if not all(isinstance(v, str) for v in tools.values()):
        raise DurableStateError(
            f"durable turn {turn_id!r}: the start record's tools are not digests", turn_id=turn_id
        )
    history = field("history", list)
    messages = tuple(
        message_from(item, f"start history[{i}]", turn_id) for i, item in enumerate(history)
    )
    return TurnStart(field("agent", str), field("model", str), tools, messages)


def reply_from(record: JsonObject, turn_id: str, step: str) -> tuple[LlmResponse, str]:
    """The recorded reply and the digest of the request it answered."""
    message = message_from(record.get("message"), f"step {step!r} message", turn_id)
    fields = [record.get(k) for k in ("request", "finish_reason", "response_id", "model")]
    if not isinstance(message, AssistantMessage) or not all(isinstance(f, str) for f in fields):
        raise DurableStateError(
            f"durable turn {turn_id!r} step {step!r}: not a model reply", turn_id=turn_id
        )
    digest, finish, response_id, model = (str(f) for f in fields)
    return LlmResponse(message, finish, response_id, model), digest


def result_from(record: JsonObject, turn_id: str, step: str) -> ToolResult:
    content, error, stored = record.get("content"), record.get("error"), record.get("parts", [])
    if not isinstance(content, str) or not isinstance(error, bool) or not isinstance(stored, list):
        raise DurableStateError(
            f"durable turn {turn_id!r} step {step!r}: not a tool result", turn_id=turn_id
        )
    try:
        parts = parts_from_json(stored, f"step {step!r} parts")
    except AgentSmithError as err:
        raise DurableStateError(f"durable turn {turn_id!r}: {err}", turn_id=turn_id) from err
    return ToolResult(content, is_error=error, structured=record.get("data"), parts=parts)


def message_from(data: object, where: str, turn_id: str) -> Message:
    try:
        return message_from_dict(data, where)
    except AgentSmithError as err:
        raise DurableStateError(f"durable turn {turn_id!r}: {err}", turn_id=turn_id) from err
