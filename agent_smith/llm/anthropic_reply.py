"""Anthropic Messages replies: content blocks in, a neutral :class:`LlmResponse` out.

A reply is a list of content blocks. ``text`` blocks make the content,
``tool_use`` blocks the tool calls, ``thinking`` blocks the reasoning. Every
block that is neither text nor a tool call — signed ``thinking``,
``redacted_thinking``, server-side tool blocks (``server_tool_use``,
``web_search_tool_result``, ...) — is kept verbatim as the turn's
:class:`~agent_smith.messages.ProviderData`: Anthropic requires signed
thinking blocks back unchanged during a tool loop, and server-side tools
ran on Anthropic's side: a ``server_tool_use`` (or ``mcp_tool_use``) block
and the ``*_tool_result`` block answering it are shown as
:class:`~agent_smith.llm.events.ServerToolUsed` and never executed here
(:mod:`.server_tools`). A reply that used a server tool is kept whole, every
block in its order (``"whole": true``): Anthropic pauses a long server-side
turn (``stop_reason: pause_turn``, ending on a ``server_tool_use`` still
running) and goes on when given the reply back as it came. The code
execution sandbox a reply names (``container``) is kept with it, so the
next request goes on in the same one (:mod:`.anthropic`).

:class:`AnthropicStreamDecoder` reads the SSE grammar: ``message_start``,
``content_block_start`` / ``_delta`` (``text_delta``, ``input_json_delta``,
``thinking_delta``, ``signature_delta``, ``citations_delta``) / ``_stop``,
``message_delta``, ``message_stop``; ``ping`` is skipped, an ``error``
event raises :class:`~agent_smith.errors.LlmApiError` (``overloaded_error``
as HTTP 529). Event types added later are skipped, as Anthropic's
versioning policy asks of clients; a stream that ends before
``message_stop`` is a :class:`~agent_smith.errors.TransportError`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import Any

from .._internal.sse_reader import SseReader
from ..errors import ParseError, TransportError
from ..logs import TRACE, redact
from ..messages import AssistantMessage, ProviderData, TokenUsage, ToolCall
from .api_error import error_from_json
from .events import ReasoningDelta, StreamEvent, TokenDelta, ToolCallStarted, ending_events
from .request import LlmResponse, string_field
from .server_tools import PAUSED, ServerToolLog, streamed_input
from .stream_decoder import load_object_frame, scan_json

log = logging.getLogger(__name__)

#: The name provider data of Anthropic turns is tagged with.
PROVIDER = "anthropic"
WHO = "Anthropic API"

_STREAMED_TEXT = {"text": "text", "thinking": "thinking"}  # block type -> its text field
_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
    "pause_turn": PAUSED,
}
_JSON = "_json"  # where a streamed block's input_json_delta fragments collect
_PIECES = "_pieces"  # its text_delta / thinking_delta pieces (joined once, at the end)
_SIGNATURE = "_signature"  # its signature_delta pieces
_SERVER_CALLS = ("server_tool_use", "mcp_tool_use")


def usage_of(raw: object) -> TokenUsage:
    """Anthropic usage: ``input_tokens`` excludes cached ones, so ``prompt`` adds them back."""
    if not isinstance(raw, dict):
        return TokenUsage()
    counts = {}
    for key in (
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    ):
        value = raw.get(key) or 0
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ParseError(f"{WHO} usage.{key} must be a non-negative integer, got {value!r}")
        counts[key] = value
    read, write = counts["cache_read_input_tokens"], counts["cache_creation_input_tokens"]
    prompt = counts["input_tokens"] + read + write
    completion = counts["output_tokens"]
    return TokenUsage(prompt, completion, prompt + completion, read, write)


def response_from_blocks(
    blocks: Iterable[dict[str, Any]],
    stop_reason: object,
    usage: TokenUsage | None,
    *,
    response_id: str = "",
    model: str = "",
    container: object = None,
) -> LlmResponse:
    """The neutral response of a reply's content blocks (see the module doc)."""
    text: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    kept: list[dict[str, Any]] = []
    whole: list[dict[str, Any]] = []  # every block, in order, as it goes back
    server = ServerToolLog(PROVIDER)
    ran = False  # a server tool's call or result is in the reply
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            text.append(_string(block, "text"))
        elif kind == "tool_use":
            call = _tool_call(block)
            calls.append(call)
            block = {**{k: v for k, v in block.items() if k != _JSON}, "input": call.arguments}
        else:
            if kind == "thinking":
                reasoning.append(_string(block, "thinking"))
            elif kind in _SERVER_CALLS:
                server.call(block.get("name"), block.get("id"), block.get("input"))
                ran = True
            elif isinstance(kind, str) and kind.endswith("_tool_result"):
                server.result(block.get("tool_use_id"), block.get("content"))
                ran = True
            kept.append(block)
        whole.append(block)
    if stop_reason is not None and not isinstance(stop_reason, str):
        raise ParseError(f"{WHO} stop_reason must be a string, got {stop_reason!r}")
    finish = _FINISH.get(stop_reason or "", stop_reason or ("tool_calls" if calls else "stop"))
    data: dict[str, Any] = {"blocks": whole, "whole": True} if ran else {"blocks": kept}
    if isinstance(container, dict) and isinstance(container.get("id"), str):
        data["container"] = container  # the code sandbox the next request goes on in
    message = AssistantMessage(
        "".join(text),
        tuple(calls),
        usage,
        "".join(reasoning) or None,
        ProviderData(PROVIDER, data) if data["blocks"] or "container" in data else None,
    )
    return LlmResponse.checked(
        message, finish, response_id=response_id, model=model, server_tools=server.used()
    )


