"""Ollama's own chat API (``POST /api/chat``, NDJSON streaming), native.

:class:`OllamaClient` is a :class:`~agent_smith.llm.model.ChatModel` for
what Ollama's OpenAI layer lacks: ``think`` (with the reply's ``thinking``
field), ``keep_alive``, ``options`` (``num_ctx``, ...), and ``format`` as a
JSON schema for typed output. The server is ``$OLLAMA_HOST`` unless given.
Its context window is asked of the server (:mod:`.ollama_window`).

Wire facts: the stream is newline-delimited JSON, one object a line; tool
calls arrive whole on one line, their ``arguments`` an object; the last
line has ``done: true``, ``done_reason`` (``"stop"`` even after tool
calls) and the token counts; errors are ``{"error": "..."}``, as the body
of an error status or as a line of a stream.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ..base.parts import DocumentPart, Part, TextPart
from ..errors import ParseError, TransportError
from ..messages import AssistantMessage, Message, TokenUsage, ToolCall, ToolMessage, UserMessage
from ..runtime import Runtime, default_runtime
from .api_error import error_from_json
from .convert import output_schema, sampling_fields, sampling_of
from .endpoint import resolve_url
from .events import (
    Finished,
    ReasoningDelta,
    StreamEvent,
    TokenDelta,
    ToolCallCompleted,
    ToolCallStarted,
)
from .http_model import HttpChatModel
from .ollama_window import api_root, ask_ollama_window
from .part_support import PartSupport
from .request import LlmRequest, LlmResponse, SamplingParams, string_field
from .retry import RetryPolicy
from .server_props import Asked, KnownWindow
from .stream_decoder import load_object_frame, scan_json
from .wire_bytes import Base64Data

log = logging.getLogger(__name__)

WHO = "Ollama"
DEFAULT_HOST = "http://127.0.0.1:11434"
_RESERVED = ("model", "messages", "tools", "stream")
_NDJSON = "application/x-ndjson"
_FINISH = {"stop": "stop", "length": "length"}

JsonObject = dict[str, Any]


def ollama_host() -> str:
    """Ollama's base URL: ``$OLLAMA_HOST`` (a URL, or ``host[:port]``), else the default."""
    host = os.environ.get("OLLAMA_HOST", "").strip()
    if not host:
        return DEFAULT_HOST
    if "://" not in host:
        host = f"http://{host}"
    if host.count(":") == 1:  # no port given
        host += ":11434"
    return host


#: Images as base64 bytes in ``images`` (a vision model's), text documents as text.
PARTS = PartSupport(media_types=frozenset({"image/png", "image/jpeg", "text/*"}))


