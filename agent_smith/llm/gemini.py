"""Google's Gemini API (``generateContent``, ``streamGenerateContent?alt=sse``), native.

:class:`GeminiClient` is a :class:`~agent_smith.llm.model.ChatModel`
authenticated with ``x-goog-api-key``. Conversion at this edge: system
messages become ``systemInstruction``; user messages ``user`` contents; an
assistant turn its replayed parts (with their thought signatures, when
Gemini wrote it) or else text and ``functionCall`` parts; tool results
``functionResponse`` parts (with the call's ``id`` when the model gave one).
A ``json_schema`` response format becomes ``responseMimeType:
application/json`` with a ``responseSchema`` reduced to what the API
accepts (``$ref`` inlined, nullable types, no ``additionalProperties``).
Replies are read in :mod:`.gemini_reply`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ..base.parts import Content, TextPart, normal_media_type
from ..errors import ConfigError
from ..messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from ..runtime import Runtime
from .convert import add_turn, forced_tool, output_schema, sampling_fields, sampling_of, system_text
from .endpoint import resolve_url
from .events import StreamEvent
from .gemini_reply import MADE_UP_ID, PROVIDER, WHO, GeminiStreamDecoder, parse_response
from .http_model import HttpChatModel
from .part_support import PartSupport
from .request import LlmRequest, LlmResponse, SamplingParams
from .retry import RetryPolicy
from .wire_bytes import Base64Data

log = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "https://generativelanguage.googleapis.com"
_RESERVED = ("contents", "systemInstruction", "tools", "toolConfig")
_MODES = {"auto": "AUTO", "required": "ANY", "none": "NONE"}
# What responseSchema (an OpenAPI 3.0 subset) accepts.
_SCHEMA_KEYS = frozenset(
    {
        "type",
        "format",
        "description",
        "nullable",
        "enum",
        "items",
        "properties",
        "required",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "anyOf",
        "propertyOrdering",
        "title",
    }
)

JsonObject = dict[str, Any]


#: Images, PDF and text documents and audio, inline up to 20 MB or by URL (``fileData``).
PARTS = PartSupport(
    media_types=frozenset(
        {"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"}
        | {"application/pdf", "text/*"}
        | {"audio/wav", "audio/mpeg", "audio/aiff", "audio/aac", "audio/ogg", "audio/flac"}
    ),
    urls=frozenset({"image", "document", "audio"}),
    max_bytes=(("image", 20 * 1024 * 1024), ("document", 20 * 1024 * 1024)),
)


class GeminiClient(HttpChatModel):
    """A client for the Gemini API (see the module doc).

    ``endpoint`` is the API's base URL (``/v1beta`` is added to a bare host).
    ``thinking_budget`` (tokens; ``-1`` dynamic, ``0`` off) or
    ``thinking_level`` (``"low"``, ``"high"``) configure thinking;
    ``include_thoughts`` asks for thought summaries (reasoning events).
    ``server_tools`` are Gemini's own tools to offer, sent as given after the
    request's function declarations (``{"codeExecution": {}}``,
    ``{"googleSearch": {}}``); what they did comes back as
    :class:`~agent_smith.llm.events.ServerToolUsed`. Thread-safe.
    """

    def __init__(
        self,
        endpoint: str = DEFAULT_ENDPOINT,
        model: str = "",
        *,
        api_key: str | None = None,
        request_timeout: float = 60.0,
        max_retries: int = 3,
        default_sampling: SamplingParams = SamplingParams(),  # noqa: B008 (frozen value)
        runtime: Runtime | None = None,
        retry_policy: RetryPolicy | None = None,
        thinking_budget: int | None = None,
        thinking_level: str | None = None,
        include_thoughts: bool = False,
        context_size: int | None = None,
        server_tools: Sequence[JsonObject] = (),
    ) -> None:
        if not model:
            raise ConfigError("GeminiClient needs a model name (it is part of the URL)")
        base = resolve_url(endpoint, "", prefix="/v1beta")
        super().__init__(
            f"{base}/models/{model}:generateContent",
            model,
            who=WHO,
            provider=PROVIDER,
            api_key=api_key,
            headers={"x-goog-api-key": api_key} if api_key else {},
            request_timeout=request_timeout,
            max_retries=max_retries,
            retry_policy=retry_policy,
            default_sampling=default_sampling,
            runtime=runtime,
            context_size=context_size,
            server_tools=server_tools,
            parts=PARTS,
        )
        self._stream_url = f"{base}/models/{model}:streamGenerateContent?alt=sse"
        thinking: JsonObject = {}
        if thinking_budget is not None:
            thinking["thinkingBudget"] = thinking_budget
        if thinking_level is not None:
            thinking["thinkingLevel"] = thinking_level
        if include_thoughts:
            thinking["includeThoughts"] = True
        self._thinking = thinking

    def _request_body(self, request: LlmRequest, *, stream: bool) -> JsonObject:
        return self.body(request)

    def _parse(self, parsed: Any) -> LlmResponse:
        return parse_response(parsed, endpoint=self._shown)

    def _decode(self, chunks: Iterable[bytes]) -> Iterator[StreamEvent]:
        return GeminiStreamDecoder(endpoint=self._shown).events(chunks)

    def body(self, request: LlmRequest) -> JsonObject:
        """The ``generateContent`` body for ``request`` (see the module doc)."""
        sampling = sampling_of(request, self._defaults, reserved=_RESERVED)
        body: JsonObject = {"contents": _contents(request.messages)}
        system = system_text(request.messages)
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        declared = [_declaration(t.name, t.description, t.parameters) for t in request.tools]
        tools = [{"functionDeclarations": declared}] if declared else []
        tools += self._offered_server_tools()
        if tools:
            body["tools"] = tools
        if request.tools:
            body["toolConfig"] = {"functionCallingConfig": _calling(request.tool_choice)}
        config = sampling_fields(
            sampling,
            temperature="temperature",
            top_p="topP",
            max_tokens="maxOutputTokens",
            stop="stopSequences",
        )
        schema = output_schema(sampling.response_format)
        if schema is not None:
            config["responseMimeType"] = "application/json"
            config["responseSchema"] = gemini_schema(schema.schema)
        elif sampling.response_format and sampling.response_format.get("type") == "json_object":
            config["responseMimeType"] = "application/json"
        if self._thinking:
            config["thinkingConfig"] = dict(self._thinking)
        if config:
            body["generationConfig"] = config
        body.update(sampling.extra)
        return body


def _declaration(name: str, description: str, parameters: JsonObject) -> JsonObject:
    declaration: JsonObject = {"name": name, "description": description}
    if parameters.get("properties"):  # a parameterless function declares none
        declaration["parameters"] = gemini_schema(parameters)
    return declaration


def _calling(choice: str | JsonObject | None) -> JsonObject:
    name = forced_tool(choice)
    if name is not None:
        return {"mode": "ANY", "allowedFunctionNames": [name]}
    mode = _MODES.get(choice if isinstance(choice, str) else "auto")
    if mode is None:
        raise ConfigError(f"{WHO} has no tool_choice {choice!r}")
    return {"mode": mode}


def _contents(messages: Sequence[Message]) -> list[JsonObject]:
    contents: list[JsonObject] = []

    for message in messages:
        if isinstance(message, UserMessage):
            add_turn(contents, "user", _parts(message.content), key="parts")
        elif isinstance(message, ToolMessage):  # its media parts follow in a user message
            response: JsonObject = {"name": message.name, "response": {"result": message.text}}
            if not message.tool_call_id.startswith(MADE_UP_ID):
                response["id"] = message.tool_call_id
            add_turn(contents, "user", [{"functionResponse": response}], key="parts")
        elif isinstance(message, AssistantMessage):
            add_turn(contents, "model", _model_parts(message), key="parts")
        elif not isinstance(message, SystemMessage):
            raise ConfigError(f"{WHO} cannot send a {type(message).__name__}")
    return contents


def _parts(content: Content) -> list[JsonObject]:
    """User content as parts: ``text``, ``inlineData`` (base64 bytes) and ``fileData`` (URLs)."""
    if isinstance(content, str):
        return [{"text": content}]
    parts: list[JsonObject] = []
    for part in content:
        if isinstance(part, TextPart):
            parts.append({"text": part.text})
            continue
        media_type = normal_media_type(part.media_type)
        if part.data is None:
            parts.append({"fileData": {"mimeType": media_type, "fileUri": part.url}})
        else:
            parts.append({"inlineData": {"mimeType": media_type, "data": Base64Data(part.data)}})
    return parts


def _model_parts(message: AssistantMessage) -> list[JsonObject]:
    replay = message.replay_for(PROVIDER)
    if isinstance(replay, dict) and isinstance(replay.get("parts"), list):
        return [dict(p) for p in replay["parts"] if isinstance(p, dict)]
    parts: list[JsonObject] = []
    if message.content:
        parts.append({"text": message.content})
    for call in message.tool_calls:
        function: JsonObject = {"name": call.name, "args": call.arguments}
        if not call.id.startswith(MADE_UP_ID):
            function["id"] = call.id
        parts.append({"functionCall": function})
    return parts or [{"text": ""}]


def gemini_schema(schema: JsonObject, defs: JsonObject | None = None) -> JsonObject:
    """``schema`` as ``responseSchema`` takes it: refs inlined, ``["x", "null"]`` as nullable."""
    defs = {**(defs or {}), **schema.get("$defs", {}), **schema.get("definitions", {})}
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref.rsplit("/", 1)[-1])
        if not isinstance(target, dict):
            raise ConfigError(f"{WHO}: schema reference {ref!r} has no definition")
        return gemini_schema({**target, **{k: v for k, v in schema.items() if k != "$ref"}}, defs)
    out: JsonObject = {}
    for key, value in schema.items():
        if key not in _SCHEMA_KEYS:
            continue
        if key == "type" and isinstance(value, list):
            kinds = [k for k in value if k != "null"]
            out["type"] = kinds[0] if kinds else "string"
            if "null" in value:
                out["nullable"] = True
        elif key == "properties" and isinstance(value, dict):
            out[key] = {k: gemini_schema(v, defs) for k, v in value.items()}
        elif key == "items" and isinstance(value, dict):
            out[key] = gemini_schema(value, defs)
        elif key == "anyOf" and isinstance(value, list):
            kinds = [v for v in value if v != {"type": "null"}]
            if len(kinds) < len(value):
                out["nullable"] = True
            if len(kinds) == 1:
                out.update(gemini_schema(kinds[0], defs))
            else:
                out[key] = [gemini_schema(v, defs) for v in kinds]
        else:
            out[key] = value
    return out