def parse_message(body: object) -> LlmResponse:
    """A non-streamed Messages reply (``{"type": "message", "content": [...], ...}``)."""
    if not isinstance(body, dict) or not isinstance(body.get("content"), list):
        raise ParseError(f"{WHO} reply has no content array")
    blocks = body["content"]
    if not all(isinstance(b, dict) for b in blocks):
        raise ParseError(f"{WHO} reply content must be an array of objects")
    return response_from_blocks(
        blocks,
        body.get("stop_reason"),
        usage_of(body.get("usage")),
        response_id=string_field(body.get("id")),
        model=string_field(body.get("model")),
        container=body.get("container"),
    )


def _string(block: dict[str, Any], key: str) -> str:
    value = block.get(key, "")
    if not isinstance(value, str):
        raise ParseError(f"{WHO} {block.get('type')} block: {key!r} must be a string")
    return value


def _tool_call(block: dict[str, Any]) -> ToolCall:
    call_id, name = block.get("id"), block.get("name")
    if not isinstance(call_id, str) or not call_id or not isinstance(name, str) or not name:
        raise ParseError(f"{WHO} tool_use block needs a string id and name")
    if _JSON in block:  # streamed: the raw arguments text, kept if it does not parse
        return ToolCall.from_wire(call_id, name, "".join(block[_JSON]), lenient=True)
    arguments = block.get("input", {})
    if not isinstance(arguments, dict):
        raise ParseError(f"{WHO} tool_use block {name!r}: input must be an object")
    return ToolCall(call_id, name, arguments)


