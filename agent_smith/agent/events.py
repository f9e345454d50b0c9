"""What an agent tells its caller while it works: events and hooks.

:meth:`Agent.stream` yields the LLM's stream events (``TokenDelta``, ...)
interleaved with the agent events defined here. :class:`AgentHooks` receives
the same information as callbacks; every hook is invoked through
:func:`agent_smith.logs.invoke_hook`, so a hook that raises is logged and
ignored. Hooks run synchronously in the thread that runs the loop (MCP events:
in the MCP client's reader thread; sub-agent events: in the child's thread)
and should be quick.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import AgentSmithError
from ..llm.events import StreamEvent
from ..logs import invoke_hook
from ..messages import AssistantMessage, Message, ToolCall, ToolMessage
from .approvals import ApprovalRequested


@dataclass(frozen=True)
class ToolCallRequested:
    """The model asked for this tool call; it runs next (unless it waits for approval)."""

    call: ToolCall


@dataclass(frozen=True)
class ToolResultReady:
    """A tool call finished (or failed); ``message`` is now in the history."""

    message: ToolMessage


@dataclass(frozen=True)
class AssistantTurn:
    """A complete assistant message (text and/or tool calls) entered the history.

    ``recovered_tool_calls`` is True when the model wrote its tool calls as
    JSON text and the agent recovered them (``AgentConfig.text_tool_calls``;
    :mod:`agent_smith.agent.text_tool_calls`): the message then holds the
    calls with generated ids and empty content.
    """

    message: AssistantMessage
    recovered_tool_calls: bool = False


@dataclass(frozen=True)
class TextHeld:
    """A piece of the reply (``characters`` long) was written but is not shown: a tool call.

    Yielded in place of a :class:`~agent_smith.llm.events.TokenDelta` whose
    text is held back as a tool call written as text
    (:mod:`~agent_smith.agent.call_text`), so a consumer can tell the model
    is at work (``writing a tool call...``) without showing the call.
    """

    characters: int


@dataclass(frozen=True)
class FinalAnswer:
    """The turn is over; ``message.usage`` is the usage of the whole send."""

    message: AssistantMessage


def final_message(event: object) -> AssistantMessage | None:
    """The final answer's message if ``event`` is the :class:`FinalAnswer`, else None."""
    return event.message if type(event) is FinalAnswer else None


@dataclass(frozen=True)
class OutputRetry:
    """The reply did not fit the turn's ``output_type``; the model is asked again.

    ``attempt`` counts the failed replies so far (1 for the first),
    ``errors`` says what was wrong, ``raw`` is the reply's text (or the
    ``final_result`` call's arguments) and ``feedback`` the message that
    tells the model (a user message, or the ``final_result`` tool's error
    result), already in the history.
    """

    attempt: int
    errors: tuple[str, ...]
    raw: str
    feedback: Message


@dataclass(frozen=True)
class SubAgentEvent:
    """Something that happened in a descendant agent, tagged for a tree view.

    ``event`` is what the child's own hook would have received (a message, a
    tool call, a stream event, an MCP event or an error). ``name`` and
    ``depth`` say which kind of agent it happened in (depth 1 = a direct
    child). ``invocation`` identifies that one agent (``"<name>#<n>"``,
    unique in the process, so parallel invocations of one spec differ) and
    ``parent`` the agent that started it (``None``: the root). Events of
    grandchildren arrive already tagged with their own fields, so the
    ``parent`` links draw the tree.
    """

    name: str
    depth: int
    event: Any
    invocation: str = ""
    parent: str | None = None


GuardrailAction = Literal["allow", "trip", "feedback", "block", "rewrite"]
Stage = Literal["input", "output", "tool_call"]


@dataclass(frozen=True)
class GuardrailChecked:
    """Stream event: a guardrail's verdict (``stage``: input, output or tool_call).

    ``guardrail`` is the function's name, ``action`` its verdict, ``message``
    what it said, ``call_id`` the tool call's id for a tool-call guardrail.
    """

    stage: Stage
    guardrail: str
    action: GuardrailAction
    message: str = ""
    call_id: str | None = None


@dataclass(frozen=True)
class ContextCompacted:
    """The history was compacted before a request that would have filled the window.

    ``replaced`` older messages became one summary (``summary``, at the head
    of the history); ``kept`` newest messages stayed verbatim. ``tokens_before``
    and ``tokens_after`` are the request's size in tokens, before and after
    (``exact``: counted by the server, else estimated at ~4 characters a token);
    ``window`` the context window they are measured against.
    """

    replaced: int
    kept: int
    summary: str
    tokens_before: int
    tokens_after: int
    window: int
    exact: bool = False


AgentEvent = (
    StreamEvent
    | TextHeld
    | ToolCallRequested
    | ApprovalRequested
    | ToolResultReady
    | AssistantTurn
    | FinalAnswer
    | OutputRetry
    | GuardrailChecked
    | ContextCompacted
)


@dataclass
class AgentHooks:
    """Optional observer callbacks; any may be ``None``."""

    on_message: Callable[[Message], object] | None = None
    on_tool_call: Callable[[ToolCall], object] | None = None
    on_tool_result: Callable[[ToolMessage], object] | None = None
    on_stream_event: Callable[[StreamEvent], object] | None = None
    on_mcp_event: Callable[[Any], object] | None = None
    on_error: Callable[[AgentSmithError], object] | None = None
    on_subagent_event: Callable[[SubAgentEvent], object] | None = None
    on_context_compacted: Callable[[ContextCompacted], object] | None = None


NO_HOOKS = AgentHooks()


_invocation_numbers = itertools.count(1)


def new_invocation_id(name: str) -> str:
    """A process-unique id for one sub-agent invocation: ``"<name>#<n>"``."""
    return f"{name}#{next(_invocation_numbers)}"  # next() on a count is atomic


def forwarding_hooks(
    parent: AgentHooks,
    *,
    name: str,
    depth: int,
    invocation: str = "",
    parent_invocation: str | None = None,
) -> AgentHooks:
    """Hooks for a child agent that report everything to ``parent.on_subagent_event``.

    For framework use by sub-agent tools: the child's messages, tool calls,
    results, stream events, MCP events and errors arrive at the parent as
    ``SubAgentEvent(name, depth, event, invocation, parent_invocation)``; the
    child's own sub-agent events (grandchildren) are passed up unchanged.
    """
    sink = parent.on_subagent_event
    if sink is None:
        return NO_HOOKS

    def tag(event: object) -> None:
        tagged = SubAgentEvent(name, depth, event, invocation, parent_invocation)
        invoke_hook(sink, tagged, name="on_subagent_event")

    def pass_up(event: SubAgentEvent) -> None:
        invoke_hook(sink, event, name="on_subagent_event")

    return AgentHooks(tag, tag, tag, tag, tag, tag, pass_up, on_context_compacted=tag)
