"""Tool calls a model wrote as text: run as calls, never shown, and answered from their results.

Small models often answer a question that needs a tool by *writing* the call
instead of making it (the syntaxes, and which text is shown, are
:mod:`~agent_smith.agent.call_text`'s). One :class:`WrittenCalls` per turn
decides what a reply with written calls becomes:

* a reply to the user (the request's last message is not a tool result)
  whose text holds written calls, and no real ones, is recovered: its
  message gets the calls (ids ``call_<24 hex>``, a repeated copy once, in
  order), empty content and finish reason ``tool_calls``, so the history
  reads as if the model had made them natively; the agent's
  :class:`~agent_smith.agent.events.AssistantTurn` says
  ``recovered_tool_calls=True`` and a DEBUG line is logged. Text around the
  calls (often the result the model imagines) is dropped with them.
* a reply to tool results is an answer only in the words it shows. Measured
  on Qwen2.5-Coder-0.5B, after a result the model repeats the call, passes
  the result back as arguments, or lists every offered tool, turn after
  turn; none of that is run. If it shows no words (a written call, whole or
  cut off), or was stopped for repeating itself, then once per turn
  :data:`ANSWER_NOTE`, quoting the user's message up to its first blank line
  (measured: with the question quoted it answers "391"; a note without it
  was echoed), is added to the history and the model asked again; the next
  such reply is answered from the tool results themselves (their text, each
  cut to :data:`RESULT_CHARS`; failed calls left out, and if all failed a
  one-line :data:`FAILED_NOTE`), so the user reads the result, not the
  machinery. A small model (:mod:`~agent_smith.agent.small_model`) is sent
  the note with its follow-up request already, so its first failure is
  answered from the results; and its reply ends as soon as its first
  written call is whole (measured on Qwen2.5-Coder-0.5B: it goes on with
  more copies, other calls or the result it imagines, up to the token cap),
  so it runs one call a round and waits for no text it would not show.
* any other reply is recorded with the text the user was shown: written
  calls the agent does not run (after the note, say) are taken out; a
  reply that was nothing but a call cut off by the token cap says so in
  :data:`CUT_NOTE`.

On by default; ``AgentConfig(text_tool_calls=False)`` turns it all off
(every reply's text is shown and recorded as it came).

Streaming: :meth:`WrittenCalls.stream` passes a reply's text through
:class:`~agent_smith.agent.call_text.CallText`: a stream consumer sees the
visible text as :class:`~agent_smith.llm.events.TokenDelta`, and for each
piece held back (a call being written) a
:class:`~agent_smith.agent.events.TextHeld`, which says the model is at work
without showing the text.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import replace

from .._internal.closing import close_iterator
from .._internal.text import one_line
from ..llm.events import Finished, StreamEvent, TokenDelta
from ..llm.request import LlmRequest, LlmResponse
from ..messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from ..tools.base import ToolSchema
from .call_text import CallText, CallTextReading, read_call_text
from .events import TextHeld
from .reply_bounds import REPETITION

log = logging.getLogger(__name__)

#: What the agent says, once per turn, when a reply to tool results is no answer.
ANSWER_NOTE = "Using the tool results above, answer in plain words, without calling a tool: {}"
#: The answer recorded for a reply that was only a tool call cut off by the token cap.
CUT_NOTE = "(The reply was cut off by its token cap while the model wrote a tool call.)"
#: What ends a text answer the token cap cut off (shown and recorded; see ``agent/loop.py``).
CUT_OFF_NOTE = "\n\n(The reply was cut off by its token cap.)"
#: The answer made from a round of tool results that all failed (their names filled in).
FAILED_NOTE = "(No answer: the model's call to {} failed, and it wrote no answer.)"
#: The longest question the note quotes (a longer one is cut).
_QUESTION_CHARS = 500
#: The most of one tool result an answer made from the results holds, in characters.
RESULT_CHARS = 2000


class WrittenCalls:
    """One turn's reading of calls written as text (see the module doc)."""

    __slots__ = ("_enabled", "_note_due", "_question", "_small")

    def __init__(self, enabled: bool, question: str, *, small: bool = False) -> None:
        self._enabled = enabled
        self._question = question
        self._small = small
        self._note_due = not small  # a small model's requests carry the note already

    @property
    def note(self) -> UserMessage:
        """:data:`ANSWER_NOTE` quoting the user's question."""
        return answer_note(self._question)

    def stream(
        self, events: Iterator[StreamEvent], request: LlmRequest
    ) -> Iterator[StreamEvent | TextHeld]:
        """``events`` of the reply to ``request``, written calls held back (never shown)."""
        if not self._enabled or not request.tools:
            return events
        return visible_events(events, first_call_only=self._small)

    def read(self, response: LlmResponse, request: LlmRequest) -> LlmResponse | None:
        """``response`` to record (calls recovered, text as shown), or None: add :attr:`note`.

        After tool results, a reply that is no answer becomes an answer made from the results.
        """
        message = response.message
        if not self._enabled or not request.tools or message.tool_calls:
            return response
        reading = read_call_text(message.content)
        if not _answers_tools(request):
            recovered = _recovered(response, reading)
            if recovered is not None:
                return recovered
        elif response.finish_reason == REPETITION or not reading.visible.strip():
            if self._note_due:
                self._note_due = False
                return None
            log.debug("answering from the tool results: the model wrote no answer")
            return LlmResponse(AssistantMessage(results_answer(request.messages)), "stop")
        if not reading.hidden:
            return response
        content = reading.visible.strip() or (CUT_NOTE if reading.cut else "")
        return replace(response, message=replace(message, content=content))


