"""Amazon Bedrock Converse replies: content blocks in, a neutral :class:`LlmResponse` out.

A reply's ``content`` holds ``text``, ``toolUse`` (``toolUseId``, ``name``,
``input``) and ``reasoningContent`` blocks (``reasoningText`` with its
``signature``, or ``redactedContent``). Reasoning blocks are kept verbatim
as the turn's :class:`~agent_smith.messages.ProviderData` (Claude on
Bedrock needs its signed reasoning back in a tool loop) and their text is
the reply's reasoning. So are Bedrock's system tools (Nova web grounding,
code interpreter): a ``toolUse`` block whose ``type`` is
``server_tool_use`` and the ``toolResult`` block that follows it in the
same reply ran on Bedrock's side (a ``toolUse`` without that ``type`` is
one too when its ``toolResult`` follows); they are shown as
:class:`~agent_smith.llm.events.ServerToolUsed`, replayed, never executed
here (:mod:`.server_tools`).

``ConverseStream`` replies are AWS event-stream frames (binary, with CRCs),
decoded by botocore's ``EventStreamBuffer``: ``messageStart``,
``contentBlockStart`` / ``contentBlockDelta`` / ``contentBlockStop``
(a system tool's ``toolResult`` arrives as a start and content deltas),
``messageStop`` (the stop reason), ``metadata`` (usage); a frame of message
type ``exception`` is an :class:`~agent_smith.errors.LlmApiError` named by
its ``:exception-type``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import Any

from .._internal import json_input
from ..errors import LlmApiError, ParseError, TransportError
from ..messages import AssistantMessage, ProviderData, TokenUsage, ToolCall
from .api_error import excerpt_of
from .events import ReasoningDelta, StreamEvent, TokenDelta, ToolCallStarted, ending_events
from .request import LlmResponse
from .server_tools import ServerToolLog, streamed_input

log = logging.getLogger(__name__)

PROVIDER = "aws.bedrock"
WHO = "Amazon Bedrock"

_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
}
_REFUSED = ("guardrail_intervened", "content_filtered")
_SERVER_USE = "server_tool_use"  # the toolUse type of a system tool (Bedrock runs it)
# Documented exception statuses, for an exception frame inside a 200 stream.
_STATUS = {
    "throttlingException": 429,
    "serviceUnavailableException": 503,
    "internalServerException": 500,
    "modelStreamErrorException": 424,
    "validationException": 400,
}


def usage_of(raw: object) -> TokenUsage | None:
    """Converse usage: input tokens exclude cached ones, so ``prompt`` adds them back."""
    if not isinstance(raw, dict):
        return None

    def count(key: str) -> int:
        value = raw.get(key) or 0
        if not isinstance(value, int) or value < 0:
            raise ParseError(f"{WHO} usage.{key} must be a non-negative integer")
        return value

    read, write = count("cacheReadInputTokens"), count("cacheWriteInputTokens")
    prompt = count("inputTokens") + read + write
    completion = count("outputTokens")
    return TokenUsage(prompt, completion, prompt + completion, read, write)


def response_from_content(
    content: Iterable[dict[str, Any]], stop_reason: object, usage: TokenUsage | None
) -> LlmResponse:
    """The neutral response of a reply's content blocks (see the module doc)."""
    content = list(content)
    # A toolResult in the model's own reply answers a system tool, whatever its toolUse says.
    answered = {
        block["toolResult"].get("toolUseId")
        for block in content
        if isinstance(block.get("toolResult"), dict)
        and isinstance(block["toolResult"].get("toolUseId"), str)
    }
    text: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    kept: list[dict[str, Any]] = []
    server = ServerToolLog(PROVIDER)
    for block in content:
        if "text" in block:
            text.append(str(block["text"]))
        elif "toolUse" in block:
            use = block["toolUse"]
            if not isinstance(use, dict) or not isinstance(use.get("name"), str):
                raise ParseError(f"{WHO}: a toolUse block needs a name")
            arguments = use.get("input", {})
            if use.get("type") == _SERVER_USE or str(use.get("toolUseId")) in answered:
                if isinstance(arguments, str):  # streamed: kept for replay as an object
                    arguments = streamed_input(arguments)
                    block = {**block, "toolUse": {**use, "input": arguments}}
                server.call(use["name"], use.get("toolUseId"), arguments)
                kept.append(block)
                continue
            if isinstance(arguments, str):  # streamed: the raw JSON text
                calls.append(
                    ToolCall.from_wire(
                        str(use.get("toolUseId")), use["name"], arguments, lenient=True
                    )
                )
            elif isinstance(arguments, dict):
                calls.append(ToolCall(str(use.get("toolUseId")), use["name"], arguments))
            else:
                raise ParseError(f"{WHO}: toolUse {use['name']!r} input must be an object")
        elif "reasoningContent" in block:
            inner = block["reasoningContent"]
            said = inner.get("reasoningText") if isinstance(inner, dict) else None
            if isinstance(said, dict) and isinstance(said.get("text"), str):
                reasoning.append(said["text"])
            kept.append(block)
        else:
            result = block.get("toolResult")
            if isinstance(result, dict):
                server.result(result.get("toolUseId"), result.get("content"))
            kept.append(block)
    if stop_reason in _REFUSED:
        raise LlmApiError(
            f"{WHO}: the reply was stopped ({stop_reason})",
            http_status=200,
            body_excerpt=excerpt_of("".join(text)),
        )
    if stop_reason is not None and not isinstance(stop_reason, str):
        raise ParseError(f"{WHO} stopReason must be a string, got {stop_reason!r}")
    finish = _FINISH.get(stop_reason or "", stop_reason or ("tool_calls" if calls else "stop"))
    message = AssistantMessage(
        "".join(text),
        tuple(calls),
        usage,
        "".join(reasoning) or None,
        ProviderData(PROVIDER, {"content": kept}) if kept else None,
    )
    return LlmResponse.checked(message, finish, server_tools=server.used())


