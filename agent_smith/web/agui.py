"""AG-UI (what CopilotKit and other agent UIs speak), from an agent's events.

``POST /api/agui`` takes a ``RunAgentInput`` (``threadId`` is the
conversation, ``runId`` the run) and answers with server-sent events, in the
order the protocol's client verifies: ``RUN_STARTED``; per LLM round a step
(``STEP_STARTED`` … ``STEP_FINISHED``, named ``round <n>``) holding reasoning
(``REASONING_START``, ``REASONING_MESSAGE_START/CONTENT/END``,
``REASONING_END``), text (``TEXT_MESSAGE_START/CONTENT/END``) and tool calls
(``TOOL_CALL_START/ARGS/END``, then ``TOOL_CALL_RESULT``); every open message
and step closed before ``RUN_FINISHED`` (with the turn's usage and its answer
as ``result``) or ``RUN_ERROR``.

The session is the conversation's source of truth: of the input's messages
only the last user message counts; its content is a string or a list of
parts: text, and ``image`` / ``audio`` / ``document`` parts whose source is
``data`` (base64 with its ``mimeType``) or ``url``. A tool result that
carries images, documents or audio has a list of such parts as its
``TOOL_CALL_RESULT`` content (text first, then ``data`` sources).

Human in the loop uses the protocol's interrupts: a turn paused for
approvals ends with ``RUN_FINISHED`` whose ``outcome`` is ``{"type":
"interrupt", "interrupts": [...]}``, one interrupt per waiting call (its
``id`` and ``toolCallId`` are the call id, ``reason`` ``"tool_approval"``,
``metadata`` the tool name and arguments); the next run answers them in
``resume``: ``{"interruptId", "status": "resolved", "payload": {"approved":
true | false, "reason": "..."}}``, or ``"status": "cancelled"`` (denied).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..agent.events import AssistantTurn, FinalAnswer, ToolCallRequested, ToolResultReady
from ..base.media_input import decode_base64, media_part
from ..base.parts import Content, MediaPart
from ..base.paused_turn import ApprovalRequest, Decision
from ..errors import ConfigError, ParseError, PartError
from ..llm.events import ReasoningDelta, TokenDelta, ToolCallStarted
from ..messages import AssistantMessage, TokenUsage, ToolMessage
from .media import media_of, read_part, user_content
from .stream import TurnFailed, TurnPaused, WebEvent, sse, tool_outcome

#: The response headers of an AG-UI event stream (proxies must not buffer it).
HEADERS = (
    ("Content-Type", "text/event-stream"),
    ("Cache-Control", "no-cache"),
    ("X-Accel-Buffering", "no"),
)
#: Why a call was denied when the user gave no reason, or cancelled the interrupt.
DENIED_BY_USER = "denied by the user"

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class RunInput:
    """What one AG-UI run asks: a new user message, or answers to the interrupts."""

    thread_id: str
    run_id: str
    content: Content | None
    decisions: Mapping[str, Decision]


def read_run_input(body: object) -> RunInput:
    """Read a ``RunAgentInput``; ParseError saying what is wrong with it."""
    if not isinstance(body, dict):
        raise ParseError("the request body must be a JSON object (a RunAgentInput)")
    thread_id, run_id = body.get("threadId"), body.get("runId")
    if not isinstance(thread_id, str) or not thread_id:
        raise ParseError("'threadId' must be a non-empty string")
    if not isinstance(run_id, str) or not run_id:
        raise ParseError("'runId' must be a non-empty string")
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise ParseError("'messages' must be a list")
    resume = body.get("resume")
    if resume:
        return RunInput(thread_id, run_id, None, _decisions(resume))
    last = messages[-1] if messages else None
    if not isinstance(last, dict) or last.get("role") != "user":
        raise ParseError("the last message must be the user's (or 'resume' must answer interrupts)")
    return RunInput(thread_id, run_id, _content(last.get("content")), {})


def _content(content: object) -> Content:
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise ParseError("a user message's 'content' must be a string or a list of parts")
    pieces: list[str | MediaPart] = []
    for index, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            pieces.append(str(part.get("text", "")))
        elif kind in ("image", "audio", "document"):
            pieces.append(_media(part, f"the last user message's part {index} ({kind})"))
        elif kind is not None:
            raise ParseError(
                f"the last user message's part {index} is {kind!r}, which no model here takes"
            )
    return user_content(pieces, empty="the last user message has no text and no media")


def _media(part: JsonObject, where: str) -> MediaPart:
    source = part.get("source")
    if not isinstance(source, dict) or source.get("type") not in ("data", "url"):
        raise ParseError(f"{where} needs a 'data' or 'url' source")
    media_type, value = source.get("mimeType"), source.get("value")
    if source["type"] == "url":
        return read_part(media_type, value, where=where)
    if not isinstance(media_type, str) or not isinstance(value, str):
        raise ParseError(f"{where}: a 'data' source needs its base64 'value' and 'mimeType'")
    try:
        return media_part(media_type, data=decode_base64(value, what=where))
    except (ConfigError, PartError) as err:
        raise ParseError(f"{where}: {err}") from err


def _decisions(resume: object) -> dict[str, Decision]:
    if not isinstance(resume, list):
        raise ParseError("'resume' must be a list of resume entries")
    decisions = {}
    for entry in resume:
        if not isinstance(entry, dict) or not isinstance(entry.get("interruptId"), str):
            raise ParseError("each 'resume' entry needs an 'interruptId' string")
        status = entry.get("status")
        payload = entry.get("payload")
        if status == "cancelled":
            decision = Decision.deny(DENIED_BY_USER)
        elif status == "resolved":
            if not isinstance(payload, dict) or not isinstance(payload.get("approved"), bool):
                raise ParseError("a resolved approval interrupt needs payload.approved (a boolean)")
            reason = payload.get("reason")
            decision = (
                Decision.approve()
                if payload["approved"]
                else Decision.deny(reason if isinstance(reason, str) and reason else DENIED_BY_USER)
            )
        else:
            raise ParseError(
                f"a resume entry's 'status' must be 'resolved' or 'cancelled', not {status!r}"
            )
        decisions[entry["interruptId"]] = decision
    return decisions


class AguiStream:
    """Maps one run's events to AG-UI events (a :class:`~.stream.FrameMapper`)."""

    def __init__(self, *, thread_id: str, run_id: str) -> None:
        self._thread, self._run = thread_id, run_id
        self._round = 0
        self._step: str | None = None
        self._round_over = False
        self._streamed = False
        self._text: str | None = None  # id of the open text message
        self._reasoning: str | None = None

    def begin(self) -> list[bytes]:
        return [sse({"type": "RUN_STARTED", "threadId": self._thread, "runId": self._run})]

    def event(self, event: WebEvent) -> list[bytes]:
        out: list[JsonObject] = []
        if isinstance(event, TokenDelta | ReasoningDelta | ToolCallStarted | AssistantTurn):
            self._open_step(out)
        if isinstance(event, TokenDelta):
            if event.text:
                self._close_reasoning(out)
                self._text_delta(out, event.text)
                self._streamed = True
        elif isinstance(event, ReasoningDelta):
            if event.text:
                self._close_text(out)
                self._reasoning_delta(out, event.text)
                self._streamed = True
        elif isinstance(event, AssistantTurn):
            self._assistant(out, event.message)
        elif isinstance(event, ToolCallRequested):
            call = event.call
            out.append(
                {
                    "type": "TOOL_CALL_START",
                    "toolCallId": call.id,
                    "toolCallName": call.name,
                    "parentMessageId": self._message_id(),
                }
            )
            out.append(
                {
                    "type": "TOOL_CALL_ARGS",
                    "toolCallId": call.id,
                    "delta": json.dumps(call.arguments),
                }
            )
            out.append({"type": "TOOL_CALL_END", "toolCallId": call.id})
        elif isinstance(event, ToolResultReady):
            message = event.message
            out.append(
                {
                    "type": "TOOL_CALL_RESULT",
                    "messageId": f"{self._run}-result-{message.tool_call_id}",
                    "toolCallId": message.tool_call_id,
                    "content": _result_content(message),
                    "role": "tool",
                }
            )
            self._round_over = True
        elif isinstance(event, FinalAnswer):
            self._close_all(out)
            finished = self._finished(event.message.usage)
            if event.message.content:
                finished["result"] = event.message.content
            out.append(finished)
        elif isinstance(event, TurnPaused):
            self._close_all(out)
            finished = self._finished(event.usage)
            finished["outcome"] = {
                "type": "interrupt",
                "interrupts": [_interrupt(request) for request in event.requests],
            }
            out.append(finished)
        elif isinstance(event, TurnFailed):
            self._close_all(out)
            out.append({"type": "RUN_ERROR", "message": event.message, "code": event.code})
        return [sse(item) for item in out]

    def end(self) -> list[bytes]:
        return []

    def _message_id(self) -> str:
        return f"{self._run}-{self._round}"

    def _open_step(self, out: list[JsonObject]) -> None:
        if self._step is not None and not self._round_over:
            return
        self._close_all(out)
        self._round += 1
        self._step = f"round {self._round}"
        self._round_over = self._streamed = False
        out.append({"type": "STEP_STARTED", "stepName": self._step})

    def _text_delta(self, out: list[JsonObject], text: str) -> None:
        if self._text is None:
            self._text = self._message_id()
            out.append({"type": "TEXT_MESSAGE_START", "messageId": self._text, "role": "assistant"})
        out.append({"type": "TEXT_MESSAGE_CONTENT", "messageId": self._text, "delta": text})

    def _reasoning_delta(self, out: list[JsonObject], text: str) -> None:
        if self._reasoning is None:
            self._reasoning = f"{self._message_id()}-reasoning"
            out.append({"type": "REASONING_START", "messageId": self._reasoning})
            out.append(
                {
                    "type": "REASONING_MESSAGE_START",
                    "messageId": self._reasoning,
                    "role": "reasoning",
                }
            )
        out.append(
            {"type": "REASONING_MESSAGE_CONTENT", "messageId": self._reasoning, "delta": text}
        )

    def _assistant(self, out: list[JsonObject], message: AssistantMessage) -> None:
        if not self._streamed:  # a reply that was not streamed: its parts, whole
            if message.reasoning:
                self._reasoning_delta(out, message.reasoning)
                self._close_reasoning(out)
            if message.content and not message.tool_calls:
                self._text_delta(out, message.content)
        self._close_text(out)
        self._close_reasoning(out)

    def _finished(self, usage: TokenUsage | None) -> JsonObject:
        usage = usage or TokenUsage()
        return {
            "type": "RUN_FINISHED",
            "threadId": self._thread,
            "runId": self._run,
            "usage": [
                {
                    "inputTokens": usage.prompt,
                    "outputTokens": usage.completion,
                    "totalTokens": usage.total,
                }
            ],
        }

    def _close_all(self, out: list[JsonObject]) -> None:
        self._close_text(out)
        self._close_reasoning(out)
        if self._step is not None:
            out.append({"type": "STEP_FINISHED", "stepName": self._step})
            self._step = None

    def _close_text(self, out: list[JsonObject]) -> None:
        if self._text is not None:
            out.append({"type": "TEXT_MESSAGE_END", "messageId": self._text})
            self._text = None

    def _close_reasoning(self, out: list[JsonObject]) -> None:
        if self._reasoning is not None:
            out.append({"type": "REASONING_MESSAGE_END", "messageId": self._reasoning})
            out.append({"type": "REASONING_END", "messageId": self._reasoning})
            self._reasoning = None


def _result_content(message: ToolMessage) -> str | list[JsonObject]:
    """A tool result's text, or its text then its media as AG-UI content parts."""
    text, media = tool_outcome(message).text, media_of(message)
    if not media:
        return text
    parts: list[JsonObject] = [{"type": "text", "text": text}] if text else []
    for part in media:
        source: JsonObject = (
            {"type": "url", "value": part.url, "mimeType": part.media_type}
            if part.data is None
            else {
                "type": "data",
                "value": base64.b64encode(part.data).decode("ascii"),
                "mimeType": part.media_type,
            }
        )
        parts.append({"type": part.kind, "source": source})
    return parts


def _interrupt(request: ApprovalRequest) -> JsonObject:
    return {
        "id": request.call_id,
        "reason": "tool_approval",
        "message": f"{request.tool_name} needs approval",
        "toolCallId": request.call_id,
        "metadata": {"toolName": request.tool_name, "arguments": request.arguments},
    }