def answer_note(question: str) -> UserMessage:
    """:data:`ANSWER_NOTE` quoting ``question`` up to its first blank line."""
    first = first_paragraph(question)
    return UserMessage(ANSWER_NOTE.format(one_line(first, _QUESTION_CHARS) or "my question above"))


def first_paragraph(text: str) -> str:
    """``text`` up to its first blank line: a question without a paragraph added (the demo's)."""
    return text.strip().split("\n\n", 1)[0]


def recover_tool_calls(response: LlmResponse, tools: Sequence[ToolSchema]) -> LlmResponse | None:
    """``response`` with the tool calls its text spells out, or None (see the module doc)."""
    if response.message.tool_calls or not tools:
        return None
    return _recovered(response, read_call_text(response.message.content))


def _recovered(response: LlmResponse, reading: CallTextReading) -> LlmResponse | None:
    if not reading.calls:
        return None
    calls = tuple(
        ToolCall(f"call_{secrets.token_hex(12)}", name, args) for name, args in reading.calls
    )
    log.debug(
        "recovered %d tool call(s) the model wrote as text: %s",
        len(calls),
        ", ".join(call.name for call in calls),
    )
    return LlmResponse(replace(response.message, content="", tool_calls=calls), "tool_calls")


def results_answer(messages: Sequence[Message]) -> str:
    """An answer made of the last round's tool results (each cut to :data:`RESULT_CHARS`).

    Failed calls are left out; when every call failed, :data:`FAILED_NOTE` names them.
    """
    results: list[ToolMessage] = []
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            results.append(message)
        elif results or not isinstance(message, UserMessage):  # the note may follow them
            break
    results.reverse()
    done = [result for result in results if not result.is_error]
    if not done:
        return FAILED_NOTE.format(", ".join(dict.fromkeys(r.name for r in results)) or "a tool")
    if len(done) == 1:
        return _cut(done[0].text)
    return "\n".join(f"{result.name}: {_cut(result.text)}" for result in done)


def _cut(text: str) -> str:
    text = text.strip()
    return text if len(text) <= RESULT_CHARS else text[:RESULT_CHARS].rstrip() + "…"


def _answers_tools(request: LlmRequest) -> bool:
    """Is the reply to ``request`` an answer to tool results (a result or the note is last)?"""
    messages = request.messages
    if not messages:
        return False
    last = messages[-1]
    if isinstance(last, UserMessage) and len(messages) > 1:
        return isinstance(messages[-2], ToolMessage) and last.text.startswith(
            ANSWER_NOTE.split("{", 1)[0]
        )
    return isinstance(last, ToolMessage)


def visible_events(
    events: Iterator[StreamEvent], *, first_call_only: bool = False
) -> Iterator[StreamEvent | TextHeld]:
    """``events`` with the reply's text as the user may see it (see the module doc).

    ``first_call_only`` (a small model) ends the reply as soon as its first
    written call is whole: a ``Finished`` with the text so far, finish
    reason ``stop`` and no usage. Closing this iterator, or ending early,
    closes ``events`` (llama-server stops generating when its client goes).
    """
    reader = CallText()
    text: list[str] = []
    try:
        for event in events:
            if type(event) is TokenDelta:
                text.append(event.text)
                shown = reader.feed(event.text)
                if shown:
                    yield TokenDelta(shown)
                else:
                    yield TextHeld(len(event.text))
                if first_call_only and reader.calls:
                    log.debug("a small model's first written call is whole: ending its reply")
                    cut = LlmResponse(AssistantMessage("".join(text)), "stop")
                    yield Finished("stop", None, cut)
                    return
                continue
            if type(event) is Finished:
                rest = reader.end()
                if rest:
                    yield TokenDelta(rest)
            yield event
    finally:
        close_iterator(events)
