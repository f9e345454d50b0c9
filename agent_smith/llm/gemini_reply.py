"""Gemini replies: ``GenerateContentResponse`` chunks in, a neutral :class:`LlmResponse` out.

A reply is ``candidates[0].content.parts``: ``text`` parts (``thought:
true`` ones are reasoning), ``functionCall`` parts (``name``, ``args``, an
``id`` when the model gives one) and ``thoughtSignature``s, which may sit on
a call, on text, or on an otherwise empty part. Gemini 3 rejects a tool loop
whose signatures were not sent back where they came, so the turn's parts
are kept as its :class:`~agent_smith.messages.ProviderData` and replayed as
they were (adjacent unsigned text pieces of a stream merged). Code
execution ran on Gemini's side: an ``executableCode`` part and the
``codeExecutionResult`` parts after it are replayed the same way and shown
as a :class:`~agent_smith.llm.events.ServerToolUsed` (``code_execution``);
so is a candidate's ``groundingMetadata`` (``google_search`` with its
queries and sources, or ``grounding``), which Gemini does not take back
(:mod:`.server_tools`).

Streaming (``streamGenerateContent?alt=sse``) sends whole response chunks
separated by CRLF CRLF and no ``[DONE]``: the chunk with a ``finishReason``
ends the reply, and a stream that ends before one is a
:class:`~agent_smith.errors.TransportError`. A finish reason other than
``STOP`` and ``MAX_TOKENS`` (``SAFETY``, ``RECITATION``,
``MALFORMED_FUNCTION_CALL``, ...) and a blocked prompt are
:class:`~agent_smith.errors.LlmApiError`s naming the reason.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from typing import Any

from .._internal.sse_reader import SseReader
from ..errors import LlmApiError, ParseError, TransportError
from ..logs import TRACE, redact
from ..messages import AssistantMessage, ProviderData, TokenUsage, ToolCall
from .api_error import error_from_json, excerpt_of
from .events import (
    Finished,
    ReasoningDelta,
    StreamEvent,
    TokenDelta,
    ToolCallStarted,
    ending_events,
)
from .request import LlmResponse
from .server_tools import ServerToolLog
from .stream_decoder import load_frame, scan_json

log = logging.getLogger(__name__)

PROVIDER = "gcp.gemini"
WHO = "Gemini API"
#: Prefix of the ids made up for calls the model gave none (never sent back).
MADE_UP_ID = "gemini_call_"

_FINISH = {"STOP": "stop", "MAX_TOKENS": "length"}
_PIECES = "_pieces"  # a streamed text part's pieces (joined once, at the end)


def usage_of(raw: object) -> TokenUsage | None:
    """``usageMetadata``: thoughts count as completion tokens (and as reasoning), cached ones
    as cache reads."""
    if not isinstance(raw, dict):
        return None
    counts = []
    for key in (
        "promptTokenCount",
        "candidatesTokenCount",
        "thoughtsTokenCount",
        "cachedContentTokenCount",
        "totalTokenCount",
    ):
        value = raw.get(key) or 0
        if not isinstance(value, int) or value < 0:
            raise ParseError(f"{WHO} usageMetadata.{key} must be a non-negative integer")
        counts.append(value)
    prompt, candidates, thoughts, cached, total = counts
    completion = candidates + thoughts
    return TokenUsage(prompt, completion, total or prompt + completion, cached, reasoning=thoughts)


class GeminiAssembler:
    """Collects the parts of one reply, chunk after chunk, and yields their events."""

    def __init__(self, *, endpoint: str) -> None:
        self._endpoint = endpoint
        self._parts: list[dict[str, Any]] = []
        self._calls: list[ToolCall] = []
        self._finish: str | None = None
        self._usage_raw: object = None
        self._about: dict[str, str] = {}
        self._grounding: dict[str, Any] = {}

    @property
    def parts(self) -> list[dict[str, Any]]:
        """The reply's parts so far (streamed text pieces not yet joined)."""
        return self._parts

    def add(self, chunk: object) -> Iterator[StreamEvent]:
        """Take one response chunk; yield its text, reasoning and call events."""
        if not isinstance(chunk, dict):
            raise ParseError(f"{WHO} {self._endpoint}: a response chunk must be an object")
        if "error" in chunk:
            raise error_from_json(
                chunk, endpoint=self._endpoint, status=None, excerpt=json.dumps(chunk), who=WHO
            )
        self.note(chunk)
        candidates = chunk.get("candidates")
        if not candidates:
            feedback = chunk.get("promptFeedback")
            if isinstance(feedback, dict) and feedback.get("blockReason"):
                raise self._refused(f"the prompt was blocked ({feedback['blockReason']})", chunk)
            return
        if not isinstance(candidates, list) or not isinstance(candidates[0], dict):
            raise ParseError(f"{WHO} {self._endpoint}: candidates must be an array of objects")
        candidate = candidates[0]
        content = candidate.get("content") or {}
        parts = (content.get("parts") or []) if isinstance(content, dict) else None
        if not isinstance(parts, list):
            raise ParseError(f"{WHO} {self._endpoint}: content.parts must be an array")
        for part in parts:
            yield from self._part(part)
        grounding = candidate.get("groundingMetadata")
        if isinstance(grounding, dict) and grounding:  # streams send {} until the last chunk
            self._grounding = grounding
        reason = candidate.get("finishReason")
        if reason is not None:
            if reason not in _FINISH:
                raise self._refused(f"the reply stopped with finishReason {reason}", chunk)
            self._finish = _FINISH[reason]

    def note(self, chunk: dict[str, Any]) -> None:
        """Keep what a chunk says of the reply: usage (each chunk repeats it), id, model."""
        usage = chunk.get("usageMetadata")
        if usage is not None:
            self._usage_raw = usage
        for key, field in (("responseId", "id"), ("modelVersion", "model")):
            value = chunk.get(key)
            if isinstance(value, str):
                self._about[field] = value

    def events_at_end(self) -> Iterator[StreamEvent]:
        """The completed tool calls and Finished; TransportError if no chunk finished."""
        if self._finish is None:
            raise TransportError(
                f"stream from {WHO} {self._endpoint} ended before a finishReason",
                operation="stream",
                endpoint_or_server=self._endpoint,
            )
        for part in self._parts:
            if _PIECES in part:
                part["text"] = "".join(part.pop(_PIECES))
        said = [p for p in self._parts if isinstance(p.get("text"), str)]  # "text": null is none
        text = "".join(p["text"] for p in said if not p.get("thought"))
        thought = "".join(p["text"] for p in said if p.get("thought"))
        signed = any("thoughtSignature" in p for p in self._parts)
        server = self._server_tools()
        usage = usage_of(self._usage_raw)
        finish = "tool_calls" if self._calls and self._finish == "stop" else self._finish
        message = AssistantMessage(
            text,
            tuple(self._calls),
            usage,
            thought or None,
            ProviderData(PROVIDER, {"parts": self._parts}) if signed or thought or server else None,
        )
        yield from ending_events(
            LlmResponse.checked(
                message,
                finish,
                response_id=self._about.get("id", ""),
                model=self._about.get("model", ""),
                server_tools=server.used(),
            )
        )

    def _server_tools(self) -> ServerToolLog:
        """The code Gemini ran (with its results) and the searches it grounded the reply on."""
        server = ServerToolLog(PROVIDER)
        code = ""
        for part in self._parts:
            if "executableCode" in part:
                code = server.call("code_execution", None, part["executableCode"])
            elif "codeExecutionResult" in part:
                server.result(code, part["codeExecutionResult"])
        grounding = self._grounding
        if grounding:
            queries = grounding.get("webSearchQueries")
            named = isinstance(queries, list) and queries
            asked = {"queries": queries} if named else {}
            search = server.call("google_search" if named else "grounding", None, asked)
            chunks = grounding.get("groundingChunks")
            for chunk in chunks if isinstance(chunks, list) else ():
                server.result(search, chunk)
        return server

    def _part(self, part: object) -> Iterator[StreamEvent]:
        if not isinstance(part, dict):
            raise ParseError(f"{WHO} {self._endpoint}: a part must be an object")
        part = dict(part)
        if "functionCall" in part:
            call = self._call(part["functionCall"])
            self._calls.append(call)
            self._parts.append(part)
            yield ToolCallStarted(call.id, call.name, len(self._calls) - 1)
            return
        text = part.get("text")
        if text is not None and not isinstance(text, str):
            raise ParseError(f"{WHO} {self._endpoint}: a part's text must be a string")
        last = self._parts[-1] if self._parts else None
        if (
            text is not None
            and last is not None
            and _PIECES in last
            and last.get("thought") == part.get("thought")
            and "thoughtSignature" not in last
            and set(part) <= {"text", "thought"}
        ):
            last[_PIECES].append(text)  # one streamed answer, one part
        else:
            if text is not None:
                part[_PIECES] = [text]
            self._parts.append(part)
        if text:
            yield ReasoningDelta(text) if part.get("thought") else TokenDelta(text)

    def _call(self, raw: object) -> ToolCall:
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            raise ParseError(f"{WHO} {self._endpoint}: a functionCall needs a name")
        args = raw.get("args") or {}
        if not isinstance(args, dict):
            raise ParseError(f"{WHO} {self._endpoint}: functionCall args must be an object")
        call_id = raw.get("id")
        if not isinstance(call_id, str) or not call_id:
            call_id = f"{MADE_UP_ID}{len(self._calls)}"
        return ToolCall(call_id, raw["name"], args)

    def _refused(self, what: str, chunk: dict[str, Any]) -> LlmApiError:
        return LlmApiError(
            f"{WHO} {self._endpoint}: {what}",
            http_status=200,
            body_excerpt=excerpt_of(json.dumps(chunk)),
        )


