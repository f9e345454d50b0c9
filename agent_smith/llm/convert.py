"""What every provider's edge reads off a neutral request the same way.

The merged sampling (client defaults, then the request's), checked against
the keys ``extra`` may not set for that provider, and its set fields under
the provider's names; the system text; the JSON schema of a
``response_format``; tool choice in its neutral form; the role-alternating
turn list most native APIs want. Each provider module turns these into its
own wire fields.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..messages import Message, SystemMessage
from .body import merge_sampling
from .request import LlmRequest, SamplingParams

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class OutputSchema:
    """The JSON schema a ``response_format`` of type ``json_schema`` asks for."""

    name: str
    schema: JsonObject
    strict: bool


def sampling_of(
    request: LlmRequest, defaults: SamplingParams, *, reserved: Iterable[str]
) -> SamplingParams:
    """The request's sampling over the client's defaults; ConfigError if ``extra`` sets a
    ``reserved`` key."""
    sampling = merge_sampling(defaults, request.sampling)
    taken = sorted(set(reserved).intersection(sampling.extra))
    if taken:
        raise ConfigError(
            f"sampling.extra may not set reserved request field(s) {', '.join(taken)}"
        )
    return sampling


def sampling_fields(
    sampling: SamplingParams,
    *,
    temperature: str,
    top_p: str,
    max_tokens: str | None = None,
    stop: str | None = None,
) -> JsonObject:
    """The sampling's set fields under the provider's names (a field named None is not sent)."""
    fields: JsonObject = {}
    for key, value in (
        (temperature, sampling.temperature),
        (top_p, sampling.top_p),
        (max_tokens, sampling.max_tokens),
    ):
        if key is not None and value is not None:
            fields[key] = value
    if stop is not None and sampling.stop:
        fields[stop] = list(sampling.stop)
    return fields


def add_turn(turns: list[JsonObject], role: str, blocks: list[JsonObject], *, key: str) -> None:
    """Append a ``role`` turn of ``blocks`` (under ``key``), or extend the last one of that role.

    APIs whose turns alternate roles want a tool result and the user text
    after it, or two assistant messages in a row, in one turn.
    """
    if turns and turns[-1]["role"] == role:
        turns[-1][key].extend(blocks)
    else:
        turns.append({"role": role, key: blocks})


def system_text(messages: Iterable[Message]) -> str:
    """Every system message's text, in order, joined by blank lines."""
    return "\n\n".join(m.content for m in messages if isinstance(m, SystemMessage))


def output_schema(response_format: JsonObject | None) -> OutputSchema | None:
    """The schema of a ``json_schema`` response format (None for no format or ``json_object``)."""
    if not response_format or response_format.get("type") != "json_schema":
        return None
    spec = response_format.get("json_schema")
    if not isinstance(spec, dict) or not isinstance(spec.get("schema"), dict):
        raise ConfigError("response_format json_schema needs a 'json_schema.schema' object")
    return OutputSchema(str(spec.get("name") or "output"), spec["schema"], bool(spec.get("strict")))


def forced_tool(tool_choice: str | JsonObject | None) -> str | None:
    """The tool name an OpenAI-style ``{"type": "function", "function": {"name"}}`` forces."""
    if isinstance(tool_choice, dict):
        function = tool_choice.get("function")
        name = function.get("name") if isinstance(function, dict) else tool_choice.get("name")
        if isinstance(name, str) and name:
            return name
        raise ConfigError(f"tool_choice {tool_choice!r} names no tool")
    return None
