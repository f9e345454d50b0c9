"""The approval step of a round: decide about the marked calls before any call runs.

:class:`~agent_smith.agent.loop.TurnLoop` calls :func:`decide_round` between
recording the assistant turn and dispatching its calls. It finds the calls
whose tool is marked ``requires_approval`` (a predicate is called with the
arguments; one that raises counts as "ask"), skipping calls the dispatcher
will refuse anyway (unknown tool, bad arguments: the model gets that error
instead). Then it asks, per :mod:`agent_smith.agent.approvals`:

* the agent's approver, once per call in ``tool_calls`` order, on this
  thread (a sub-agent uses its root's approver, so its requests carry their
  own agent name and depth); an approver that raises or returns something
  that is no answer denies the call (logged);
* else, for a sub-agent, nobody: a child runs inside a tool call and cannot
  wait for a later request, so its marked calls are denied;
* else it yields an :class:`ApprovalRequested` per call and reads the
  answers when the consumer asks for the next event (``send()`` defers them
  all; unanswered means denied).

If any call is deferred, the turn pauses (:func:`~agent_smith.agent.paused.pause`):
the round's calls stay recorded without results and nothing runs. Otherwise
the returned :class:`Verdict` lists the calls to dispatch (approved and
unmarked, together, in parallel) and the denied ones, which get error
results instead. A turn cancelled while it waited raises CancelledError and
runs nothing; the loop then gives every call a cancelled result.

:func:`settle_abandoned` runs before every new turn: a paused turn that was
never resumed gets denied results, so the history is whole again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import ConfigError
from ..memory import Memory
from ..messages import AssistantMessage, Message, ToolCall, ToolMessage
from ..observer import get_observer
from ..tools.base import Tool
from ..tools.dispatch import ToolOutcome, check_call
from ..tools.person_wait import waiting_for_person
from ..tools.registry import ToolRegistry
from .approvals import (
    ApprovalRequest,
    ApprovalRequested,
    Approver,
    Decision,
    as_decision,
    denied_outcome,
)
from .events import AgentEvent, FinalAnswer

if TYPE_CHECKING:
    from .agent import Agent
    from .approvals import Decisions
    from .paused import PausedTurn, ResumedRound, Resumption
    from .turn import Turn

log = logging.getLogger("agent_smith.agent")

#: The reason the calls of a paused turn nobody resumed are denied with.
ABANDONED = "the conversation went on without a decision"
#: Why a call is denied in ``mode="read"``.
READ_MODE = "the agent runs in read mode: only tools that only read may run"
#: Why a sub-agent's marked calls are denied when there is no approver to ask.
NO_APPROVER_BELOW_ROOT = (
    "a sub-agent cannot wait for a person; give the root agent an approver to allow this call"
)


@dataclass(frozen=True)
class Verdict:
    """A round after approval: the calls to dispatch, and the denied ones (by index)."""

    runnable: Sequence[ToolCall]
    denied: Mapping[int, str]

    def outcomes(
        self, calls: Sequence[ToolCall], ran: Sequence[ToolOutcome], *, max_result_bytes: int
    ) -> list[ToolOutcome]:
        """Each call's outcome in ``calls`` order: ``ran`` for the runnable, else its denial."""
        if not self.denied:
            return list(ran)
        results = iter(ran)
        return [
            denied_outcome(call, self.denied[i], max_result_bytes=max_result_bytes)
            if i in self.denied
            else next(results)
            for i, call in enumerate(calls)
        ]


