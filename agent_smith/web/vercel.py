"""The Vercel AI SDK's UI message stream (what ``useChat`` reads), from an agent's events.

``POST /api/chat`` takes the body ``useChat``'s default transport sends
(``{"id": chat id, "messages": [UI messages], ...}``) and answers with the UI
message stream, version 1: server-sent events whose data are JSON chunks, the
header ``x-vercel-ai-ui-message-stream: v1``, ending with ``data: [DONE]``.

The session is the conversation's source of truth, so of the client's messages
only the last one counts: a user message (its text and ``file`` parts, in
order, are the new input: images, PDFs, text files and audio as ``data:`` or
http(s) URLs), or the assistant message whose tool parts the user answered with
``addToolApprovalResponse`` (state ``approval-responded``): those decisions
resume the paused turn.

A turn maps to one assistant UI message: ``start``, then per LLM round a step
(``start-step`` … ``finish-step``) holding reasoning parts, text parts and the
agent's tool calls as dynamic tool parts (``tool-input-start``,
``tool-input-available``, ``tool-approval-request`` whose ``approvalId`` is
the call id, then ``tool-output-available`` / ``tool-output-error`` /
``tool-output-denied``; the images, documents and audio of a result follow
as ``file`` chunks, ``data:`` URLs), then ``finish`` whose ``messageMetadata`` carries the
turn's token usage (and ``paused: true`` when calls wait for approval). An
error that ends the turn is an ``error`` chunk. A resumed turn continues the
client's last assistant message, so its ``start`` names no message id; it
confirms the decisions it got (``tool-approval-response``) before the rest.

:func:`ui_messages` turns a stored history into UI messages, for a page that
reloads a conversation.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..agent.approvals import ApprovalRequested
from ..agent.events import AssistantTurn, FinalAnswer, ToolCallRequested, ToolResultReady
from ..base.media_input import to_data_url
from ..base.parts import Content, MediaPart
from ..base.paused_turn import Decision, PausedTurn
from ..errors import ParseError
from ..llm.events import ReasoningDelta, ServerToolUsed, TokenDelta, ToolCallStarted
from ..messages import AssistantMessage, Message, TokenUsage, ToolCall, ToolMessage, UserMessage
from .media import media_of, read_part, user_content
from .stream import TurnFailed, TurnPaused, WebEvent, sse, tool_outcome

#: The response headers of a UI message stream (proxies must not buffer it).
HEADERS = (
    ("Content-Type", "text/event-stream"),
    ("Cache-Control", "no-cache"),
    ("x-vercel-ai-ui-message-stream", "v1"),
    ("X-Accel-Buffering", "no"),
)
DONE = b"data: [DONE]\n\n"
#: Why a call was denied when the user gave no reason.
DENIED_BY_USER = "denied by the user"

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class ChatInput:
    """What one ``POST /api/chat`` asks: a new user message, or decisions for waiting calls."""

    conversation: str
    content: Content | None
    decisions: Mapping[str, Decision]


def read_chat_request(body: object) -> ChatInput:
    """Read ``useChat``'s request body; ParseError saying what is wrong with it."""
    if not isinstance(body, dict):
        raise ParseError("the request body must be a JSON object")
    conversation = body.get("id")
    if not isinstance(conversation, str) or not conversation:
        raise ParseError("'id' (the chat id) must be a non-empty string")
    if body.get("trigger") == "regenerate-message":
        # The stored history already holds the reply; replaying the question would
        # duplicate it. Say so rather than answer twice.
        raise ParseError("regenerating a reply is not supported: send the message again")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ParseError("'messages' must be a non-empty list of UI messages")
    last = messages[-1]
    if not isinstance(last, dict) or not isinstance(last.get("parts"), list):
        raise ParseError("the last message must be an object with a 'parts' list")
    parts = [part for part in last["parts"] if isinstance(part, dict)]
    role = last.get("role")
    if role == "user":
        return ChatInput(conversation, _user_content(parts), {})
    if role == "assistant":
        decisions = _decisions(parts)
        if not decisions:
            raise ParseError("the last assistant message answers no approval request")
        return ChatInput(conversation, None, decisions)
    raise ParseError(f"the last message must come from the user or the assistant, not {role!r}")


