"""The rounds of one turn: ask the model, record its answer, run its tool calls, repeat.

One loop implementation, a generator (seed §15.2): :meth:`Agent.stream`
returns it and :meth:`Agent.send` drains it. Each round snapshots the memory
under the composed system prompt, asks the LLM (streamed or not), records the
assistant message, asks about the calls that need approval
(:mod:`~agent_smith.agent.approval_gate`), runs its tool calls in parallel on
the runtime's pool for the agent's depth, records the results in
``tool_calls`` order, and goes
round again until the model answers without tool calls, a tool signals done,
or a stop condition fires (:class:`~agent_smith.agent.config.AgentConfig`,
checked by :class:`~agent_smith.agent.turn.Turn`). A reply the provider paused
while its own tools ran (``pause_turn``) is recorded and the model asked again
to go on.

The history stays consistent whatever ends a turn (cancellation, a stop
condition, an error, a caller that stops iterating): :meth:`TurnLoop.settle`
gives every call recorded without its result a cancelled error result, so an
assistant turn with tool calls is always followed by one tool message per call.
The one exception is a turn paused for approval, whose last round waits for
its results until it resumes (the rule is in :mod:`~agent_smith.agent.paused`).
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from .._internal.closing import close_iterator
from ..base.cancellation import CancellationToken
from ..errors import AgentStopped, ContextOverflowError, ParseError
from ..llm.events import Finished, TokenDelta
from ..llm.request import LlmRequest, LlmResponse, SamplingParams
from ..llm.server_tools import PAUSED
from ..logs import invoke_hook
from ..messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage
from ..steps import current_steps
from ..tools.dispatch import cancelled_outcomes, dispatch_tool_calls
from ..tools.registry import ToolRegistry
from .approval_gate import decide_round, settle_abandoned
from .context_fit import ContextFit, request_room
from .context_gate import ContextGate
from .events import (
    AgentEvent,
    AssistantTurn,
    ContextCompacted,
    FinalAnswer,
    ToolCallRequested,
    ToolResultReady,
)
from .finish_check import CONTINUE_NOTE, MAX_FINISH_CHECKS, unfinished
from .grounding import grounding
from .guardrails import TurnGuardrails
from .output import TurnOutput, turn_output
from .reply_bounds import REPETITION, StreamBounds, reply_sampling
from .request import AgentRequest, refuse_unsendable
from .small_chat import SmallChat
from .small_model import small_request
from .text_tool_calls import CUT_NOTE, CUT_OFF_NOTE, WrittenCalls
from .turn import Turn, done_message

if TYPE_CHECKING:
    from .agent import Agent
    from .paused import ResumedRound, Resumption

log = logging.getLogger(__name__)


class TurnLoop:
    """Runs the rounds of one turn of ``agent`` under ``turn`` (see the module doc)."""

    __slots__ = ("_agent", "_fit", "_llm", "_question", "_repeated", "_sent", "_streamed", "_turn")

    def __init__(self, agent: Agent, turn: Turn) -> None:
        self._agent = agent
        self._turn = turn
        llm = agent._llm
        if agent.config.small_model:
            llm = SmallChat(llm, grounding=grounding(agent._tools.registry))
        self._llm = current_steps().model(llm)  # records or replays in a durable turn
        self._fit = ContextFit(agent.config.context_window, agent._llm)
        self._sent: LlmRequest | None = None  # the last request sent, for the results' room
        self._streamed = False  # the reply being read has yielded an event
        self._repeated: AgentStopped | None = None  # why the last reply was cut off
        self._question = ""  # the user's message, for a small model's answer note

    def run(self, request: AgentRequest, resume: Resumption | None = None) -> Iterator[AgentEvent]:
        """Yield the turn's events until its :class:`FinalAnswer`; raise what stops it.

        ``resume`` continues a paused turn instead of starting one with
        ``request``'s message: the paused round's calls run (as decided)
        before the loop goes on with the next LLM call.
        """
        agent, turn = self._agent, self._turn
        token = turn.source.token
        cap = agent.config.max_reply_tokens
        defaults: SamplingParams | None = getattr(agent._llm, "default_sampling", None)
        sampling = reply_sampling(request.sampling, cap, defaults)
        streaming = agent.config.stream if request.stream is None else request.stream
        output = turn_output(agent, request)
        model = agent._identity.model  # the price table's first name for each reply
        guards = TurnGuardrails(agent.guardrails, agent.name) if agent.guardrails else None
        if resume is not None:
            from .paused import resume_round  # loaded only when a turn resumes

            resumed = resume_round(agent, turn, resume)
            tools = output.tools(agent._tools.registry())
            answer = yield from self._act(resumed.calls, tools, output, resumed)
            if answer is not None:
                yield self._final(answer)
                return
        else:
            settle_abandoned(agent.memory, self.record)  # a pause nobody resumed
            refuse_unsendable(request.user_message, agent._llm)  # before the history holds it
            self.record(request.user_message)
            if guards is not None:
                yield from self._check_input(guards, request)
        self._question = request.user_message.text
        small = agent.config.small_model
        written = WrittenCalls(agent.config.text_tool_calls, self._question, small=small)
        gate = agent._context_gate
        checks = MAX_FINISH_CHECKS if agent.config.finish_check else 0
        while True:
            turn.begin_round()
            registry, prompt, llm_request = self._build(sampling, output)
            if gate is not None:
                compacted = self._compact_if_due(gate, llm_request, prompt, model)
                if compacted is not None:
                    yield compacted
                    registry, prompt, llm_request = self._build(sampling, output)
            log.debug("agent %s: round %d", agent.name, turn.iterations)
            built = llm_request
            llm_request, response = yield from self._ask(llm_request, streaming, token, written)
            usage = response.message.usage
            prompt_tokens = usage.prompt if usage is not None else None
            self._fit.observed(prompt_tokens, llm_request)
            if gate is not None:
                gate.observed(prompt_tokens, built, llm_request)
            token.raise_if_cancelled("agent turn")
            if guards is not None:
                yield from guards.finish_input()  # beside the first call: its verdicts
            if response.finish_reason == "length":
                log.warning(
                    "agent %s: the reply was cut off by its token cap (max_tokens=%s); raise "
                    "AgentConfig.max_reply_tokens, or the max_tokens the client or request sets",
                    agent.name,
                    llm_request.sampling.max_tokens or getattr(defaults, "max_tokens", None),
                )
            if response.finish_reason == PAUSED and not response.message.tool_calls:
                # The provider paused while its own tools ran: what it said so far is part
                # of the answer, and sending the history back lets it go on.
                turn.add_reply_usage(response.message.usage, model, response.model)
                self.record(response.message)
                yield AssistantTurn(response.message)
                continue
            read = written.read(response, llm_request)
            if read is None:  # a written call after tool results: ask for words, once
                turn.add_reply_usage(response.message.usage, model, response.model)
                self.record(written.note)
                continue
            if read.finish_reason == "length" and type(output) is TurnOutput:
                read = yield from _note_cut_off(read, streaming)
            if read.finish_reason == REPETITION:
                raise self._stop_repeating(response.message)
            message = output.read(read.message)
            turn.add_reply_usage(message.usage, model, response.model)
            blocked: Mapping[str, str] | None = None
            feedback = None
            if guards is not None:
                screened = guards.screen(message, final=output.fits())
                message, blocked, feedback = yield from screened
            calls = message.tool_calls
            guarded = output.guarded(calls)
            if guarded and turn.loops is not None:
                turn.loops.check(guarded)  # before the repeated calls run or enter history
            turn.pending = calls
            self.record(message)
            yield AssistantTurn(message, recovered_tool_calls=read is not response and bool(calls))
            if not calls:
                retry = output.rejection()
                if retry is not None:
                    self.record(retry.feedback)
                    yield retry
                    continue
                if feedback is not None:  # an output guardrail asks for another answer
                    self.record(feedback)
                    continue
                if checks and self._unfinished(llm_request, message, model):
                    checks -= 1
                    self.record(CONTINUE_NOTE)
                    continue
                yield self._final(message)
                return
            hooks = agent.hooks
            for call in calls:
                invoke_hook(hooks.on_tool_call, call, name="on_tool_call")
                yield ToolCallRequested(call)
            answer = yield from self._act(calls, registry, output, guards=guards, blocked=blocked)
            if answer is not None:
                yield self._final(answer)
                return

    def _build(
        self, sampling: SamplingParams, output: TurnOutput
    ) -> tuple[ToolRegistry, str, LlmRequest]:
        """This round's registry, system prompt and request, from the memory as it is now."""
        agent = self._agent
        registry = agent._tools.registry()
        prompt = agent.effective_system_prompt()
        llm_request = LlmRequest(
            tuple(agent.memory.snapshot(SystemMessage(prompt) if prompt else None)),
            registry.schemas(),
            sampling,
        )
        registry, llm_request = output.prepare(registry, llm_request)
        if agent.config.small_model:
            first = agent._tools.skill_tool_names()
            llm_request = small_request(llm_request, self._question, first=first)
        return registry, prompt, llm_request

    def _compact_if_due(
        self, gate: ContextGate, request: LlmRequest, prompt: str, model: str
    ) -> ContextCompacted | None:
        """Compact the history if ``request`` would pass the gate's share of the window."""
        agent = self._agent
        tokens = gate.tokens(agent.memory, prompt, request.tools)
        window = self._fit.window(ask=gate.worth_asking(tokens))
        if window is None:
            return None
        room = request_room(window, request.sampling.max_tokens)
        if not gate.due(tokens, room):
            return None
        ask = partial(self._turn.ask_aside, self._llm, model=model)
        count = getattr(agent._llm, "count_tokens", None)
        event = gate.compact(ask, count, agent.memory, request, prompt, tokens, window, room)
        if event is not None:
            if agent._session is not None:
                agent._session.record_compaction(event.summary, event.kept)
            invoke_hook(agent.hooks.on_context_compacted, event, name="on_context_compacted")
        return event

    def _unfinished(self, request: LlmRequest, answer: AssistantMessage, model: str) -> bool:
        """The finish check: whether the model says the task is not finished yet."""
        ask = partial(self._turn.ask_aside, self._llm, model=model)
        return unfinished(ask, request, answer)

    def _check_input(
        self, guards: TurnGuardrails, request: AgentRequest
    ) -> Generator[AgentEvent, None, None]:
        """The input guardrails: now, or started beside the first model call."""
        if not guards.beside_model:
            yield from guards.check_input(request.user_message)
            return
        agent = self._agent
        pool = agent.runtime.pool(agent.depth)
        guards.start_input(request.user_message, pool.submit, self._turn.stop_with)

    def _ask(
        self, request: LlmRequest, streaming: bool, token: CancellationToken, written: WrittenCalls
    ) -> Generator[AgentEvent, None, tuple[LlmRequest, LlmResponse]]:
        """The reply to ``request`` (trimmed to a known window), retried once trimmed on overflow.

        Returns the request that was answered with its reply.
        """
        fit = self._fit
        request = fit.before_sending(request)
        try:
            response = yield from self._reply(request, streaming, token, written)
        except ContextOverflowError as overflow:
            smaller = None if self._streamed else fit.after_overflow(request, overflow)
            if smaller is None:
                raise
            request = smaller
            response = yield from self._reply(request, streaming, token, written)
        return request, response

    def _reply(
        self, request: LlmRequest, streaming: bool, token: CancellationToken, written: WrittenCalls
    ) -> Generator[AgentEvent, None, LlmResponse]:
        self._sent = request
        self._streamed = False
        if streaming:
            return (yield from self._stream_reply(request, token, written))
        response = self._llm.complete(request, cancel=token)
        yield from response.server_tools  # what the provider ran itself, shown as a stream shows it
        return response

    def _act(
        self,
        calls: Sequence[ToolCall],
        registry: ToolRegistry,
        output: TurnOutput,
        resumed: ResumedRound | None = None,
        *,
        guards: TurnGuardrails | None = None,
        blocked: Mapping[str, str] | None = None,
    ) -> Generator[AgentEvent, None, AssistantMessage | None]:
        """Approve and run a round's calls and record their results; a done answer ends the turn."""
        agent, turn, hooks = self._agent, self._turn, self._agent.hooks
        verdict = yield from decide_round(agent, turn, calls, registry, resumed, blocked)
        meter = turn.tree.meter
        if meter is not None and verdict.runnable:
            meter.before_tool_calls(len(verdict.runnable))
        ran = dispatch_tool_calls(
            verdict.runnable,
            registry,
            runtime=agent.runtime,
            depth=agent.depth,
            cancel=turn.source.token,
            default_timeout=agent.config.default_tool_timeout,
            person_timeout=agent.config.person_timeout,
            max_result_bytes=agent.config.tool_result_max_bytes,
            agent=agent,
        )
        outcomes = verdict.outcomes(calls, ran, max_result_bytes=agent.config.tool_result_max_bytes)
        results = self._fitted([outcome.message for outcome in outcomes], calls)
        pages = agent._result_pages
        if pages is not None:  # a cut result keeps its whole text behind a handle
            results = [
                r if o.result.is_error else pages.page(r, o.result.content)
                for r, o in zip(results, outcomes, strict=True)
            ]
        for result in results:
            self.record(result)
            invoke_hook(hooks.on_tool_result, result, name="on_tool_result")
        turn.pending = ()
        for result in results:
            yield ToolResultReady(result)
        retry = output.rejected_call(outcomes)
        if retry is not None:
            yield retry
        done = done_message(outcomes)
        if done is not None:
            answer = output.answer(done, outcomes)
            feedback = None
            if guards is not None:
                answer, _, feedback = yield from guards.screen(answer, final=True)
            self.record(answer)
            if feedback is not None:  # an output guardrail asks for another answer
                self.record(feedback)
                return None
            yield AssistantTurn(answer)
            return answer
        if turn.failures is not None:
            note = turn.failures.check(results)
            if note is not None:
                log.info("agent %s: tool calls keep failing; steering the model", agent.name)
                self.record(note)
        return None

    def _fitted(self, results: list[ToolMessage], calls: Sequence[ToolCall]) -> list[ToolMessage]:
        """A round's results cut to the room the context window has left (see context_fit)."""
        sent = self._sent
        if sent is None:  # a resumed round: its history holds the calling turn
            return self._fit.cut_results(results, self._agent.memory.messages(), ())
        return self._fit.cut_results(
            results,
            sent.messages,
            calls,
            tools=sent.tools,
            reply_tokens=sent.sampling.max_tokens,
        )

    def settle(self) -> None:
        """Give every call recorded without its result a cancelled error result."""
        turn = self._turn
        if turn.pending:
            for outcome in cancelled_outcomes(turn.pending):
                self.record(outcome.message)
            turn.pending = ()

    def record(self, message: Message) -> None:
        """Append ``message`` to the agent's memory and its session; tell ``on_message``."""
        self._agent.memory.append(message)
        gate = self._agent._context_gate
        if gate is not None:
            gate.note(message)
        if self._agent._session is not None:
            self._agent._session.record(message)
        invoke_hook(self._agent.hooks.on_message, message, name="on_message")

    def _stream_reply(
        self, request: LlmRequest, token: CancellationToken, written: WrittenCalls
    ) -> Generator[AgentEvent, None, LlmResponse]:
        agent = self._agent
        on_stream_event = agent.hooks.on_stream_event
        bounds = StreamBounds(agent.name, guard=agent.config.repetition_guard)
        streamed = bounds.watch(self._llm.stream(request, cancel=token))
        events = written.stream(streamed, request)
        response = None  # the last Finished's: the stream's, or the reply cut at a call
        try:
            for event in events:
                self._streamed = True
                if type(event) is Finished:
                    response = event.response
                invoke_hook(on_stream_event, event, name="on_stream_event")
                yield event
        finally:
            close_iterator(events)  # closes the HTTP response if we stopped early
        if bounds.stopped is not None:
            self._repeated = bounds.stopped
        if response is None:
            raise ParseError("the LLM stream ended without a Finished event")
        return response

    def _stop_repeating(self, message: AssistantMessage) -> AgentStopped:
        """Record what came before the repeats; the stop that ends the turn."""
        if message.content:
            self.record(message)
        name = self._agent.name
        stop = self._repeated or AgentStopped(
            f"agent {name!r} stopped repeating", condition=REPETITION
        )
        log.warning("%s", stop)
        return stop

    def _final(self, message: AssistantMessage) -> FinalAnswer:
        return FinalAnswer(replace(message, usage=self._turn.usage))


def _note_cut_off(
    response: LlmResponse, streaming: bool
) -> Generator[AgentEvent, None, LlmResponse]:
    """A text answer the token cap cut off ends with :data:`CUT_OFF_NOTE`, shown and kept,
    so the user reads why it stops mid-sentence (a reply with calls is left as it is)."""
    message = response.message
    if message.tool_calls or not message.content.strip() or message.content == CUT_NOTE:
        return response  # a call, nothing, or a cut call that says so already
    if streaming:
        yield TokenDelta(CUT_OFF_NOTE)
    return replace(response, message=replace(message, content=message.content + CUT_OFF_NOTE))
