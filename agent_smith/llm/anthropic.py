"""The Anthropic Messages API client (``POST /v1/messages``), native.

:class:`AnthropicClient` is a :class:`~agent_smith.llm.model.ChatModel`
speaking the Messages API directly (``x-api-key``, ``anthropic-version``),
so extended thinking, prompt caching, structured outputs and exact token
counts are not lost in an OpenAI-compatible layer. llama.cpp's server speaks
the same API at ``/v1/messages``.

Conversion at this edge: system messages become ``system``; a user message,
and the tool results that answer a tool-use turn, become ``user`` content
blocks (``tool_result`` per call); an assistant turn becomes its replayed
blocks (signed ``thinking``, ``redacted_thinking``, server-tool blocks,
from its provider data when Anthropic wrote it), a ``text`` block and one
``tool_use`` block per call; a turn in which a server tool ran goes back as
it came, every block in its order, while its text and calls are unchanged;
the code execution sandbox (``container``) of the latest turn that had one
is asked for again while it lasts, so files written there stay.
Reasoning text of other providers is dropped.
Replies are read in :mod:`.anthropic_reply`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timezone
from typing import Any

from ..base.cancellation import CancellationToken
from ..base.parts import Content, DocumentPart, Part, TextPart, normal_media_type
from ..errors import ConfigError, ParseError
from ..messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from ..runtime import Runtime
from .anthropic_reply import PROVIDER, WHO, AnthropicStreamDecoder, parse_message
from .convert import add_turn, forced_tool, output_schema, sampling_fields, sampling_of, system_text
from .endpoint import resolve_url
from .events import StreamEvent
from .http_model import HttpChatModel
from .part_support import COMMON_IMAGES, PartSupport
from .request import LlmRequest, LlmResponse, SamplingParams
from .retry import RetryPolicy
from .wire_bytes import Base64Data

log = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
_RESERVED = ("model", "messages", "system", "tools", "tool_choice", "stream")
_EPHEMERAL = {"type": "ephemeral"}
_CHOICES = {"auto": {"type": "auto"}, "required": {"type": "any"}, "none": {"type": "none"}}

JsonObject = dict[str, Any]


#: Images (5 MB each) and PDF or text documents (32 MB), by bytes or URL, in tool results too.
PARTS = PartSupport(
    media_types=COMMON_IMAGES | {"application/pdf", "text/*"},
    urls=frozenset({"image", "document"}),
    in_tool_results=frozenset({"image", "document"}),
    max_bytes=(("image", 5 * 1024 * 1024), ("document", 32 * 1024 * 1024)),
)


class AnthropicClient(HttpChatModel):
    """A client for Anthropic's Messages API (see the module doc).

    ``endpoint`` is a base URL (``https://api.anthropic.com``, or a
    llama.cpp server's ``http://127.0.0.1:8080``). ``max_tokens`` is sent when
    the sampling sets none (the API requires it). ``cache`` puts
    ``cache_control`` breakpoints on the system prompt, the last tool and
    the latest turn. ``thinking_budget`` turns extended thinking on with that
    many tokens. ``betas`` go in ``anthropic-beta``. ``native_output``: a
    ``json_schema`` response format is sent as ``output_config.format``
    (otherwise typed output uses a tool). ``server_tools`` are Anthropic's own
    tools to offer, sent as given after the request's tools (``{"type":
    "web_search_20250305", "name": "web_search"}``); what they did comes back
    as :class:`~agent_smith.llm.events.ServerToolUsed`. Thread-safe.
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
        max_tokens: int = 4096,
        cache: bool = False,
        thinking_budget: int | None = None,
        betas: Sequence[str] = (),
        version: str = API_VERSION,
        native_output: bool = True,
        context_size: int | None = None,
        server_tools: Sequence[JsonObject] = (),
    ) -> None:
        headers = {"anthropic-version": version}
        if betas:
            headers["anthropic-beta"] = ",".join(betas)
        if api_key:
            headers["x-api-key"] = api_key
        super().__init__(
            resolve_url(endpoint, "/messages"),
            model,
            who=WHO,
            provider=PROVIDER,
            api_key=api_key,
            headers=headers,
            request_timeout=request_timeout,
            max_retries=max_retries,
            retry_policy=retry_policy,
            default_sampling=default_sampling,
            runtime=runtime,
            native_output=native_output,
            context_size=context_size,
            server_tools=server_tools,
            token_counting=True,
            parts=PARTS,
        )
        self._count_url = resolve_url(endpoint, "/messages/count_tokens")
        self._max_tokens = max_tokens
        self._cache = cache
        self._thinking = thinking_budget

    def _request_body(self, request: LlmRequest, *, stream: bool) -> JsonObject:
        return self.body(request, stream=stream)

    def _parse(self, parsed: Any) -> LlmResponse:
        return parse_message(parsed)

    def _decode(self, chunks: Iterable[bytes]) -> Iterator[StreamEvent]:
        return AnthropicStreamDecoder(endpoint=self._shown).events(chunks)

    def count_tokens(self, request: LlmRequest, *, cancel: CancellationToken | None = None) -> int:
        """The exact number of input tokens ``request`` costs (``/v1/messages/count_tokens``)."""
        body = self.body(request, stream=False)
        for key in ("max_tokens", "stream", "temperature", "top_p", "stop_sequences", "container"):
            body.pop(key, None)
        reply = self._post_json(self._count_url, body, cancel)
        count = reply.get("input_tokens") if isinstance(reply, dict) else None
        if not isinstance(count, int):
            raise ParseError(f"{WHO} {self._shown} count_tokens reply has no input_tokens")
        return count

    def body(self, request: LlmRequest, *, stream: bool) -> JsonObject:
        """The Messages request body for ``request`` (see the module doc)."""
        sampling = sampling_of(request, self._defaults, reserved=_RESERVED)
        body: JsonObject = {"model": self._model}
        system = system_text(request.messages)
        if system:
            body["system"] = (
                [{"type": "text", "text": system, "cache_control": _EPHEMERAL}]
                if self._cache
                else system
            )
        body["messages"] = _turns(request.messages, cache=self._cache)
        container = _container(request.messages)
        if container is not None:
            body["container"] = container
        body["max_tokens"] = sampling.max_tokens or self._max_tokens
        tools = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in request.tools
        ] + self._offered_server_tools()
        if tools:
            if self._cache:
                tools[-1]["cache_control"] = _EPHEMERAL
            body["tools"] = tools
        if request.tools:
            body["tool_choice"] = _tool_choice(request.tool_choice)
        body["stream"] = stream
        body.update(
            sampling_fields(
                sampling, temperature="temperature", top_p="top_p", stop="stop_sequences"
            )
        )
        if self._thinking:
            body["thinking"] = {"type": "enabled", "budget_tokens": self._thinking}
        schema = output_schema(sampling.response_format)
        if schema is not None:
            body["output_config"] = {"format": {"type": "json_schema", "schema": schema.schema}}
        body.update(sampling.extra)
        return body

    def _reports_error(self, parsed: Any) -> bool:
        return isinstance(parsed, dict) and parsed.get("type") == "error"


