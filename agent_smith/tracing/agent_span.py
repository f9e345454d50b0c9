"""The ``invoke_agent {name}`` span around one turn (``send``, ``stream``, ``resume``).

A turn is a generator, so its span cannot simply be made current: the
caller's code runs between events. :func:`invoke_agent` wraps the turn's
events instead and attaches the span's context for each step the turn takes
(from one event to the next), detaching it before handing the event over;
``send``, which drains the turn itself, has it attached once for the turn.
Everything the turn does — LLM calls, tool dispatch, hooks — runs under the
span; the caller's code between events runs under its own context. The
parent is the caller's current span at the first step: a Flask request's,
or the ``execute_tool`` span of the tool call that runs a sub-agent.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..agent.events import FinalAnswer
from ..errors import AgentBusyError, AgentStopped, ApprovalRequired
from .names import (
    AGENT_DEPTH,
    AGENT_ID,
    AGENT_NAME,
    APPROVAL_DECISION,
    APPROVAL_EVENT,
    CONVERSATION_ID,
    INPUT_MESSAGES,
    INVOKE_AGENT,
    OPERATION_NAME,
    OUTPUT_MESSAGES,
    PAUSED,
    PROVIDER_NAME,
    REQUEST_MODEL,
    RESUMED,
    STOP_CONDITION,
    SYSTEM_INSTRUCTIONS,
    TOOL_CALL_ID,
    TOOL_NAME,
    USAGE_INPUT_TOKENS,
    USAGE_OUTPUT_TOKENS,
)
from .otel import add_event, api, tracer
from .span import Attributes, LiveSpan, model_provider

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer

    from ..agent.agent import Agent
    from ..agent.events import AgentEvent
    from ..messages import AssistantMessage, TokenUsage, ToolCall, UserMessage


def invoke_agent(
    agent: Agent,
    events: Iterator[AgentEvent],
    message: UserMessage | None,
    *,
    stepwise: bool = True,
) -> Iterator[AgentEvent]:
    """``events`` (a turn of ``agent``) traced as one span; ``events`` itself when off.

    ``message`` is the user's message that starts the turn (None for a resumed
    one). ``stepwise`` attaches the span for each step only, as a caller's
    code runs between events; ``False`` (``send``, which drains the turn
    itself) attaches it once for the whole turn.
    """
    t = tracer()
    if t is None:
        return events
    return _traced(t, agent, events, message, stepwise)


def approval(call: ToolCall, decision: str) -> None:
    """Record an approval decision on the running turn's span.

    ``decision``: ``approved``, ``denied`` or ``deferred`` (nobody answered
    yet: the turn pauses).
    """
    add_event(
        APPROVAL_EVENT, {TOOL_NAME: call.name, TOOL_CALL_ID: call.id, APPROVAL_DECISION: decision}
    )


def _traced(
    t: Tracer,
    agent: Agent,
    events: Iterator[AgentEvent],
    message: UserMessage | None,
    stepwise: bool,
) -> Iterator[AgentEvent]:
    otel = api()
    live = LiveSpan(
        t,
        f"{INVOKE_AGENT} {agent.name}",
        otel.SpanKind.INTERNAL,
        _started(agent, message),
        content=agent.runtime.trace_content,
        attach=False,
    )
    if live.content:
        _record_input(live, agent, message)
    final: AssistantMessage | None = None
    failure: BaseException | None = None
    held = None if stepwise else otel.attach(live.context)
    try:
        while True:
            token = otel.attach(live.context) if stepwise else None
            try:
                event = next(events)
            except StopIteration:
                break
            finally:
                if token is not None:
                    otel.detach(token)
            if type(event) is FinalAnswer:
                final = event.message
            yield event
    except BaseException as err:
        failure = err
        raise
    finally:
        token = otel.attach(live.context)
        try:
            close = getattr(events, "close", None)
            if close is not None:
                close()  # a caller that stopped early: the turn cleans up under its span
        finally:
            otel.detach(token)
            if held is not None:
                otel.detach(held)
            if final is not None:
                _record_output(live, final)
            elif not isinstance(failure, AgentBusyError):  # a busy agent's usage is another's
                _record_usage(live, agent.usage)
            if isinstance(failure, AgentStopped):
                live.set({STOP_CONDITION: failure.condition})
            if isinstance(failure, ApprovalRequired):  # a pause, not a failure
                live.set({PAUSED: True})
                failure = None
            live.exit(failure)


def _attributes(agent: Agent) -> Attributes:
    capabilities = agent.model.capabilities
    attributes: Attributes = {
        OPERATION_NAME: INVOKE_AGENT,
        PROVIDER_NAME: model_provider(capabilities.provider, capabilities.server_url),
        AGENT_NAME: agent.name,
        AGENT_DEPTH: agent.depth,
    }
    if capabilities.model:
        attributes[REQUEST_MODEL] = capabilities.model
    if agent._invocation is not None:  # a sub-agent's id for this one call
        attributes[AGENT_ID] = agent._invocation
    if agent._session is not None:
        attributes[CONVERSATION_ID] = agent._session.session.session_id
    return attributes


def _started(agent: Agent, message: UserMessage | None) -> Attributes:
    """The span's attributes at its start: the agent's, and whether the turn resumes one."""
    attributes = _attributes(agent)
    if message is None:
        attributes[RESUMED] = True
    return attributes


def _record_input(live: LiveSpan, agent: Agent, message: UserMessage | None) -> None:
    from ..messages import SystemMessage
    from . import content

    prompt = agent.effective_system_prompt()
    attributes: Attributes = {}
    if prompt:
        instructions = content.system_instructions([SystemMessage(prompt)])
        assert instructions is not None
        attributes[SYSTEM_INSTRUCTIONS] = instructions
    if message is not None:
        attributes[INPUT_MESSAGES] = content.input_messages([message])
    live.set(attributes)


def _record_output(live: LiveSpan, final: AssistantMessage) -> None:
    if final.usage is not None:
        _record_usage(live, final.usage)
    if live.content:
        from . import content

        live.set({OUTPUT_MESSAGES: content.output_messages(final, "stop")})


def _record_usage(live: LiveSpan, usage: TokenUsage) -> None:
    live.set({USAGE_INPUT_TOKENS: usage.prompt, USAGE_OUTPUT_TOKENS: usage.completion})