class AnthropicStreamDecoder:
    """Decodes one streamed Messages reply into stream events (see the module doc)."""

    def __init__(self, *, endpoint: str) -> None:
        self._endpoint = endpoint
        self._blocks: dict[int, dict[str, Any]] = {}
        self._calls = 0  # tool_use blocks so far: a call's index among the calls
        self._stop: object = None
        self._container: object = None  # the code execution sandbox, when one ran
        self._ran = ServerToolLog(PROVIDER)  # server tools shown as their results arrive
        self._usage: dict[str, Any] = {}
        self._about: dict[str, str] = {}
        self._done = False
        self._frames = 0

    def events(self, chunks: Iterable[bytes]) -> Iterator[StreamEvent]:
        """Events as the SSE events arrive, then completed tool calls and Finished."""
        tracing = log.isEnabledFor(TRACE)
        scan = scan_json
        blocks = self._blocks
        reader = SseReader(chunks)
        for sse in reader.all_events():
            data = sse.data
            if not data:
                continue
            if tracing:
                log.log(TRACE, "sse event %d: %s", self._frames, redact(data))
            self._frames += 1
            try:
                frame, end = scan(data, 0)
            except (StopIteration, ValueError, RecursionError):
                frame, end = None, 0
            if end != len(data) or type(frame) is not dict:
                frame = self._parse(data)
            kind = frame.get("type") or sse.event
            if kind == "content_block_delta":
                # The hot path, once per token: a text delta to a text block, inline.
                delta = frame.get("delta")
                if type(delta) is dict and delta.get("type") == "text_delta":
                    block = blocks.get(frame.get("index"))
                    piece = delta.get("text")
                    if block is not None and _PIECES in block and type(piece) is str:
                        block[_PIECES].append(piece)
                        yield TokenDelta(piece)
                        continue
                yield from self._delta(frame)
            elif kind == "content_block_start":
                yield from self._start(frame)
            elif kind == "content_block_stop":
                self._block(frame)  # nothing to do: fragments are joined at the end
            elif kind == "message_start":
                message = frame.get("message")
                if not isinstance(message, dict):
                    raise self._bad("message_start has no message object")
                self._about = {k: string_field(message.get(k)) for k in ("id", "model")}
                self._add_usage(message.get("usage"))
            elif kind == "message_delta":
                delta = frame.get("delta")
                if isinstance(delta, dict) and delta.get("stop_reason") is not None:
                    self._stop = delta["stop_reason"]
                if isinstance(delta, dict) and delta.get("container") is not None:
                    self._container = delta["container"]
                self._add_usage(frame.get("usage"))
            elif kind == "message_stop":
                self._done = True
            elif kind == "error":
                raise error_from_json(
                    frame, endpoint=self._endpoint, status=None, excerpt=data, who=WHO
                )
            elif kind != "ping":
                log.debug("%s stream: skipping an event of unknown type %r", WHO, kind)
        if reader.truncated or not self._done:
            where = "an SSE event" if reader.truncated else "its reply (no message_stop)"
            raise TransportError(
                f"stream from {WHO} {self._endpoint} ended in the middle of {where}",
                operation="stream",
                endpoint_or_server=self._endpoint,
            )
        yield from self._finish()

    def _start(self, frame: dict[str, Any]) -> Iterator[StreamEvent]:
        index = frame.get("index")
        block = frame.get("content_block")
        if type(index) is not int or not isinstance(block, dict):
            raise self._bad("content_block_start needs an integer index and a content_block")
        block = dict(block)
        self._blocks[index] = block
        kind = block.get("type")
        if kind in _STREAMED_TEXT:
            block[_PIECES] = [_string(block, _STREAMED_TEXT[kind])]
        if kind == "tool_use" or kind in _SERVER_CALLS:
            block.pop("input", None)  # {} at the start; the input arrives as JSON fragments
            block[_JSON] = []
        if kind == "tool_use":
            call = _tool_call({**block, "input": {}})  # checks id and name
            yield ToolCallStarted(call.id, call.name, self._calls)
            self._calls += 1
        elif isinstance(kind, str) and kind.endswith("_tool_result"):
            yield from self._server_tool_ran(block)
        elif kind == "text" and block.get("text"):
            yield TokenDelta(_string(block, "text"))
        elif kind == "thinking" and block.get("thinking"):
            yield ReasoningDelta(_string(block, "thinking"))

    def _server_tool_ran(self, result: dict[str, Any]) -> Iterator[StreamEvent]:
        """A server tool's result arrived (whole, in its start): show the call it answers."""
        call_id = result.get("tool_use_id")
        for call in self._blocks.values():
            if call.get("type") in _SERVER_CALLS and call.get("id") == call_id:
                asked = "".join(call.get(_JSON, ()))
                yield from self._ran.ran(call.get("name"), call_id, asked, result.get("content"))
                return

    def _delta(self, frame: dict[str, Any]) -> Iterator[StreamEvent]:
        block = self._block(frame)
        delta = frame.get("delta")
        if not isinstance(delta, dict):
            raise self._bad("content_block_delta has no delta object")
        kind = delta.get("type")
        if kind == "text_delta":
            piece = delta.get("text")
            if type(piece) is not str:
                raise self._bad("text_delta text must be a string")
            block[_PIECES].append(piece)
            yield TokenDelta(piece)
        elif kind == "input_json_delta":
            if _JSON not in block:
                raise self._bad(f"input_json_delta for a {block.get('type')} block")
            block[_JSON].append(_string(delta, "partial_json"))
        elif kind == "thinking_delta":
            piece = _string(delta, "thinking")
            block[_PIECES].append(piece)
            yield ReasoningDelta(piece)
        elif kind == "signature_delta":
            block.setdefault(_SIGNATURE, []).append(_string(delta, "signature"))
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(delta.get("citation"))
        else:
            log.debug("%s stream: skipping a delta of unknown type %r", WHO, kind)

    def _block(self, frame: dict[str, Any]) -> dict[str, Any]:
        block = self._blocks.get(frame.get("index"))  # type: ignore[arg-type]
        if block is None:
            raise self._bad(f"{frame.get('type')} for a block that never started")
        return block

    def _finish(self) -> Iterator[StreamEvent]:
        blocks = [self._blocks[i] for i in sorted(self._blocks)]
        for block in blocks:
            if _PIECES in block:
                block[_STREAMED_TEXT[block["type"]]] = "".join(block.pop(_PIECES))
            if _SIGNATURE in block:
                block["signature"] = block.get("signature", "") + "".join(block.pop(_SIGNATURE))
            if _JSON in block and block.get("type") != "tool_use":  # kept for replay: an object
                block["input"] = streamed_input("".join(block.pop(_JSON)))
        usage = usage_of(self._usage) if self._usage else None
        response = response_from_blocks(
            blocks,
            self._stop,
            usage,
            response_id=self._about.get("id", ""),
            model=self._about.get("model", ""),
            container=self._container,
        )
        yield from ending_events(response, shown=self._ran.shown)

    def _add_usage(self, raw: object) -> None:
        if isinstance(raw, dict):  # message_delta repeats or updates message_start's counts
            self._usage.update({k: v for k, v in raw.items() if v is not None})

    def _parse(self, data: str) -> dict[str, Any]:
        what = f"stream event {self._frames} from {WHO} {self._endpoint}"
        return load_object_frame(data, what=what)

    def _bad(self, what: str) -> ParseError:
        return ParseError(f"stream event {self._frames} from {WHO} {self._endpoint}: {what}")