def _user_content(parts: list[JsonObject]) -> Content:
    pieces: list[str | MediaPart] = []
    for index, part in enumerate(parts):
        if part.get("type") == "text":
            pieces.append(str(part.get("text", "")))
        elif part.get("type") == "file":
            where = f"the last user message's part {index} (a file)"
            pieces.append(
                read_part(
                    part.get("mediaType"), part.get("url"), where=where, name=part.get("filename")
                )
            )
    return user_content(pieces, empty="the last user message has no text and no file")


def _decisions(parts: list[JsonObject]) -> dict[str, Decision]:
    decisions = {}
    for part in parts:
        kind = part.get("type")
        is_tool = isinstance(kind, str) and (kind == "dynamic-tool" or kind.startswith("tool-"))
        if not is_tool or part.get("state") != "approval-responded":
            continue
        approval = part.get("approval")
        call_id = part.get("toolCallId")
        if not isinstance(approval, dict) or not isinstance(approval.get("approved"), bool):
            raise ParseError(
                "an 'approval-responded' tool part needs approval.approved (a boolean)"
            )
        if not isinstance(call_id, str):
            raise ParseError("an 'approval-responded' tool part needs its toolCallId")
        reason = approval.get("reason")
        decisions[call_id] = (
            Decision.approve()
            if approval["approved"]
            else Decision.deny(reason if isinstance(reason, str) and reason else DENIED_BY_USER)
        )
    return decisions


