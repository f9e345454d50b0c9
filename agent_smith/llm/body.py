"""The JSON body of a chat-completions request (seed §8.2).

Sampling is merged deterministically: the client's defaults, then the
request's fields that are set, then the first-class fields (``model``,
``messages``, ``tools``, ``tool_choice``, ``stream`` and the named sampling
fields), then ``extra`` last. ``extra`` may not name a reserved structural key.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..base.parts import AudioPart, ImagePart, Part, TextPart, normal_media_type
from ..errors import ConfigError
from ..messages import Message, ToolMessage, UserMessage
from .part_support import COMMON_IMAGES, PartSupport
from .request import LlmRequest, SamplingParams
from .wire_bytes import Base64Data, data_url_prefix

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
    body["messages"] = [_message(message) for message in request.messages]
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


#: The parts OpenAI's chat completions take (an OpenAI-compatible server may take fewer:
#: give the client its own ``parts``).
OPENAI_PARTS = PartSupport(
    media_types=COMMON_IMAGES | {"audio/wav", "audio/mpeg", "application/pdf", "text/*"},
    urls=frozenset({"image"}),
    max_bytes=(("image", 20 * 1024 * 1024), ("document", 32 * 1024 * 1024)),
)

_AUDIO_FORMATS = {"audio/wav": "wav", "audio/mpeg": "mp3"}


def _message(message: Message) -> JsonObject:
    if isinstance(message, (UserMessage, ToolMessage)) and not isinstance(message.content, str):
        wire: JsonObject = {"role": message.role}
        if isinstance(message, ToolMessage):
            wire["tool_call_id"] = message.tool_call_id
        wire["content"] = [_part(part) for part in message.content]
        return wire
    return message.to_openai()


def _part(part: Part) -> JsonObject:
    """One part in chat-completions form: ``text``, ``image_url``, ``input_audio`` or ``file``."""
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    media_type = normal_media_type(part.media_type)
    if isinstance(part, ImagePart):
        url = part.url if part.data is None else Base64Data(part.data, data_url_prefix(media_type))
        return {"type": "image_url", "image_url": {"url": url}}
    if isinstance(part, AudioPart):
        audio = {"data": Base64Data(part.data or b""), "format": _AUDIO_FORMATS[media_type]}
        return {"type": "input_audio", "input_audio": audio}
    if part.is_text:
        return {"type": "text", "text": part.as_text()}
    document = Base64Data(part.data or b"", data_url_prefix(media_type))
    file = {"filename": part.name or "document.pdf", "file_data": document}
    return {"type": "file", "file": file}


def _pick(value: Any, fallback: Any) -> Any:
    return fallback if value is None else value