def parse_converse(body: object) -> LlmResponse:
    """A whole ``Converse`` reply."""
    output = body.get("output") if isinstance(body, dict) else None
    message = output.get("message") if isinstance(output, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
        raise ParseError(f"{WHO} reply has no output.message.content array")
    assert isinstance(body, dict)
    return response_from_content(content, body.get("stopReason"), usage_of(body.get("usage")))


class BedrockStreamDecoder:
    """Decodes a ``ConverseStream`` body (AWS event-stream frames) into stream events."""

    def __init__(self, *, endpoint: str) -> None:
        self._endpoint = endpoint
        self._blocks: dict[int, dict[str, Any]] = {}
        self._calls = 0
        self._stop: object = None
        self._usage: TokenUsage | None = None
        self._done = False
        self._ran = ServerToolLog(PROVIDER)  # system tools shown as their results end

    def events(self, chunks: Iterable[bytes]) -> Iterator[StreamEvent]:
        """Events as the frames arrive, then the completed tool calls and Finished."""
        from botocore.eventstream import EventStreamBuffer, ParserError  # the [bedrock] extra

        buffer = EventStreamBuffer()
        try:
            for chunk in chunks:
                buffer.add_data(chunk)
                for message in buffer:
                    yield from self._frame(message.headers, message.payload)
        except ParserError as err:
            raise ParseError(f"{WHO} {self._endpoint}: a bad event-stream frame ({err})") from err
        cut_off = bool(getattr(buffer, "_data", None))  # bytes of a frame that never ended
        if not self._done or cut_off:
            raise TransportError(
                f"stream from {WHO} {self._endpoint} ended before messageStop and metadata",
                operation="stream",
                endpoint_or_server=self._endpoint,
            )
        blocks = [self._blocks[i] for i in sorted(self._blocks)]
        for block in blocks:
            if "_pieces" in block:
                block["text"] = "".join(block.pop("_pieces"))
        response = response_from_content(blocks, self._stop, self._usage)
        yield from ending_events(response, shown=self._ran.shown)

    def _frame(self, headers: dict[str, Any], payload: bytes) -> Iterator[StreamEvent]:
        kind = headers.get(":event-type")
        if headers.get(":message-type") == "exception":
            name = str(headers.get(":exception-type", "exception"))
            text = payload.decode("utf-8", "replace")
            try:
                said = json_input.loads(text).get("message", text)
            except (ValueError, AttributeError):
                said = text
            raise LlmApiError(
                f"{WHO} {self._endpoint} sent an error in its stream ({name}): {said}",
                http_status=_STATUS.get(name, 500),
                body_excerpt=excerpt_of(text),
            )
        try:
            event = json_input.loads(payload) if payload else {}
        except ValueError as err:
            raise ParseError(f"{WHO} {self._endpoint}: {kind} payload is not JSON") from err
        if not isinstance(event, dict):
            raise ParseError(f"{WHO} {self._endpoint}: {kind} payload is not an object")
        if kind == "contentBlockDelta":
            yield from self._delta(event)
        elif kind == "contentBlockStart":
            start = event.get("start") or {}
            if not isinstance(start, dict):
                raise ParseError(f"{WHO} {self._endpoint}: contentBlockStart needs a start object")
            use, result = start.get("toolUse"), start.get("toolResult")
            if isinstance(use, dict):
                self._blocks[self._index(event)] = {"toolUse": {**use, "input": ""}}
                if use.get("type") != _SERVER_USE:  # a system tool is not the client's call
                    yield ToolCallStarted(
                        str(use.get("toolUseId")), str(use.get("name")), self._calls
                    )
                    self._calls += 1
            elif isinstance(result, dict):  # a system tool's result: content deltas follow
                self._blocks[self._index(event)] = {"toolResult": {**result, "content": []}}
        elif kind == "contentBlockStop":
            yield from self._server_tool_ran(self._blocks.get(self._index(event)))
        elif kind == "messageStop":
            self._stop = event.get("stopReason")
        elif kind == "metadata":
            self._usage = usage_of(event.get("usage"))
            self._done = self._stop is not None
        elif kind != "messageStart":
            log.debug("%s stream: skipping an event of unknown type %r", WHO, kind)

    def _delta(self, event: dict[str, Any]) -> Iterator[StreamEvent]:
        index = self._index(event)
        delta = event.get("delta")
        if not isinstance(delta, dict):
            raise ParseError(f"{WHO} {self._endpoint}: contentBlockDelta has no delta")
        if isinstance(delta.get("text"), str):
            block = self._blocks.setdefault(index, {"_pieces": []})
            block.setdefault("_pieces", []).append(delta["text"])
            yield TokenDelta(delta["text"])
        elif isinstance(delta.get("toolUse"), dict):
            started = self._blocks.get(index)
            if started is None or "toolUse" not in started:
                raise ParseError(f"{WHO} {self._endpoint}: tool input for a block never started")
            started["toolUse"]["input"] += str(delta["toolUse"].get("input", ""))
        elif isinstance(delta.get("toolResult"), list):
            started = self._blocks.get(index)
            if started is None or "toolResult" not in started:
                raise ParseError(f"{WHO} {self._endpoint}: a tool result for a block never started")
            started["toolResult"]["content"].extend(delta["toolResult"])
        elif isinstance(delta.get("reasoningContent"), dict):
            said = delta["reasoningContent"]
            block = self._blocks.setdefault(index, {"reasoningContent": {"reasoningText": {}}})
            inner = block["reasoningContent"].setdefault("reasoningText", {})
            if isinstance(said.get("text"), str):
                inner["text"] = inner.get("text", "") + said["text"]
                yield ReasoningDelta(said["text"])
            if isinstance(said.get("signature"), str):
                inner["signature"] = inner.get("signature", "") + said["signature"]
            if "redactedContent" in said:
                block["reasoningContent"] = {"redactedContent": said["redactedContent"]}

    def _server_tool_ran(self, block: dict[str, Any] | None) -> Iterator[StreamEvent]:
        """A block ended; a system tool's result: show the call it answers."""
        result = block.get("toolResult") if block is not None else None
        if not isinstance(result, dict):
            return
        call_id = result.get("toolUseId")
        for other in self._blocks.values():
            use = other.get("toolUse")
            if isinstance(use, dict) and use.get("toolUseId") == call_id:
                yield from self._ran.ran(
                    use.get("name"), call_id, use.get("input"), result.get("content")
                )
                return

    def _index(self, event: dict[str, Any]) -> int:
        index = event.get("contentBlockIndex")
        if type(index) is not int:
            raise ParseError(f"{WHO} {self._endpoint}: contentBlockIndex must be an integer")
        return index
