"""Streamed chat completions: SSE frames in, stream events out.

Two layers (seed §9.3). The shared SSE reader (:mod:`agent_smith._internal.sse_reader`,
built on ``sseclient-py``) splits the byte chunks into SSE events (any
chunking, LF, CRLF or CR, comments, multi-line ``data:``); the delta parser
here turns each JSON frame into :mod:`~agent_smith.llm.events`.
Tool-call fragments are accumulated per ``index`` and parsed once, after the
stream ended, so callers never see partial JSON. Reasoning arrives as ``reasoning_content``
(llama.cpp, DeepSeek), ``reasoning`` (vLLM, Ollama, OpenRouter) or
``reasoning_details`` (OpenRouter's structured form); each becomes
:class:`ReasoningDelta` events, never history. Usage comes from whichever
frame carries it (llama.cpp sends it in a last frame with ``choices: []``);
the non-standard ``timings`` object is ignored. Tools the server ran itself
(Groq's compound models: ``executed_tools``) come out as
:class:`~agent_smith.llm.events.ServerToolUsed` before ``Finished``, never
as calls.

The decoder reads its input to the very end, past ``data: [DONE]``: a body
read to its end lets ``urllib3`` put the connection back in the pool.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .._internal import json_input
from .._internal.sse_reader import SseReader
from ..base.content_parts import content_from_wire, details_text, made_up_call_id
from ..errors import LlmApiError, ParseError, TransportError
from ..logs import TRACE, redact
from ..messages import AssistantMessage, TokenUsage, ToolCall
from .api_error import error_from_json
from .events import (
    Finished,
    ReasoningDelta,
    StreamEvent,
    TokenDelta,
    ToolCallCompleted,
    ToolCallStarted,
)
from .request import PROVIDER, LlmResponse
from .server_tools import executed_tools

log = logging.getLogger(__name__)

_DONE = "[DONE]"
_scan = json_input.scan
#: The C JSON scanner: ``scan_json(text, 0) -> (value, end)``, without json.loads' two
#: regex passes and extra calls (a measurable share of a token's cost). Every stream
#: decoder's hot loop uses it and falls back to json.loads to explain a bad frame.
scan_json = _scan


def load_frame(data: str, *, what: str) -> Any:
    """A frame the fast path could not read, parsed; else a ParseError naming ``what``.

    ``what`` says which frame of whose stream it is (``"stream event 3 from
    Anthropic API https://…"``); build it only on this slow path.
    """
    try:
        return json_input.loads(data)
    except ValueError as err:
        raise ParseError(
            f"{what} is not valid JSON ({getattr(err, 'msg', err)}): {data[:80]!r}",
            offset=getattr(err, "pos", 0),
        ) from err


def load_object_frame(data: str, *, what: str) -> dict[str, Any]:
    """:func:`load_frame` for a frame that must be a JSON object."""
    frame = load_frame(data, what=what)
    if type(frame) is not dict:
        raise ParseError(f"{what}: must be a JSON object")
    return frame


@dataclass
class _PartialCall:
    index: int
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    started: bool = False


class StreamDecoder:
    """Decodes the SSE body of one streamed chat completion into events.

    ``endpoint`` names the server in errors. Iterate :meth:`events` over the
    body's byte chunks; the last event is :class:`Finished` carrying the
    assembled :class:`LlmResponse`.
    """

    def __init__(self, *, endpoint: str) -> None:
        self._endpoint = endpoint
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self._finish: str | None = None
        self._usage: TokenUsage | None = None
        self._done = False
        self._frames = 0
        self._about: dict[str, str] = {}  # the reply's id and model, as the server names them
        self._last_index = -1  # the tool call the latest fragment went to
        self._executed: dict[object, Any] = {}  # tools the server ran (Groq), by index

    def events(self, chunks: Iterable[bytes]) -> Iterator[StreamEvent]:
        """Events as the frames arrive, then completed tool calls and Finished."""
        tracing = log.isEnabledFor(TRACE)
        text = self._text
        scan = _scan
        reader = SseReader(chunks)
        # This loop runs once per token: the common path (a delta holding only
        # content) is kept inline, without per-frame calls or generators.
        for sse in reader.all_events():
            data = sse.data
            if not data:
                continue  # comments, keep-alives, id/retry-only events
            if tracing:
                log.log(TRACE, "sse frame %d: %s", self._frames, redact(data))
            self._frames += 1
            if self._done:
                log.debug("ignoring an SSE frame after [DONE]")
                continue
            if data == _DONE:
                self._done = True
                continue
            if sse.event == "error":
                raise self._error(data)
            try:
                # The C scanner directly: json.loads adds two regex matches and
                # several calls per frame, a measurable share of a token's cost.
                obj, end = scan(data, 0)
            except (StopIteration, ValueError, RecursionError):
                obj, end = self._parse(data), len(data)
            if end != len(data) or type(obj) is not dict:
                obj = self._parse(data)
            if "error" in obj:
                raise self._error(data, obj)
            choices = obj.get("choices")
            if choices:
                if type(choices) is not list or type(choices[0]) is not dict:
                    raise self._bad("choices must be an array of objects")
                choice = choices[0]
                delta = choice.get("delta")
                if delta:
                    if type(delta) is not dict:
                        raise self._bad("delta must be an object")
                    content = delta.get("content")
                    if content:
                        if type(content) is str:
                            text.append(content)
                            yield TokenDelta(content)
                        else:
                            yield from self._content_parts(content)
                    if len(delta) > 1 or content is None:
                        yield from self._other_deltas(delta)
                finish = choice.get("finish_reason")
                if finish is not None:
                    if type(finish) is not str:
                        raise self._bad("finish_reason must be a string")
                    self._finish = finish
                    self._describe(obj)
            elif choices is not None and type(choices) is not list:
                raise self._bad("choices must be an array")
            usage = obj.get("usage")
            if usage is not None:
                self._usage = TokenUsage.from_openai(usage)
                self._describe(obj)
        tail = reader.tail
        if tail is not None and tail.event == "error":
            raise self._error(tail.data)
        if tail is not None and tail.data.strip() == _DONE:
            self._done = True  # [DONE] without its blank line: the reply is whole
        elif reader.truncated:
            raise TransportError(
                f"stream from {self._endpoint} ended in the middle of an SSE frame",
                operation="stream",
                endpoint_or_server=self._endpoint,
            )
        yield from self._finish_events()

    def _content_parts(self, content: object) -> Iterator[StreamEvent]:
        """A delta's ``content`` given as typed parts or as a JSON value."""
        try:
            text, thinking = content_from_wire(content, "delta.content")
        except ParseError as err:
            raise self._bad(err.message) from err
        if thinking:
            self._reasoning.append(thinking)
            yield ReasoningDelta(thinking)
        if text:
            self._text.append(text)
            yield TokenDelta(text)

    def _error(self, data: str, obj: dict[str, Any] | None = None) -> LlmApiError:
        """The error a server reported inside its 200 stream, in its own words."""
        if obj is None:
            try:
                parsed = json_input.loads(data)
            except ValueError:
                parsed = None
            obj = parsed if isinstance(parsed, dict) else {"error": data}
        return error_from_json(obj, endpoint=self._endpoint, status=None, excerpt=data)

    def _other_deltas(self, delta: dict[str, Any]) -> Iterator[StreamEvent]:
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning is None and delta.get("reasoning_details"):
            reasoning = details_text(delta["reasoning_details"])
        if reasoning:
            if type(reasoning) is not str:
                raise self._bad("reasoning_content must be a string")
            self._reasoning.append(reasoning)
            yield ReasoningDelta(reasoning)
        fragments = delta.get("tool_calls")
        if fragments is not None:
            yield from self._tool_fragments(fragments)
        executed = delta.get("executed_tools")
        if type(executed) is list:  # each entry again as it goes on: the latest is kept
            for entry in executed:
                key = entry.get("index") if type(entry) is dict else None
                self._executed[key if type(key) is int else len(self._executed)] = entry

    def _describe(self, frame: dict[str, Any]) -> None:
        """Keep the reply's ``id`` and ``model`` from a closing frame that names them."""
        for key in ("id", "model"):
            value = frame.get(key)
            if isinstance(value, str) and value:
                self._about[key] = value

    def _parse(self, data: str) -> dict[str, Any]:
        """The slow path: leading whitespace, trailing data, or an error to explain."""
        return load_object_frame(data, what=f"stream frame {self._frames} from {self._endpoint}")

    def _bad(self, what: str) -> ParseError:
        return ParseError(f"stream frame {self._frames} from {self._endpoint}: {what}")

    def _tool_fragments(self, fragments: object) -> Iterator[StreamEvent]:
        if type(fragments) is not list:
            raise self._bad("delta.tool_calls must be an array")
        for fragment in fragments:
            if type(fragment) is not dict:
                raise self._bad("a tool call must be an object")
            call_id = fragment.get("id")
            if call_id and type(call_id) is not str:
                raise self._bad("tool call id must be a string")
            function = fragment.get("function") or {}
            if type(function) is not dict:
                raise self._bad("tool call function must be an object")
            name = function.get("name")
            if name and type(name) is not str:
                raise self._bad("tool call name must be a string")
            index = fragment.get("index")
            if index is None:
                index = self._unindexed(call_id, name)
            elif type(index) is not int:
                raise self._bad("tool call index must be an integer")
            call = self._calls.get(index)
            if call is None:
                call = self._calls[index] = _PartialCall(index)
            self._last_index = index
            if call_id and not call.id:
                call.id = call_id
            if name:
                call.name += name if call.name != name else ""
            arguments = function.get("arguments")
            if arguments:
                if type(arguments) is dict:  # a few servers send the object itself
                    arguments = json.dumps(arguments, ensure_ascii=False)
                elif type(arguments) is not str:
                    raise self._bad("tool call arguments must be a string")
                call.arguments.append(arguments)
            if call.name and not call.started:
                call.started = True
                if not call.id:
                    call.id = made_up_call_id(index)
                yield ToolCallStarted(call.id, call.name, index)

    def _unindexed(self, call_id: str | None, name: str | None) -> int:
        """The index of a fragment sent without one (Mistral, Gemini: whole calls).

        A fragment continues the latest call unless it names a call that
        cannot be that one: another id, or another name where the latest
        call already has one. Otherwise it starts the next call.
        """
        latest = self._calls.get(self._last_index)
        if latest is None:
            return len(self._calls)
        if call_id and latest.id and call_id != latest.id:
            return max(self._calls) + 1
        if name and latest.name and name != latest.name and not call_id:
            return max(self._calls) + 1
        return self._last_index

    def _finish_events(self) -> Iterator[StreamEvent]:
        if not self._done and self._finish is None:
            raise TransportError(
                f"stream from {self._endpoint} ended before [DONE] or a finish reason",
                operation="stream",
                endpoint_or_server=self._endpoint,
            )
        calls: list[ToolCall] = []
        for index in sorted(self._calls):
            partial = self._calls[index]
            if not partial.name:
                raise ParseError(f"streamed tool call at index {index} has no name")
            calls.append(
                ToolCall.from_wire(
                    partial.id,  # set when the call started, as its name arrived
                    partial.name,
                    "".join(partial.arguments),
                    lenient=True,
                )
            )
        finish = self._finish or ("tool_calls" if calls else "stop")
        message = AssistantMessage(
            "".join(self._text),
            tuple(calls),
            self._usage,
            "".join(self._reasoning) or None,
        )
        about = self._about
        response = LlmResponse.checked(
            message,
            finish,
            response_id=about.get("id", ""),
            model=about.get("model", ""),
            server_tools=executed_tools(list(self._executed.values()), PROVIDER),
        )
        yield from response.server_tools
        for index, call in zip(sorted(self._calls), calls, strict=True):
            yield ToolCallCompleted(index, call.arguments)
        yield Finished(finish, self._usage, response)