class OllamaClient(HttpChatModel):
    """A client for Ollama's ``/api/chat`` (see the module doc).

    ``endpoint`` None: ``$OLLAMA_HOST``. ``think`` is sent when set (``True``
    or ``"low"``/``"medium"``/``"high"``); ``keep_alive`` (``"5m"``, seconds)
    likewise; ``options`` are Ollama's model options, under the request's
    sampling (``temperature``, ``top_p``, ``num_predict``, ``stop``).
    ``context_size`` (else ``options["num_ctx"]``) is the context window;
    when neither is set, :meth:`context_window` asks the server. Thread-safe.
    """

    def __init__(
        self,
        endpoint: str | None = None,
        model: str = "",
        *,
        api_key: str | None = None,
        request_timeout: float = 60.0,
        max_retries: int = 3,
        default_sampling: SamplingParams = SamplingParams(),  # noqa: B008 (frozen value)
        runtime: Runtime | None = None,
        retry_policy: RetryPolicy | None = None,
        think: bool | str | None = None,
        keep_alive: str | float | None = None,
        options: dict[str, Any] | None = None,
        context_size: int | None = None,
    ) -> None:
        size = context_size or (options or {}).get("num_ctx")
        size = size if isinstance(size, int) and not isinstance(size, bool) else None
        super().__init__(
            resolve_url(endpoint or ollama_host(), "/chat", prefix="/api"),
            model,
            who=WHO,
            provider="ollama",
            api_key=api_key,
            # Ollama behind an authenticating proxy, or ollama.com
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
            request_timeout=request_timeout,
            max_retries=max_retries,
            retry_policy=retry_policy,
            default_sampling=default_sampling,
            runtime=runtime,
            context_size=size,
            parts=PARTS,
        )
        self._think = think
        self._keep_alive = keep_alive
        self._options = dict(options or {})
        self._configured = size
        self._window = KnownWindow()
        self._timeout = request_timeout

    def context_window(self, *, ask: bool = True) -> int | None:
        """The tokens one request may fill: configured, else as the server says (None: unknown).

        ``num_ctx`` in ``options`` (or ``context_size``) is the window as it
        is. Otherwise the server is asked (``/api/ps`` for the loaded model,
        else ``/api/show``; the rule is in :mod:`~agent_smith.llm.ollama_window`)
        and the answer remembered; ``ask=False`` returns what is known
        without asking. A known window is also the capabilities' ``context_size``.
        """
        if self._configured is not None:
            return self._configured
        window = self._window.get(self._ask_window if ask else None)
        self._learned(context_size=window)
        return window

    def _ask_window(self) -> Asked:
        session = (self._runtime or default_runtime()).session
        return ask_ollama_window(
            session,
            api_root(self._url),
            self._model,
            headers={**self._headers, "Accept": "application/json"},
            timeout=min(self._timeout, 10.0),
        )

    def body(self, request: LlmRequest, *, stream: bool) -> JsonObject:
        """The ``/api/chat`` body for ``request`` (see the module doc)."""
        sampling = sampling_of(request, self._defaults, reserved=_RESERVED)
        body: JsonObject = {"model": self._model, "messages": _messages(request.messages)}
        if request.tools:
            body["tools"] = [schema.to_openai() for schema in request.tools]
        body["stream"] = stream
        options = self._options | sampling_fields(
            sampling,
            temperature="temperature",
            top_p="top_p",
            max_tokens="num_predict",
            stop="stop",
        )
        if options:
            body["options"] = options
        schema = output_schema(sampling.response_format)
        if schema is not None:
            body["format"] = schema.schema
        elif sampling.response_format and sampling.response_format.get("type") == "json_object":
            body["format"] = "json"
        if self._think is not None:
            body["think"] = self._think
        if self._keep_alive is not None:
            body["keep_alive"] = self._keep_alive
        body.update(sampling.extra)
        return body

    _accept = _NDJSON

    def _request_body(self, request: LlmRequest, *, stream: bool) -> JsonObject:
        return self.body(request, stream=stream)

    def _parse(self, parsed: Any) -> LlmResponse:
        """A ``stream: false`` reply: its one object, decoded as a one-line stream."""
        *_, last = self._decode([json.dumps(parsed).encode()])
        assert isinstance(last, Finished)  # the decoder always ends with Finished or raises
        return last.response

    def _decode(self, chunks: Iterable[bytes]) -> Iterator[StreamEvent]:
        return OllamaDecoder(endpoint=self._shown).events(chunks)


def _messages(messages: Sequence[Message]) -> list[JsonObject]:
    wire: list[JsonObject] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            turn: JsonObject = {"role": "assistant", "content": message.content}
            if message.tool_calls:
                turn["tool_calls"] = [
                    {"function": {"name": c.name, "arguments": c.arguments}}
                    for c in message.tool_calls
                ]
            wire.append(turn)
        elif isinstance(message, ToolMessage):  # its images follow in a user message
            wire.append({"role": "tool", "content": message.text, "tool_name": message.name})
        elif isinstance(message, UserMessage) and not isinstance(message.content, str):
            wire.append(_user_with_images(message.content))
        else:
            wire.append(message.to_openai())
    return wire


def _user_with_images(parts: tuple[Part, ...]) -> JsonObject:
    """A user message's text (text documents included) and its images, base64, in ``images``."""
    texts: list[str] = []
    images: list[Base64Data] = []
    for part in parts:
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, DocumentPart):
            texts.append(part.as_text())
        elif part.data is not None:
            images.append(Base64Data(part.data))
    return {"role": "user", "content": "\n".join(texts), "images": images}


