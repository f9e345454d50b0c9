"""The OpenAI Responses API client (``POST /v1/responses``), native.

:class:`ResponsesClient` is a :class:`~agent_smith.llm.model.ChatModel` for
OpenAI's newer API (llama.cpp's server speaks it too), where reasoning
models keep their reasoning between tool calls: the reasoning items of a
turn are sent back with the function calls that follow them — with
``store=False`` as ``encrypted_content``, which this client then asks for.

Conversion at this edge: system messages become ``instructions``; user
messages ``{"role": "user"}`` input items; an assistant turn its replayed
items (reasoning, server-side tool items, from its provider data when this
client wrote it), an assistant message and one ``function_call`` item per
call; a tool result a ``function_call_output`` item. A ``json_schema``
response format becomes ``text.format``. Replies are read in
:mod:`.responses_reply`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ..base.parts import Content, DocumentPart, ImagePart, Part, TextPart, normal_media_type
from ..errors import ConfigError
from ..messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from ..runtime import Runtime
from .convert import forced_tool, output_schema, sampling_fields, sampling_of, system_text
from .endpoint import resolve_url
from .events import StreamEvent
from .http_model import HttpChatModel
from .part_support import COMMON_IMAGES, PartSupport
from .request import LlmRequest, LlmResponse, SamplingParams
from .responses_reply import PROVIDER, WHO, ResponsesStreamDecoder, parse_response
from .retry import RetryPolicy
from .wire_bytes import Base64Data, data_url_prefix

log = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "https://api.openai.com/v1"
_RESERVED = ("model", "input", "instructions", "tools", "tool_choice", "stream")

JsonObject = dict[str, Any]


#: Images and PDF files, by bytes or URL, in function call outputs too; no audio.
PARTS = PartSupport(
    media_types=COMMON_IMAGES | {"application/pdf", "text/*"},
    urls=frozenset({"image", "document"}),
    in_tool_results=frozenset({"image", "document"}),
    max_bytes=(("image", 20 * 1024 * 1024), ("document", 32 * 1024 * 1024)),
)


class ResponsesClient(HttpChatModel):
    """A client for the OpenAI Responses API (see the module doc).

    ``endpoint`` is a base URL (``https://api.openai.com/v1``, or a llama.cpp
    server's ``http://127.0.0.1:8080``). ``store`` is sent when set;
    ``store=False`` also asks for ``reasoning.encrypted_content``.
    ``reasoning_effort`` (``"low"``..``"high"``) asks for reasoning with an
    automatic summary. Sampling ``stop`` has no Responses equivalent and is
    not sent. ``server_tools`` are OpenAI's own tools to offer, sent as given
    after the request's tools (``{"type": "web_search"}``); what they did
    comes back as :class:`~agent_smith.llm.events.ServerToolUsed`. Thread-safe.
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
        store: bool | None = None,
        reasoning_effort: str | None = None,
        context_size: int | None = None,
        server_tools: Sequence[JsonObject] = (),
    ) -> None:
        super().__init__(
            resolve_url(endpoint, "/responses"),
            model,
            who=WHO,
            provider="openai",
            api_key=api_key,
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
            request_timeout=request_timeout,
            max_retries=max_retries,
            retry_policy=retry_policy,
            default_sampling=default_sampling,
            runtime=runtime,
            context_size=context_size,
            server_tools=server_tools,
            parts=PARTS,
        )
        self._store = store
        self._effort = reasoning_effort

    def _request_body(self, request: LlmRequest, *, stream: bool) -> JsonObject:
        return self.body(request, stream=stream)

    def _parse(self, parsed: Any) -> LlmResponse:
        return parse_response(parsed, endpoint=self._shown)

    def _decode(self, chunks: Iterable[bytes]) -> Iterator[StreamEvent]:
        return ResponsesStreamDecoder(endpoint=self._shown).events(chunks)

    def _reports_error(self, parsed: Any) -> bool:
        return isinstance(parsed, dict) and "error" in parsed and "output" not in parsed

    def body(self, request: LlmRequest, *, stream: bool) -> JsonObject:
        """The Responses request body for ``request`` (see the module doc)."""
        sampling = sampling_of(request, self._defaults, reserved=_RESERVED)
        body: JsonObject = {}
        if self._model:
            body["model"] = self._model
        instructions = system_text(request.messages)
        if instructions:
            body["instructions"] = instructions
        body["input"] = _items(request.messages)
        tools = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
            }
            for t in request.tools
        ] + self._offered_server_tools()
        if tools:
            body["tools"] = tools
        if request.tools:
            body["tool_choice"] = _tool_choice(request.tool_choice)
        body["stream"] = stream
        body.update(
            sampling_fields(
                sampling, temperature="temperature", top_p="top_p", max_tokens="max_output_tokens"
            )
        )
        if sampling.stop:
            log.debug("%s has no stop sequences; not sent", WHO)
        fmt = sampling.response_format
        schema = output_schema(fmt)
        if schema is not None:
            body["text"] = {
                "format": {
                    "type": "json_schema",
                    "name": schema.name,
                    "schema": schema.schema,
                    "strict": schema.strict,
                }
            }
        elif fmt is not None and fmt.get("type") == "json_object":
            body["text"] = {"format": {"type": "json_object"}}
        if self._store is not None:
            body["store"] = self._store
            if not self._store:
                body["include"] = ["reasoning.encrypted_content"]
        if self._effort:
            body["reasoning"] = {"effort": self._effort, "summary": "auto"}
        body.update(sampling.extra)
        return body


def _tool_choice(choice: str | JsonObject | None) -> str | JsonObject:
    name = forced_tool(choice)
    if name is not None:
        return {"type": "function", "name": name}
    if choice in (None, "auto", "required", "none"):
        return choice or "auto"
    raise ConfigError(f"{WHO} has no tool_choice {choice!r}")


def _input(content: Content) -> str | list[JsonObject]:
    """Content as ``input_text``, ``input_image`` and ``input_file`` items (a string stays)."""
    if isinstance(content, str):
        return content
    return [_input_part(part) for part in content]


def _input_part(part: Part) -> JsonObject:
    if isinstance(part, TextPart):
        return {"type": "input_text", "text": part.text}
    if isinstance(part, DocumentPart) and part.is_text:
        return {"type": "input_text", "text": part.as_text()}
    media_type = normal_media_type(part.media_type)
    given = part.url if part.data is None else Base64Data(part.data, data_url_prefix(media_type))
    if isinstance(part, ImagePart):
        return {"type": "input_image", "image_url": given, "detail": "auto"}
    if part.data is None:
        return {"type": "input_file", "file_url": given}
    return {"type": "input_file", "filename": part.name or "document.pdf", "file_data": given}


def _items(messages: Sequence[Message]) -> list[JsonObject]:
    items: list[JsonObject] = []
    for message in messages:
        if isinstance(message, UserMessage):
            items.append({"type": "message", "role": "user", "content": _input(message.content)})
        elif isinstance(message, ToolMessage):
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.tool_call_id,
                    "output": _input(message.content),
                }
            )
        elif isinstance(message, AssistantMessage):
            replay = message.replay_for(PROVIDER)
            if isinstance(replay, dict) and isinstance(replay.get("items"), list):
                items.extend(dict(i) for i in replay["items"] if isinstance(i, dict))
            if message.content:
                items.append(
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": message.content}],
                    }
                )
            for call in message.tool_calls:
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": call.arguments_text(),
                    }
                )
        elif not isinstance(message, SystemMessage):
            raise ConfigError(f"{WHO} cannot send a {type(message).__name__}")
    return items