class UiMessageStream:
    """Maps one turn's events to UI message stream chunks (a :class:`~.stream.FrameMapper`).

    ``message_id`` names the new assistant message (None: the turn continues
    the client's last one); ``decisions`` (a resumed turn's) are confirmed
    first, as ``tool-approval-response`` chunks.
    """

    def __init__(
        self, *, message_id: str | None, decisions: Mapping[str, Decision] | None = None
    ) -> None:
        self._message_id = message_id
        self._decisions = dict(decisions or {})
        self._ids = itertools.count(1)
        self._in_step = False
        self._round_over = False  # tool results arrived: the next model output is a new step
        self._text: str | None = None  # id of the open text part
        self._reasoning: str | None = None
        self._streamed = False  # this round's reply came as deltas
        self._started: set[str] = set()  # tool calls whose input part exists

    def begin(self) -> list[bytes]:
        start: JsonObject = {"type": "start"}
        if self._message_id is not None:
            start["messageId"] = self._message_id
        frames = [sse(start)]
        for call_id, decision in self._decisions.items():
            answer: JsonObject = {
                "type": "tool-approval-response",
                "approvalId": call_id,
                "approved": decision.approved,
            }
            if not decision.approved:
                answer["reason"] = decision.reason
            frames.append(sse(answer))
        return frames

    def event(self, event: WebEvent) -> list[bytes]:
        out: list[JsonObject] = []
        if isinstance(
            event, TokenDelta | ReasoningDelta | ToolCallStarted | ServerToolUsed | AssistantTurn
        ):
            self._step(out)
        if isinstance(event, TokenDelta):
            if event.text:
                self._close_reasoning(out)
                if self._text is None:
                    self._text = f"text-{next(self._ids)}"
                    out.append({"type": "text-start", "id": self._text})
                out.append({"type": "text-delta", "id": self._text, "delta": event.text})
                self._streamed = True
        elif isinstance(event, ReasoningDelta):
            if event.text:
                self._close_text(out)
                if self._reasoning is None:
                    self._reasoning = f"reasoning-{next(self._ids)}"
                    out.append({"type": "reasoning-start", "id": self._reasoning})
                out.append({"type": "reasoning-delta", "id": self._reasoning, "delta": event.text})
                self._streamed = True
        elif isinstance(event, ToolCallStarted):
            self._close_text(out)
            self._close_reasoning(out)
            self._start_call(out, event.id, event.name)
        elif isinstance(event, ServerToolUsed):  # ran by the provider: input and output at once
            self._close_text(out)
            self._close_reasoning(out)
            self._start_call(out, event.id, event.name)
            out.extend(_provider_executed(event))
        elif isinstance(event, AssistantTurn):
            self._assistant(out, event.message)
        elif isinstance(event, ToolCallRequested):
            self._start_call(out, event.call.id, event.call.name)
            out.append(_input_available(event.call))
        elif isinstance(event, ApprovalRequested):
            call_id = event.request.call_id
            out.append(
                {"type": "tool-approval-request", "approvalId": call_id, "toolCallId": call_id}
            )
        elif isinstance(event, ToolResultReady):
            out.append(_tool_output(event.message))
            out.extend(_file(part) for part in media_of(event.message))
            self._round_over = True
        elif isinstance(event, FinalAnswer):
            self._finish(out, "stop", event.message.usage)
        elif isinstance(event, TurnPaused):
            self._finish(out, "tool-calls", event.usage, paused=True)
        elif isinstance(event, TurnFailed):
            self._close_text(out)
            self._close_reasoning(out)
            out.append({"type": "error", "errorText": event.message})
        return [sse(chunk) for chunk in out]

    def end(self) -> list[bytes]:
        return [DONE]

    def _step(self, out: list[JsonObject]) -> None:
        if self._in_step and not self._round_over:
            return
        if self._in_step:
            out.append({"type": "finish-step"})
        out.append({"type": "start-step"})
        self._in_step, self._round_over, self._streamed = True, False, False
        self._started.clear()

    def _assistant(self, out: list[JsonObject], message: AssistantMessage) -> None:
        if not self._streamed:  # a reply that was not streamed: its parts, whole
            if message.reasoning:
                rid = f"reasoning-{next(self._ids)}"
                out.append({"type": "reasoning-start", "id": rid})
                out.append({"type": "reasoning-delta", "id": rid, "delta": message.reasoning})
                out.append({"type": "reasoning-end", "id": rid})
            if message.content and not message.tool_calls:
                tid = f"text-{next(self._ids)}"
                out.append({"type": "text-start", "id": tid})
                out.append({"type": "text-delta", "id": tid, "delta": message.content})
                out.append({"type": "text-end", "id": tid})
        self._close_text(out)
        self._close_reasoning(out)

    def _start_call(self, out: list[JsonObject], call_id: str, name: str) -> None:
        if call_id not in self._started:
            self._started.add(call_id)
            out.append(
                {
                    "type": "tool-input-start",
                    "toolCallId": call_id,
                    "toolName": name,
                    "dynamic": True,
                }
            )

    def _finish(
        self, out: list[JsonObject], reason: str, usage: TokenUsage | None, *, paused: bool = False
    ) -> None:
        self._close_text(out)
        self._close_reasoning(out)
        if self._in_step:
            out.append({"type": "finish-step"})
            self._in_step = False
        metadata: JsonObject = {"usage": _usage(usage or TokenUsage())}
        if paused:
            metadata["paused"] = True
        out.append({"type": "finish", "finishReason": reason, "messageMetadata": metadata})

    def _close_text(self, out: list[JsonObject]) -> None:
        if self._text is not None:
            out.append({"type": "text-end", "id": self._text})
            self._text = None

    def _close_reasoning(self, out: list[JsonObject]) -> None:
        if self._reasoning is not None:
            out.append({"type": "reasoning-end", "id": self._reasoning})
            self._reasoning = None


def _input_available(call: ToolCall) -> JsonObject:
    return {
        "type": "tool-input-available",
        "toolCallId": call.id,
        "toolName": call.name,
        "input": call.arguments,
        "dynamic": True,
    }


def _provider_executed(used: ServerToolUsed) -> list[JsonObject]:
    """A tool the provider ran, as the SDK's provider-executed tool input and output."""
    call = ToolCall(used.id, used.name, used.arguments)
    output = {"type": "tool-output-available", "toolCallId": used.id, "output": list(used.results)}
    return [
        {**_input_available(call), "providerExecuted": True},
        {**output, "dynamic": True, "providerExecuted": True},
    ]


