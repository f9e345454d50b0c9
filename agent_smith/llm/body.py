"""The JSON body of a chat-completions request (seed §8.2).

Sampling is merged deterministically: the client's defaults, then the
request's fields that are set, then the first-class fields (``model``,
``messages``, ``tools``, ``tool_choice``, ``stream`` and the named sampling
fields), then ``extra`` last. ``extra`` may not name a reserved structural key.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..errors import ConfigError
from .request import LlmRequest, SamplingParams

JsonObject = dict[str, Any]

RESERVED_KEYS = frozenset({"model", "messages", "tools", "tool_choice", "stream"})


_UNSET = SamplingParams()


def merge_sampling(defaults: SamplingParams, override: SamplingParams) -> SamplingParams:
    """``defaults`` with every field that ``override`` sets; ``extra`` dicts merged."""
    if defaults == _UNSET:  # a client without defaults (the usual one): nothing to merge
        return override
    return replace(
        defaults,
        temperature=_pick(override.temperature, defaults.temperature),
        top_p=_pick(override.top_p, defaults.top_p),
        max_tokens=_pick(override.max_tokens, defaults.max_tokens),
        stop=override.stop or defaults.stop,
        response_format=_pick(override.response_format, defaults.response_format),
        extra={**defaults.extra, **override.extra},
    )


def build_body(
    request: LlmRequest, *, model: str, defaults: SamplingParams, stream: bool
) -> JsonObject:
    """The request body as a JSON-ready dict.

    ``model`` is omitted when empty (llama-server serves its one model).
    ``tools`` is omitted when there are none (some servers reject ``[]``), and
    so is ``tool_choice``; with tools it is the request's choice or ``"auto"``.
    Streaming asks for usage in the last frame (``stream_options``).
    """
    sampling = merge_sampling(defaults, request.sampling)
    reserved = sorted(RESERVED_KEYS.intersection(sampling.extra))
    if reserved:
        raise ConfigError(
            f"sampling.extra may not set reserved request field(s) {', '.join(reserved)}"
        )
    body: JsonObject = {}
    if model:
        body["model"] = model
    body["messages"] = [message.to_openai() for message in request.messages]
    if request.tools:
        body["tools"] = [schema.to_openai() for schema in request.tools]
        body["tool_choice"] = request.tool_choice if request.tool_choice is not None else "auto"
    body["stream"] = stream
    if stream:
        body["stream_options"] = {"include_usage": True}
    if sampling.temperature is not None:
        body["temperature"] = sampling.temperature
    if sampling.top_p is not None:
        body["top_p"] = sampling.top_p
    if sampling.max_tokens is not None:
        body["max_tokens"] = sampling.max_tokens
    if sampling.stop:
        body["stop"] = list(sampling.stop)
    if sampling.response_format is not None:
        body["response_format"] = sampling.response_format
    body.update(sampling.extra)
    return body


def _pick(value: Any, fallback: Any) -> Any:
    return fallback if value is None else value