def parse_response(body: object, *, endpoint: str) -> LlmResponse:
    """A whole ``generateContent`` reply."""
    assembler = GeminiAssembler(endpoint=endpoint)
    for _ in assembler.add(body):
        pass
    *_, finished = assembler.events_at_end()
    assert isinstance(finished, Finished)
    return finished.response


class GeminiStreamDecoder:
    """Decodes a ``streamGenerateContent?alt=sse`` body into stream events."""

    def __init__(self, *, endpoint: str) -> None:
        self._endpoint = endpoint
        self._frames = 0

    def events(self, chunks: Iterable[bytes]) -> Iterator[StreamEvent]:
        """Events as the chunks arrive, then the completed tool calls and Finished."""
        tracing = log.isEnabledFor(TRACE)
        scan = scan_json
        assembler = GeminiAssembler(endpoint=self._endpoint)
        pieces = assembler.parts  # the hot path adds plain answer pieces here directly
        reader = SseReader(chunks)
        for sse in reader.all_events():
            if not sse.data:
                continue
            if tracing:
                log.log(TRACE, "sse chunk %d: %s", self._frames, redact(sse.data))
            self._frames += 1
            data = sse.data
            try:
                chunk, end = scan(data, 0)
            except (StopIteration, ValueError, RecursionError):
                chunk, end = None, 0
            if end != len(data) or type(chunk) is not dict:
                chunk = self._parse(data)
            # The hot path, once per token: one candidate with one plain text part.
            candidates = chunk.get("candidates") if type(chunk) is dict else None
            if type(candidates) is list and len(candidates) == 1 and "error" not in chunk:
                candidate = candidates[0]
                if type(candidate) is dict and "finishReason" not in candidate:
                    content = candidate.get("content")
                    parts = content.get("parts") if type(content) is dict else None
                    if type(parts) is list and len(parts) == 1:
                        part = parts[0]
                        text = part.get("text") if type(part) is dict and len(part) == 1 else None
                        if type(text) is str:
                            # usage, id and model: read from the finishing chunk (slow path)
                            last = pieces[-1] if pieces else None
                            if last is not None and len(last) == 2 and _PIECES in last:
                                last[_PIECES].append(text)  # {"text", _PIECES}: plain answer
                            else:
                                pieces.append({"text": text, _PIECES: [text]})
                            if text:
                                yield TokenDelta(text)
                            continue
            yield from assembler.add(chunk)
        yield from assembler.events_at_end()

    def _parse(self, data: str) -> Any:
        return load_frame(data, what=f"stream chunk {self._frames} from {WHO} {self._endpoint}")
