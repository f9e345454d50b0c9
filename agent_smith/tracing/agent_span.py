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

Tracing sits below the agent, so it reads the agent through
:class:`TracedAgent` (which :class:`~agent_smith.Agent` satisfies) and an
:class:`AgentIdentity` the agent builds once; it imports nothing of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from .._internal.closing import close_iterator
from ..errors import AgentBusyError, AgentStopped, ApprovalRequired
from .names import (
    AGENT_DEPTH,
    AGENT_ID,
    AGENT_NAME,
    APPROVAL_DECISION,
    APPROVAL_EVENT,
    COMPACTION_EVENT,
    COMPACTION_KEPT,
    COMPACTION_REPLACED,
    COMPACTION_TOKENS_AFTER,
    COMPACTION_TOKENS_BEFORE,
    CONVERSATION_ID,
    GUARDRAIL_ACTION,
    GUARDRAIL_EVENT,
    GUARDRAIL_NAME,
    GUARDRAIL_STAGE,
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
    USAGE_COST,
    USAGE_INPUT_TOKENS,
    USAGE_OUTPUT_TOKENS,
)
from .otel import add_event, api, tracer
from .span import Attributes, LiveSpan, model_provider

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer

    from ..messages import AssistantMessage, TokenUsage, ToolCall, UserMessage
    from ..runtime import Runtime

E = TypeVar("E")


@dataclass(frozen=True)
class AgentIdentity:
    """What names an agent on its spans, fixed when the agent is built.

    ``url`` and ``model`` are its LLM client's, ``invocation`` a sub-agent's
    id for the one tool call that runs it, ``conversation`` its session's id,
    ``provider`` the model's own provider name (``""``: told by the URL).
    """

    url: str = ""
    model: str = ""
    invocation: str | None = None
    conversation: str | None = None
    provider: str = ""

    @classmethod
    def of(cls, llm: object, invocation: str | None, conversation: str | None) -> AgentIdentity:
        """The identity of an agent on ``llm``: a chat model's capabilities, else its
        ``url`` and ``model`` if it has them."""
        known = getattr(llm, "capabilities", None)
        if known is not None:
            return cls(known.server_url, known.model, invocation, conversation, known.provider)
        return cls(getattr(llm, "url", ""), getattr(llm, "model", ""), invocation, conversation)


class TracedAgent(Protocol):
    """What the ``invoke_agent`` span reads of the agent running the turn."""

    @property
    def name(self) -> str: ...

    @property
    def depth(self) -> int: ...

    @property
    def runtime(self) -> Runtime: ...

    @property
    def usage(self) -> TokenUsage:
        """The usage of the agent's last turn (read once the turn ended)."""
        ...

    def effective_system_prompt(self) -> str: ...


def invoke_agent(
    agent: TracedAgent,
    identity: AgentIdentity,
    events: Iterator[E],
    message: UserMessage | None,
    *,
    answer: Callable[[E], AssistantMessage | None],
    stepwise: bool = True,
) -> Iterator[E]:
    """``events`` (a turn of ``agent``) traced as one span; ``events`` itself when off.

    ``message`` is the user's message that starts the turn (None for a resumed
    one); ``answer`` says which event carries the final answer (its message).
    ``stepwise`` attaches the span for each step only, as a caller's code runs
    between events; ``False`` (``send``, which drains the turn itself)
    attaches it once for the whole turn.
    """
    t = tracer()
    if t is None:
        return events
    return _traced(t, agent, identity, events, message, answer, stepwise)


def approval(call: ToolCall, decision: str) -> None:
    """Record an approval decision on the running turn's span.

    ``decision``: ``approved``, ``denied`` or ``deferred`` (nobody answered
    yet: the turn pauses).
    """
    add_event(
        APPROVAL_EVENT, {TOOL_NAME: call.name, TOOL_CALL_ID: call.id, APPROVAL_DECISION: decision}
    )


def guardrail_verdict(stage: str, name: str, action: str, call_id: str | None) -> None:
    """Record a guardrail's verdict on the running turn's span (``call_id``: a tool call's)."""
    attributes: Attributes = {
        GUARDRAIL_STAGE: stage,
        GUARDRAIL_NAME: name,
        GUARDRAIL_ACTION: action,
    }
    if call_id is not None:
        attributes[TOOL_CALL_ID] = call_id
    add_event(GUARDRAIL_EVENT, attributes)


def compaction_event(replaced: int, kept: int, tokens_before: int, tokens_after: int) -> None:
    """Record a compaction of the history on the running turn's span."""
    add_event(
        COMPACTION_EVENT,
        {
            COMPACTION_REPLACED: replaced,
            COMPACTION_KEPT: kept,
            COMPACTION_TOKENS_BEFORE: tokens_before,
            COMPACTION_TOKENS_AFTER: tokens_after,
        },
    )


def _traced(
    t: Tracer,
    agent: TracedAgent,
    identity: AgentIdentity,
    events: Iterator[E],
    message: UserMessage | None,
    answer: Callable[[E], AssistantMessage | None],
    stepwise: bool,
) -> Iterator[E]:
    otel = api()
    live = LiveSpan(
        t,
        f"{INVOKE_AGENT} {agent.name}",
        otel.SpanKind.INTERNAL,
        _started(agent, identity, message),
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
            final = answer(event) or final  # None until the final answer
            yield event
    except BaseException as err:
        failure = err
        raise
    finally:
        token = otel.attach(live.context)
        try:
            close_iterator(events)  # a caller that stopped early: the turn cleans up under its span
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


def _started(
    agent: TracedAgent, identity: AgentIdentity, message: UserMessage | None
) -> Attributes:
    """The span's attributes at its start: the agent's, and whether the turn resumes one."""
    attributes: Attributes = {
        OPERATION_NAME: INVOKE_AGENT,
        PROVIDER_NAME: model_provider(identity.provider, identity.url),
        AGENT_NAME: agent.name,
        AGENT_DEPTH: agent.depth,
    }
    if identity.model:
        attributes[REQUEST_MODEL] = identity.model
    if identity.invocation is not None:  # a sub-agent's id for this one call
        attributes[AGENT_ID] = identity.invocation
    if identity.conversation is not None:
        attributes[CONVERSATION_ID] = identity.conversation
    if message is None:
        attributes[RESUMED] = True
    return attributes


def _record_input(live: LiveSpan, agent: TracedAgent, message: UserMessage | None) -> None:
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
    attributes: Attributes = {
        USAGE_INPUT_TOKENS: usage.prompt,
        USAGE_OUTPUT_TOKENS: usage.completion,
    }
    if usage.cost is not None:
        attributes[USAGE_COST] = usage.cost
    live.set(attributes)