class OllamaDecoder:
    """Decodes an ``/api/chat`` body (NDJSON, or one object) into stream events."""

    def __init__(self, *, endpoint: str) -> None:
        self._endpoint = endpoint
        self._lines = 0

    def events(self, chunks: Iterable[bytes]) -> Iterator[StreamEvent]:
        """Events as lines arrive, then the completed tool calls and Finished."""
        text: list[str] = []
        thinking: list[str] = []
        calls: list[ToolCall] = []
        last: JsonObject | None = None
        scan = scan_json
        for line in _lines(chunks):
            self._lines += 1
            try:
                obj, end = scan(line, 0)
            except (StopIteration, ValueError, RecursionError):
                obj, end = None, 0
            if end != len(line) or type(obj) is not dict:
                obj = self._parse(line)
            message = obj.get("message")
            # The hot path, once per token: a line with only a piece of the answer.
            if obj.get("done") is False and type(message) is dict and len(message) == 2:
                content = message.get("content")
                if type(content) is str and message.get("role") == "assistant":
                    if content:
                        text.append(content)
                        yield TokenDelta(content)
                    continue
            if "error" in obj:
                raise error_from_json(
                    obj, endpoint=self._endpoint, status=None, excerpt=line, who=WHO
                )
            if isinstance(message, dict):
                thought = message.get("thinking")
                if isinstance(thought, str) and thought:
                    thinking.append(thought)
                    yield ReasoningDelta(thought)
                content = message.get("content")
                if isinstance(content, str) and content:
                    text.append(content)
                    yield TokenDelta(content)
                for raw in message.get("tool_calls") or ():
                    call = self._call(raw, len(calls))
                    calls.append(call)
                    yield ToolCallStarted(call.id, call.name, len(calls) - 1)
            if obj.get("done") is True:
                last = obj
        if last is None:
            raise TransportError(
                f"stream from {WHO} {self._endpoint} ended before its done line",
                operation="stream",
                endpoint_or_server=self._endpoint,
            )
        prompt, completion = last.get("prompt_eval_count"), last.get("eval_count")
        usage = None
        if isinstance(prompt, int) or isinstance(completion, int):
            p, c = (
                prompt if isinstance(prompt, int) else 0,
                completion if isinstance(completion, int) else 0,
            )
            usage = TokenUsage(p, c, p + c)
        reason = string_field(last.get("done_reason")) or "stop"
        finish = "tool_calls" if calls and reason == "stop" else _FINISH.get(reason, reason)
        message = AssistantMessage("".join(text), tuple(calls), usage, "".join(thinking) or None)
        response = LlmResponse.checked(message, finish, model=string_field(last.get("model")))
        for index, call in enumerate(calls):
            yield ToolCallCompleted(index, call.arguments)
        yield Finished(finish, usage, response)

    def _call(self, raw: object, index: int) -> ToolCall:
        function = raw.get("function") if isinstance(raw, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ParseError(f"{WHO} {self._endpoint}: a tool call needs a function with a name")
        arguments = function.get("arguments", {})
        call_id = raw.get("id") if isinstance(raw, dict) else None
        call_id = call_id if isinstance(call_id, str) and call_id else f"call_{index}"
        if isinstance(arguments, str):  # a few builds send the JSON text
            return ToolCall.from_wire(call_id, function["name"], arguments, lenient=True)
        if not isinstance(arguments, dict):
            raise ParseError(f"{WHO} {self._endpoint}: tool call arguments must be an object")
        return ToolCall(call_id, function["name"], arguments)

    def _parse(self, line: str) -> JsonObject:
        return load_object_frame(line, what=f"line {self._lines} from {WHO} {self._endpoint}")


def _count(obj: JsonObject, key: str) -> int:
    value = obj.get(key)
    return value if isinstance(value, int) and value >= 0 else 0


def _lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """The non-blank lines of a body, whatever its chunking (the last may lack its newline)."""
    pending = b""
    for chunk in chunks:
        pending += chunk
        if b"\n" not in chunk:
            continue
        *complete, pending = pending.split(b"\n")
        for line in complete:
            if line.strip():
                yield line.decode("utf-8", "replace")
    if pending.strip():
        yield pending.decode("utf-8", "replace")