def _tool_output(message: ToolMessage) -> JsonObject:
    outcome = tool_outcome(message)
    if outcome.kind == "denied":
        return {"type": "tool-output-denied", "toolCallId": message.tool_call_id}
    if outcome.kind == "error":
        return {
            "type": "tool-output-error",
            "toolCallId": message.tool_call_id,
            "errorText": outcome.text,
        }
    return {
        "type": "tool-output-available",
        "toolCallId": message.tool_call_id,
        "output": outcome.text,
        "dynamic": True,
    }


def _file(part: MediaPart) -> JsonObject:
    """A part as a ``file`` chunk or UI part (the same shape, plus a file name if known)."""
    file: JsonObject = {"type": "file", "mediaType": part.media_type, "url": to_data_url(part)}
    if part.name:
        file["filename"] = part.name
    return file


def _usage(usage: TokenUsage) -> JsonObject:
    """The AI SDK's ``LanguageModelUsage`` (its optional counts only when the server gave them)."""
    counts: JsonObject = {
        "inputTokens": usage.prompt,
        "outputTokens": usage.completion,
        "totalTokens": usage.total,
    }
    if usage.reasoning:
        counts["reasoningTokens"] = usage.reasoning
    if usage.cache_read:
        counts["cachedInputTokens"] = usage.cache_read
    return counts


# -- a stored history as UI messages ------------------------------------------


def ui_messages(history: Sequence[Message], paused: PausedTurn | None = None) -> list[JsonObject]:
    """The conversation as ``useChat`` UI messages (ids ``m<index>``), for a page that reloads.

    Every assistant message and tool result after a user message form one
    assistant UI message, a step per model reply, with the replies' token
    usage in ``metadata.usage``; calls of ``paused`` that still wait are in
    state ``approval-requested``. A user message's files and a tool result's
    images, documents and audio are ``file`` parts (``data:`` URLs).
    """
    # Only the last message can wait (ids may repeat across turns with some servers).
    waiting = set(paused.waiting) if paused is not None else set()
    last = len(history) - 1
    out: list[JsonObject] = []
    current: JsonObject | None = None
    tools: dict[str, JsonObject] = {}
    for index, message in enumerate(history):
        if isinstance(message, UserMessage):
            current = None
            said = [{"type": "text", "text": message.text}] if message.text else []
            out.append(_ui("user", index, said + [_file(part) for part in media_of(message)]))
        elif isinstance(message, AssistantMessage):
            if current is None:
                current = _ui("assistant", index, [])
                current["metadata"] = {"usage": _usage(TokenUsage())}
                out.append(current)
            usage = current["metadata"]["usage"]
            for key, value in _usage(message.usage or TokenUsage()).items():
                usage[key] = usage.get(key, 0) + value
            parts = current["parts"]
            parts.append({"type": "step-start"})
            if message.reasoning:
                parts.append({"type": "reasoning", "text": message.reasoning, "state": "done"})
            if message.content and not message.tool_calls:
                parts.append({"type": "text", "text": message.content, "state": "done"})
            for call in message.tool_calls:
                part = _stored_call(call, index == last and call.id in waiting)
                tools[call.id] = part
                parts.append(part)
        elif isinstance(message, ToolMessage) and message.tool_call_id in tools:
            tools.pop(message.tool_call_id).update(_stored_result(message))
            if current is not None:
                current["parts"].extend(_file(part) for part in media_of(message))
    return out


def _ui(role: str, index: int, parts: list[JsonObject]) -> JsonObject:
    return {"id": f"m{index}", "role": role, "parts": parts}


def _stored_call(call: ToolCall, waiting: bool) -> JsonObject:
    part: JsonObject = {
        "type": "dynamic-tool",
        "toolName": call.name,
        "toolCallId": call.id,
        "state": "approval-requested" if waiting else "input-available",
        "input": call.arguments,
    }
    if waiting:
        part["approval"] = {"id": call.id}
    return part


def _stored_result(message: ToolMessage) -> JsonObject:
    outcome = tool_outcome(message)
    if outcome.kind == "denied":
        return {
            "state": "output-denied",
            "approval": {"id": message.tool_call_id, "approved": False},
        }
    if outcome.kind == "error":
        return {"state": "output-error", "errorText": outcome.text}
    return {"state": "output-available", "output": outcome.text}
