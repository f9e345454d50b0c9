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
    from ..messages import TokenUsage
    from .grounding import Grounding


class SmallChat:
    """``llm`` asked for constrained choices, answering as a native tool-calling model.

    ``grounding`` (:func:`~agent_smith.agent.grounding.grounding`) says how
    a chosen call is made before it is shown: as chosen, with arguments
    dropped, or not at all (taken back, and the request asked again
    without tools, for words; the tokens of the reply taken back still count).
    """

    __slots__ = ("_grounding", "_llm")

    def __init__(self, llm: ChatModel, *, grounding: Grounding | None = None) -> None:
        self._llm = llm
        self._grounding = grounding

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
        response = chosen(response, f"call_{secrets.token_hex(12)}")
        grounded = self._ground(request, response)
        if isinstance(grounded, LlmResponse):
            return grounded
        return _spending(self._llm.complete(grounded, cancel=cancel), response.message.usage)

    def stream(
        self, request: LlmRequest, *, cancel: CancellationToken | None = None
    ) -> Iterator[StreamEvent]:
        sent = choice_request(request)
        if sent is None:
            return self._llm.stream(request, cancel=cancel)
        events = self._llm.stream(sent, cancel=cancel)
        if sent.sampling.response_format is None:
            return events
        if self._grounding is None:
            return choice_events(events)
        return self._grounded_events(request, events, cancel)

    def _grounded_events(
        self, request: LlmRequest, events: Iterator[StreamEvent], cancel: CancellationToken | None
    ) -> Iterator[StreamEvent]:
        """The events of a grounded choice: a call is held back until it is grounded."""
        held: list[StreamEvent] = []
        again: LlmRequest | None = None
        spent: TokenUsage | None = None
        choices = choice_events(events)
        try:
            for event in choices:
                if type(event) is ToolCallStarted or type(event) is ToolCallCompleted:
                    held.append(event)
                elif type(event) is not Finished:
                    yield event
                else:
                    grounded = self._ground(request, event.response)
                    if isinstance(grounded, LlmResponse):
                        yield from _made(held, grounded)
                        yield _finished(event, grounded, None)
                        return
                    spent, again = event.usage, grounded
                    break
        finally:
            close_iterator(choices)
        if again is None:
            return  # no Finished: the loop says so
        for event in self._llm.stream(again, cancel=cancel):  # words
            yield _finished(event, event.response, spent) if type(event) is Finished else event

    def _ground(self, request: LlmRequest, response: LlmResponse) -> LlmResponse | LlmRequest:
        """``response`` with its call as it is to be made, or ``request`` to ask again for
        words (measured on the 0.5B: asked again without the one tool, it went on to the
        next tool that might fit, ``read_file("data/capital.txt")`` after the calculator)."""
        calls = response.message.tool_calls
        if self._grounding is None or not calls:
            return response
        call = self._grounding(calls[0], request.messages)
        if call is calls[0]:
            return response
        if call is not None:
            return replace(response, message=replace(response.message, tool_calls=(call,)))
        return replace(request, tools=())


def _added(spent: TokenUsage | None, usage: TokenUsage | None) -> TokenUsage | None:
    if spent is None or usage is None:
        return usage or spent
    return spent + usage


def _spending(response: LlmResponse, spent: TokenUsage | None) -> LlmResponse:
    """``response`` with the usage of the choices taken back added to its own."""
    if spent is None:
        return response
    usage = _added(spent, response.message.usage)
    return replace(response, message=replace(response.message, usage=usage))


def _made(held: list[StreamEvent], response: LlmResponse) -> Iterator[StreamEvent]:
    """The call's held events, its arguments as ``response`` makes the call."""
    for event in held:
        if type(event) is ToolCallCompleted:
            yield ToolCallCompleted(event.index, response.message.tool_calls[0].arguments)
        else:
            yield event


def _finished(event: Finished, response: LlmResponse, spent: TokenUsage | None) -> Finished:
    """``event`` ending with ``response``, the usage of the replies taken back added."""
    if spent is None and response is event.response:
        return event
    usage = _added(spent, event.usage)
    return Finished(event.finish_reason, usage, _spending(response, spent))


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
