"""OpenAI Responses API replies: output items in, a neutral :class:`LlmResponse` out.

A response's ``output`` is a list of items: ``message`` items (their
``output_text`` parts make the content), ``function_call`` items (the tool
calls, by ``call_id``), ``reasoning`` items (their summary and reasoning
text make the reasoning). Reasoning items — and the items of tools OpenAI
runs itself (``web_search_call``, ``file_search_call``,
``code_interpreter_call``, ...) — are kept verbatim as the turn's
:class:`~agent_smith.messages.ProviderData`: with ``store=false`` a
reasoning item carries the ``encrypted_content`` the model needs back with
the function calls that follow it. A server tool's item is shown as a
:class:`~agent_smith.llm.events.ServerToolUsed` and never executed here
(:mod:`.server_tools`). A refusal is the reply's text, streamed as text
deltas (``response.refusal.delta``), with finish reason ``content_filter``.

``status: "incomplete"`` raises :class:`~agent_smith.errors.TruncatedReplyError`
(``max_output_tokens``) or :class:`~agent_smith.errors.LlmApiError`
(``content_filter`` and others); ``failed`` and ``error`` events raise
``LlmApiError``. :class:`ResponsesStreamDecoder` yields text, reasoning and
tool-call events as they arrive and takes the final ``response.completed``
object as the reply; a stream without it is a
:class:`~agent_smith.errors.TransportError`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from typing import Any

from .._internal.sse_reader import SseReader
from ..errors import LlmApiError, ParseError, TransportError, TruncatedReplyError
from ..logs import TRACE, redact
from ..messages import AssistantMessage, ProviderData, TokenUsage, ToolCall
from .api_error import error_from_json, excerpt_of
from .events import ReasoningDelta, StreamEvent, TokenDelta, ToolCallStarted, ending_events
from .request import LlmResponse, string_field
from .server_tools import ServerToolLog
from .stream_decoder import load_object_frame, scan_json

log = logging.getLogger(__name__)

#: The tag of provider data written by the Responses client.
PROVIDER = "openai.responses"
WHO = "OpenAI Responses API"

_REASONING_DELTAS = ("response.reasoning_summary_text.delta", "response.reasoning_text.delta")
# Items of the tools OpenAI runs: the tool's name, the item fields that say what it was
# asked and what it returned.
_SERVER_ITEMS = {
    "web_search_call": ("web_search", "action", "sources"),
    "file_search_call": ("file_search", "queries", "results"),
    "code_interpreter_call": ("code_interpreter", "code", "outputs"),
    "image_generation_call": ("image_generation", "revised_prompt", "result"),
    "mcp_call": ("mcp", "arguments", "output"),
}


def usage_of(raw: object) -> TokenUsage | None:
    """Responses usage: input, output and total tokens, cached input and reasoning tokens."""
    if not isinstance(raw, dict):
        return None
    details = raw.get("input_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else 0
    details = raw.get("output_tokens_details")
    reasoning = details.get("reasoning_tokens") if isinstance(details, dict) else 0
    counts = [
        raw.get("input_tokens"),
        raw.get("output_tokens"),
        raw.get("total_tokens"),
        cached,
        reasoning,
    ]
    for value in counts:
        if value is not None and (not isinstance(value, int) or value < 0):
            raise ParseError(f"{WHO} usage counts must be non-negative integers, got {raw!r}")
    prompt, completion, total, read, thought = (v or 0 for v in counts)
    return TokenUsage(prompt, completion, total or prompt + completion, read, reasoning=thought)


def parse_response(body: object, *, endpoint: str) -> LlmResponse:
    """A whole response object (non-streamed, or the one ``response.completed`` carries)."""
    if not isinstance(body, dict) or not isinstance(body.get("output"), list):
        raise ParseError(f"{WHO} {endpoint} reply has no output array")
    status = body.get("status")
    if status == "failed":
        raise error_from_json(
            {"error": body.get("error") or {"message": "the response failed"}},
            endpoint=endpoint,
            status=None,
            excerpt=json.dumps(body),
            who=WHO,
        )
    if status == "incomplete":
        details = body.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        if reason == "max_output_tokens":
            raise TruncatedReplyError(
                f"{WHO} {endpoint}: the reply was cut off by max_output_tokens (raise max_tokens)"
            )
        raise LlmApiError(
            f"{WHO} {endpoint}: the reply is incomplete ({reason or 'no reason given'})",
            http_status=200,
            body_excerpt=excerpt_of(json.dumps(body)),
        )
    text: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    kept: list[dict[str, Any]] = []
    server = ServerToolLog(PROVIDER)
    refused = False
    for item in body["output"]:
        if not isinstance(item, dict):
            raise ParseError(f"{WHO} {endpoint}: output items must be objects")
        kind = item.get("type")
        if kind == "message":
            for part in _parts(item.get("content")):
                if part.get("type") == "output_text":
                    text.append(_string(part, "text"))
                elif part.get("type") == "refusal":
                    text.append(_string(part, "refusal"))
                    refused = True
        elif kind == "function_call":
            calls.append(_call(item))
        else:
            if kind == "reasoning":
                for part in _parts(item.get("summary")) + _parts(item.get("content")):
                    reasoning.append(_string(part, "text"))
            elif kind in _SERVER_ITEMS:
                _note_server_item(server, item)
            kept.append(item)
    message = AssistantMessage(
        "".join(text),
        tuple(calls),
        usage_of(body.get("usage")),
        "\n\n".join(r for r in reasoning if r) or None,
        ProviderData(PROVIDER, {"items": kept}) if kept else None,
    )
    finish = "content_filter" if refused else "tool_calls" if calls else "stop"
    return LlmResponse.checked(
        message,
        finish,
        response_id=string_field(body.get("id")),
        model=string_field(body.get("model")),
        server_tools=server.used(),
    )


def _note_server_item(server: ServerToolLog, item: dict[str, Any]) -> None:
    """A server tool's item: what it was asked (an object, or ``{field: value}``), what it gave."""
    name, asked, got = _SERVER_ITEMS[item["type"]]
    value = item.get(asked)
    if isinstance(value, dict):  # web search: the sources sit in the action
        arguments, returned = value, value.get(got, item.get(got))
    else:
        arguments, returned = ({} if value is None else {asked: value}), item.get(got)
    call_id = server.call(item.get("name") or name, item.get("id"), arguments)
    if returned is not None:
        for result in returned if isinstance(returned, list) else [returned]:
            server.result(call_id, result)


