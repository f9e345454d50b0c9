"""A small model behind its constrained choice: the agent sees native tool calls and words.

:class:`SmallChat` wraps the chat model of an agent whose
``AgentConfig(small_model=True)``: each request that offers tools goes out
as :func:`~agent_smith.agent.tool_choice.choice_request` shapes it (the
tools in the prompt, the reply a JSON choice), and the reply comes back
as if the model had made the call natively or answered in words
(:func:`~agent_smith.agent.tool_choice.read_choice`). The loop, the
history, the events and a durable turn's journal (which wraps this model)
are unchanged.

Streamed, the JSON is never shown: once the tool's name is written a
:class:`~agent_smith.llm.events.ToolCallStarted` says which tool is being
called, and its arguments follow as
:class:`~agent_smith.llm.events.ToolCallCompleted`; an answer's text is
streamed as :class:`~agent_smith.llm.events.TokenDelta` as it is decoded
from the JSON string. A reply that is no choice at all (a server that did
not apply the schema) is passed on as it came, for the agent's reading of
calls written as text (:mod:`~agent_smith.agent.text_tool_calls`).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from .._internal.closing import close_iterator
from ..llm.events import Finished, StreamEvent, TokenDelta, ToolCallCompleted, ToolCallStarted
from ..llm.request import LlmRequest, LlmResponse
from .text_tool_calls import CUT_NOTE
from .tool_choice import (
    ANSWER_TOOL,
    answer_so_far,
    choice_request,
    chosen_name,
    may_be_choice,
    read_choice,
)

if TYPE_CHECKING:
    from ..base.cancellation import CancellationToken
    from ..llm.model import ChatModel, ModelCapabilities


class SmallChat:
    """``llm`` asked for constrained choices, answering as a native tool-calling model."""

    __slots__ = ("_llm",)

    def __init__(self, llm: ChatModel) -> None:
        self._llm = llm

    @property
    def capabilities(self) -> ModelCapabilities:
        return self._llm.capabilities

    def complete(
        self, request: LlmRequest, *, cancel: CancellationToken | None = None
    ) -> LlmResponse:
        sent = choice_request(request)
        if sent is None:
            return self._llm.complete(request, cancel=cancel)
        response = self._llm.complete(sent, cancel=cancel)
        if sent.sampling.response_format is None:  # words, after tool results
            return response
        return chosen(response, f"call_{secrets.token_hex(12)}")

    def stream(
        self, request: LlmRequest, *, cancel: CancellationToken | None = None
    ) -> Iterator[StreamEvent]:
        sent = choice_request(request)
        if sent is None:
            return self._llm.stream(request, cancel=cancel)
        events = self._llm.stream(sent, cancel=cancel)
        if sent.sampling.response_format is None:
            return events
        return choice_events(events)


def chosen(response: LlmResponse, call_id: str) -> LlmResponse:
    """``response`` to a constrained request as a native reply: a call (``call_id``) or words.

    A reply that is no whole choice stays as it came, except one cut off by
    the token cap: its answer so far, or :data:`CUT_NOTE` for a cut call.
    """
    message = response.message
    if message.tool_calls:
        return response
    choice = read_choice(message.content)
    if choice is None:
        if response.finish_reason != "length" or chosen_name(message.content) is None:
            return response
        answer = answer_so_far(message.content)
        content = CUT_NOTE if answer is None else answer
        return replace(response, message=replace(message, content=content))
    if choice.call is None:
        return replace(response, message=replace(message, content=choice.answer))
    call = replace(choice.call, id=call_id)
    message = replace(message, content="", tool_calls=(call,))
    return replace(response, message=message, finish_reason="tool_calls")


def choice_events(events: Iterator[StreamEvent]) -> Iterator[StreamEvent]:
    """``events`` of a constrained reply as a native reply's (see the module doc)."""
    call_id = f"call_{secrets.token_hex(12)}"
    text: list[str] = []
    name: str | None = None
    shown = 0  # characters of the reply's content streamed so far
    passing = False  # no choice: the text goes on as it came
    try:
        for event in events:
            if type(event) is Finished:
                response = chosen(event.response, call_id)
                yield from _ending(response, name, shown)
                yield Finished(response.finish_reason, event.usage, response)
                return
            if type(event) is not TokenDelta:
                yield event
                continue
            if passing:
                shown += len(event.text)
                yield event
                continue
            text.append(event.text)
            so_far = "".join(text)
            if name is None:
                if not may_be_choice(so_far):
                    passing, shown = True, len(so_far)
                    yield TokenDelta(so_far)
                    continue
                name = chosen_name(so_far)
                if name is not None and name != ANSWER_TOOL:
                    yield ToolCallStarted(call_id, name, 0)
            if name == ANSWER_TOOL:
                answer = answer_so_far(so_far) or ""
                if len(answer) > shown:
                    yield TokenDelta(answer[shown:])
                    shown = len(answer)
    finally:
        close_iterator(events)


def _ending(response: LlmResponse, name: str | None, shown: int) -> Iterator[StreamEvent]:
    """What is left to say before ``response`` finishes a stream: the call, or the text unshown."""
    calls = response.message.tool_calls
    if calls:
        if name is None:  # its name came after its arguments
            yield ToolCallStarted(calls[0].id, calls[0].name, 0)
        yield ToolCallCompleted(0, calls[0].arguments)
        return
    rest = response.message.content[shown:]
    if rest:
        yield TokenDelta(rest)
