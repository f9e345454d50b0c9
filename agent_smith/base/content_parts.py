"""The pieces of an OpenAI-style reply that are not plain strings.

A ``content`` sent as a list of typed parts (or as a JSON value), OpenRouter's
``reasoning_details`` and the ids of tool calls sent without one. Shared by
:meth:`~agent_smith.AssistantMessage.from_openai` and the stream decoder.
"""

from __future__ import annotations

import json

from ..errors import ParseError


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