def decide_round(
    agent: Agent,
    turn: Turn,
    calls: Sequence[ToolCall],
    registry: ToolRegistry,
    resumed: ResumedRound | None = None,
    refused: Mapping[str, str] | None = None,
) -> Generator[ApprovalRequested, None, Verdict]:
    """Ask about the round's marked calls (see the module doc); the verdict, or a pause.

    ``resumed``: the paused round being resumed, whose decided calls are not
    asked again and whose waiting calls are asked even if no longer marked.
    ``refused``: calls denied before anyone is asked (call id -> why; a guardrail's block).
    The agent's policy mode (``AgentConfig.mode``) applies first: ``"read"``
    denies every call of a tool not declared read-only, ``"yolo"`` asks about
    nothing (each marked call runs).
    """
    mode = agent.config.mode
    decided = resumed.decisions if resumed is not None else {}
    waiting = resumed.waiting if resumed is not None else frozenset()
    decisions: dict[int, Decision] = {}
    asking: list[tuple[int, ApprovalRequest]] = []
    token = turn.source.token
    for index, call in enumerate(calls):
        if refused and call.id in refused:
            decisions[index] = Decision(False, refused[call.id])
            continue
        if mode == "read" and _writes(call, registry):
            decisions[index] = Decision(False, READ_MODE)
            get_observer().on_approval(call, "denied", asked=False)
            continue
        tool = _marked(call, registry) if mode != "yolo" else None
        if tool is None and call.id not in waiting:
            continue
        decision = decided.get(call.id)
        if decision is not None:
            decisions[index] = decision
            get_observer().on_approval(
                call, "approved" if decision.approved else "denied", asked=False
            )
            continue
        description = tool.schema.description if tool is not None else ""
        asking.append((index, ApprovalRequest(call, description, agent.name, agent.depth, token)))
    if not asking and not decisions:
        return Verdict(calls, {})
    if asking:
        asked_at = time.monotonic()
        answers = yield from _ask(agent, [request for _, request in asking])
        waited = time.monotonic() - asked_at  # for an approver: how long the turn waited
        token.raise_if_cancelled("tool approval")
        deferred = []
        for (index, request), answer in zip(asking, answers, strict=True):
            if answer is None:
                deferred.append(request)
                get_observer().on_approval(request.call, "deferred", asked=True, waited=waited)
                continue
            decisions[index] = answer
            get_observer().on_approval(
                request.call,
                "approved" if answer.approved else "denied",
                asked=True,
                waited=waited,
            )
            log.info(
                "agent %s: call %s (%s) %s",
                agent.name,
                request.call_id,
                request.tool_name,
                "approved" if answer.approved else f"denied: {answer.reason}",
            )
        if deferred:
            from .paused import pause  # loaded only when a turn pauses

            known = {calls[i].id: d for i, d in decisions.items()}
            turn.pending = ()  # paused, not ended: the calls stay pending in the history
            raise pause(agent, turn, calls, deferred, known)
    return Verdict(
        [call for i, call in enumerate(calls) if i not in decisions or decisions[i].approved],
        {i: d.reason for i, d in decisions.items() if not d.approved},
    )


def settle_abandoned(memory: Memory, record: Callable[[Message], None]) -> None:
    """Before a new turn: deny the calls of a paused turn that was never resumed."""
    if not memory.size():
        return
    history = memory.messages()
    start = len(history)
    while start > 0 and isinstance(history[start - 1], ToolMessage):
        start -= 1
    caller = history[start - 1] if start > 0 else None
    if not isinstance(caller, AssistantMessage) or not caller.tool_calls:
        return
    answered = {m.tool_call_id for m in history[start:] if isinstance(m, ToolMessage)}
    for call in caller.tool_calls:
        if call.id not in answered:
            record(denied_outcome(call, ABANDONED).message)


def resumption(state: PausedTurn, decisions: Decisions) -> Resumption:
    """``Agent.resume``'s arguments, checked (ConfigError for a wrong type or an unknown id)."""
    from .paused import Resumption  # loaded only when a turn resumes

    return Resumption.of(state, decisions)


def drain(events: Iterator[AgentEvent]) -> AssistantMessage:
    """Run a turn to its end (``send``): calls nobody decided about pause it."""
    final: AssistantMessage | None = None
    for event in events:
        if type(event) is FinalAnswer:
            final = event.message
        elif type(event) is ApprovalRequested:
            event.defer()
    assert final is not None  # the loop only returns after a FinalAnswer
    return final


def _writes(call: ToolCall, registry: ToolRegistry) -> bool:
    """Whether ``call`` is to a known tool that is not declared read-only."""
    return call.name in registry and not registry.options(call.name).read_only


def _marked(call: ToolCall, registry: ToolRegistry) -> Tool | None:
    """The tool of ``call`` if the call needs approval and would run."""
    marker = registry.options(call.name).requires_approval
    if marker is False:
        return None
    tool, _problem = check_call(call, registry)
    if tool is None or marker is True:
        return tool
    try:
        needed = bool(marker(dict(call.arguments)))
    except Exception:  # a broken predicate asks rather than lets the call through
        log.warning("requires_approval of tool %r raised; asking", call.name, exc_info=True)
        needed = True
    return tool if needed else None


def _ask(
    agent: Agent, requests: list[ApprovalRequest]
) -> Generator[ApprovalRequested, None, list[Decision | None]]:
    approver = agent.approver
    if approver is not None:
        answers: list[Decision | None] = []
        for request in requests:
            if request.cancel.cancelled:
                break  # the caller raises CancelledError; nobody is asked again
            with waiting_for_person():  # a sub-agent's call: its parent's timeout stops
                answers.append(ask_approver(approver, request))
        return answers
    if agent.depth > 0:
        return [Decision.deny(NO_APPROVER_BELOW_ROOT) for _ in requests]
    events = [ApprovalRequested(request) for request in requests]
    yield from events
    return [event.settle() for event in events]


def ask_approver(approver: Approver, request: ApprovalRequest) -> Decision:
    """The approver's answer to ``request``; one that raises or gives no answer denies (logged)."""
    try:
        answer: object = approver(request)
    except Exception:
        log.warning("the approver raised for call %s; denied", request.call_id, exc_info=True)
        return Decision.deny("the approver failed")
    try:
        return as_decision(answer, where="approver")
    except ConfigError:
        log.warning("the approver returned %r for call %s; denied", answer, request.call_id)
        return Decision.deny("the approver gave no answer")