def _tool_choice(choice: str | JsonObject | None) -> JsonObject:
    name = forced_tool(choice)
    if name is not None:
        return {"type": "tool", "name": name}
    mapped = _CHOICES.get(choice if isinstance(choice, str) else "auto")
    if mapped is None:
        raise ConfigError(f"{WHO} has no tool_choice {choice!r}")
    return dict(mapped)


def _turns(messages: Sequence[Message], *, cache: bool) -> list[JsonObject]:
    """The ``messages`` array: user blocks (with tool results) and assistant blocks, merged."""
    turns: list[JsonObject] = []

    for message in messages:
        if isinstance(message, UserMessage):
            add_turn(turns, "user", _blocks(message.content), key="content")
        elif isinstance(message, ToolMessage):
            content = message.content
            result = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": content if isinstance(content, str) else _blocks(content),
            }
            add_turn(turns, "user", [result], key="content")
        elif isinstance(message, AssistantMessage):
            blocks = _assistant_blocks(message)
            if blocks:
                add_turn(turns, "assistant", blocks, key="content")
        elif not isinstance(message, SystemMessage):
            raise ConfigError(f"{WHO} cannot send a {type(message).__name__}")
    if cache and turns:
        last = turns[-1]["content"][-1]
        last["cache_control"] = _EPHEMERAL
    for turn in turns:  # a lone text block goes as a plain string, as most examples send it
        content = turn["content"]
        if len(content) == 1 and content[0]["type"] == "text" and len(content[0]) == 2:
            turn["content"] = content[0]["text"]
    return turns


def _blocks(content: Content) -> list[JsonObject]:
    """User content as blocks: ``text``, ``image`` and ``document``, bytes as base64 sources."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [_block(part) for part in content]


def _block(part: Part) -> JsonObject:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    source: JsonObject
    if part.data is None:
        source = {"type": "url", "url": part.url}
    elif isinstance(part, DocumentPart) and part.is_text:
        source = {"type": "text", "media_type": "text/plain", "data": part.as_text()}
    else:
        source = {
            "type": "base64",
            "media_type": normal_media_type(part.media_type),
            "data": Base64Data(part.data),
        }
    block: JsonObject = {"type": "document" if isinstance(part, DocumentPart) else "image"}
    block["source"] = source
    if isinstance(part, DocumentPart) and part.name:
        block["title"] = part.name
    return block


def _assistant_blocks(message: AssistantMessage) -> list[JsonObject]:
    replay = message.replay_for(PROVIDER)
    blocks: list[JsonObject] = []
    if isinstance(replay, dict) and isinstance(replay.get("blocks"), list):
        blocks.extend(dict(b) for b in replay["blocks"] if isinstance(b, dict))
    if isinstance(replay, dict) and replay.get("whole"):
        if _as_written(blocks, message):  # a server tool ran: the reply as it came, in its order
            return blocks
        blocks = [b for b in blocks if b.get("type") not in ("text", "tool_use")]
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        )
    return blocks


def _as_written(blocks: list[JsonObject], message: AssistantMessage) -> bool:
    """Whether ``blocks`` still say what ``message`` says (a guardrail may have rewritten it)."""
    text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    calls = [(b.get("id"), b.get("input")) for b in blocks if b.get("type") == "tool_use"]
    return text == message.content and calls == [(c.id, c.arguments) for c in message.tool_calls]


def _container(messages: Sequence[Message]) -> str | None:
    """The id of the latest Anthropic turn's code sandbox, while it lasts (else a new one)."""
    for message in reversed(messages):
        if not isinstance(message, AssistantMessage):
            continue
        replay = message.replay_for(PROVIDER)
        held = replay.get("container") if isinstance(replay, dict) else None
        if isinstance(held, dict):
            sandbox, expires = held.get("id"), held.get("expires_at")
            if not isinstance(sandbox, str):
                return None
            try:
                ends = datetime.fromisoformat(expires) if isinstance(expires, str) else None
            except ValueError:
                return None
            if ends is not None and (ends.tzinfo is None or ends <= datetime.now(timezone.utc)):
                return None
            return sandbox
    return None