def _parts(value: object) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(p, dict) for p in value):
        raise ParseError(f"{WHO}: content and summary must be arrays of objects")
    return value


def _string(part: dict[str, Any], key: str) -> str:
    value = part.get(key, "")
    if not isinstance(value, str):
        raise ParseError(f"{WHO}: {part.get('type')} {key!r} must be a string")
    return value


def _call(item: dict[str, Any]) -> ToolCall:
    call_id, name, arguments = item.get("call_id"), item.get("name"), item.get("arguments", "")
    if not isinstance(call_id, str) or not call_id or not isinstance(name, str) or not name:
        raise ParseError(f"{WHO}: a function_call item needs a string call_id and name")
    if not isinstance(arguments, str):
        raise ParseError(f"{WHO}: function_call {name!r} arguments must be a string")
    return ToolCall.from_wire(call_id, name, arguments, lenient=True)


class ResponsesStreamDecoder:
    """Decodes one streamed Responses reply into stream events (see the module doc)."""

    def __init__(self, *, endpoint: str) -> None:
        self._endpoint = endpoint
        self._calls = 0
        self._frames = 0
        self._ran = ServerToolLog(PROVIDER)  # server tools shown as their items are done

    def events(self, chunks: Iterable[bytes]) -> Iterator[StreamEvent]:
        """Events as the SSE events arrive, then completed tool calls and Finished."""
        tracing = log.isEnabledFor(TRACE)
        scan = scan_json
        reader = SseReader(chunks)
        final: LlmResponse | None = None
        for sse in reader.all_events():
            data = sse.data
            if not data or data == "[DONE]":
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
            if kind == "response.output_text.delta":  # the hot path, once per token
                piece = frame.get("delta")
                if type(piece) is not str:
                    raise ParseError(f"{WHO} {self._endpoint}: a text delta must be a string")
                yield TokenDelta(piece)
            elif kind == "response.refusal.delta":  # the refusal is the reply's text
                yield TokenDelta(_string(frame, "delta"))
            elif kind in _REASONING_DELTAS:
                yield ReasoningDelta(_string(frame, "delta"))
            elif kind == "response.output_item.added":
                item = frame.get("item")
                if isinstance(item, dict) and item.get("type") == "function_call":
                    call = _call({**item, "arguments": ""})
                    yield ToolCallStarted(call.id, call.name, self._calls)
                    self._calls += 1
            elif kind == "response.output_item.done":
                item = frame.get("item")
                if isinstance(item, dict) and item.get("type") in _SERVER_ITEMS:
                    _note_server_item(self._ran, item)
                    yield from self._ran.fresh()
            elif kind in ("response.completed", "response.incomplete", "response.failed"):
                final = parse_response(frame.get("response"), endpoint=self._endpoint)
            elif kind == "error":
                raise error_from_json(
                    frame, endpoint=self._endpoint, status=None, excerpt=data, who=WHO
                )
        if final is None:
            where = "an SSE event" if reader.truncated else "its reply (no response.completed)"
            raise TransportError(
                f"stream from {WHO} {self._endpoint} ended in the middle of {where}",
                operation="stream",
                endpoint_or_server=self._endpoint,
            )
        yield from ending_events(final, shown=self._ran.shown)

    def _parse(self, data: str) -> dict[str, Any]:
        what = f"stream event {self._frames} from {WHO} {self._endpoint}"
        return load_object_frame(data, what=what)
