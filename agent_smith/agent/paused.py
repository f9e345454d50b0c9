"""A paused turn: plain data to store, checked against the history when the turn resumes.

When a round's calls wait for a person (``send()`` without an approver, or a
deferred :class:`~agent_smith.agent.approvals.ApprovalRequested`), the turn
pauses with :class:`~agent_smith.errors.ApprovalRequired`. Its ``state``, a
:class:`PausedTurn`, holds what the history does not: the agent's name, the
ids of the paused round's calls, the requests still waiting (and decisions
already given), the round counters and guard counts, and the usage so far. It
serialises to JSON (``to_json`` / ``from_json``, a versioned object), so the
turn can resume in another process. The history itself stays in the agent's
memory (save it with ``messages_to_json``).

The history while paused. DESIGN §11/§13 promise no assistant tool-call turn
without its results; a pause is the one deliberate, bounded exception:

* the paused round's assistant message is the *last* message of the history,
  with no results after it; nothing is sent to the server until the turn
  resumes (and every memory's snapshot passes through ``strip_orphans``,
  which would leave the incomplete group out anyway);
* ``TurnLoop.settle`` fills in cancelled results only for a turn that
  *ended* (cancelled, stopped, failed); a paused turn has not ended, so its
  calls stay pending — ``messages_to_json`` keeps them, ready to resume;
* :func:`resume_round` accepts a state only when the history still ends with
  exactly that message (same agent name, same call ids, and the waiting
  calls' names and arguments unchanged), when an agent with a session finds
  this very state stored with it (not resumed, abandoned or paused again
  since), and when an agent with an ``approval_key`` finds its seal valid
  (:mod:`~agent_smith.agent.sealing`); otherwise it raises
  :class:`~agent_smith.errors.PausedTurnMismatch` before anything is
  appended, so a stale, replayed, forged or foreign state cannot corrupt
  the history or run a call twice;
* a new ``send()`` instead of a resume abandons the pause:
  :func:`~agent_smith.agent.approval_gate.settle_abandoned` gives the
  pending calls denied results first, so the history is whole again (and
  the old state no longer matches it).

This module loads only when a turn pauses or resumes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..base.paused_turn import NEVER_CANCELLED, ApprovalRequest, Decision, PausedTurn
from ..errors import ApprovalRequired, ConfigError, PausedTurnMismatch
from ..messages import AssistantMessage, ToolCall
from .approvals import Decisions, as_decision

__all__ = ["PausedTurn", "ResumedRound", "Resumption", "pause", "resume_round"]

if TYPE_CHECKING:
    from .agent import Agent
    from .turn import Turn


@dataclass(frozen=True)
class Resumption:
    """What :meth:`Agent.resume` runs: a paused turn and decisions for its waiting calls."""

    state: PausedTurn
    decisions: Mapping[str, Decision]

    @classmethod
    def of(cls, state: object, decisions: Decisions) -> Resumption:
        """Check the arguments of ``resume``; ConfigError for a wrong type or an unknown id."""
        if not isinstance(state, PausedTurn):
            raise ConfigError(
                "resume needs the PausedTurn of ApprovalRequired.state "
                f"(PausedTurn.from_json reads a stored one), got {type(state).__name__}"
            )
        if not isinstance(decisions, Mapping):
            raise ConfigError("resume needs decisions as a mapping of call id to True/False/reason")
        waiting = state.waiting
        checked: dict[str, Decision] = {}
        for call_id, value in decisions.items():
            if call_id not in waiting:
                raise ConfigError(
                    f"no call {call_id!r} waits for approval in this paused turn "
                    f"(waiting: {', '.join(waiting) or 'none'})"
                )
            checked[call_id] = as_decision(value, where=f"decision for call {call_id!r}")
        return cls(state, checked)


@dataclass(frozen=True)
class ResumedRound:
    """The paused round, checked against the history: its calls and what is decided."""

    calls: tuple[ToolCall, ...]
    decisions: Mapping[str, Decision]
    waiting: frozenset[str]


def pause(
    agent: Agent,
    turn: Turn,
    calls: Sequence[ToolCall],
    waiting: Sequence[ApprovalRequest],
    decisions: Mapping[str, Decision],
) -> ApprovalRequired:
    """The ApprovalRequired that pauses ``turn`` with ``waiting`` undecided."""
    state = PausedTurn(
        agent=agent.name,
        call_ids=tuple(call.id for call in calls),
        requests=tuple(replace(request, cancel=NEVER_CANCELLED) for request in waiting),
        decisions=dict(decisions),
        iterations=turn.iterations,
        tree_iterations=turn.tree.iterations,
        usage=turn.usage,
        loop_repeats=turn.loops.repeats if turn.loops is not None else 0,
        failed_rounds=turn.failures.failed_rounds if turn.failures is not None else 0,
        steered=turn.failures.steered if turn.failures is not None else False,
    )
    key = agent.config.approval_key
    if key is not None:
        from .sealing import sealed  # loaded only when a key is set

        binding = agent._session
        session, revision = ("", 0) if binding is None else (binding.session_id, binding.revision)
        state = sealed(state, key, session=session, revision=revision)
    names = ", ".join(f"{r.tool_name} ({r.call_id})" for r in waiting)
    return ApprovalRequired(
        f"agent {agent.name!r} paused: {len(waiting)} tool call(s) need approval: {names}",
        state=state,
    )


def resume_round(agent: Agent, turn: Turn, resumption: Resumption) -> ResumedRound:
    """Check ``resumption`` against the history and put its counters back into ``turn``.

    Raises ConfigError, changing nothing, when the state is not this agent's
    or the history does not end with the paused round's calls.
    """
    state = resumption.state
    if state.agent != agent.name:
        raise PausedTurnMismatch(
            f"the paused turn belongs to agent {state.agent!r}, not {agent.name!r}"
        )
    binding = agent._session
    key = agent.config.approval_key
    if key is not None:
        from .sealing import check_seal  # loaded only when a key is set

        session = "" if binding is None else binding.session_id
        check_seal(state, key, agent=agent.name, session=session)
    if binding is not None and binding.paused_turn() != state:
        raise PausedTurnMismatch(
            f"agent {agent.name!r}: the paused turn is not the one stored with session "
            f"{binding.session_id!r} (it was resumed, abandoned or paused again since)"
        )
    history = agent.memory.messages()
    last = history[-1] if history else None
    if not isinstance(last, AssistantMessage) or (
        tuple(call.id for call in last.tool_calls) != state.call_ids
    ):
        raise PausedTurnMismatch(
            f"agent {agent.name!r}: the history does not end with the paused turn's tool calls "
            "(restore the history saved with the state; a paused turn resumes once)"
        )
    calls = {call.id: call for call in last.tool_calls}
    for request in state.requests:
        if calls.get(request.call_id) != request.call:
            raise PausedTurnMismatch(
                f"agent {agent.name!r}: call {request.call_id!r} in the history is not the "
                "call that waits for approval"
            )
    turn.iterations = state.iterations
    turn.add_usage(state.usage)
    if agent.depth == 0:  # a sub-agent shares its parent's tree, which counted already
        turn.tree.charge(state.tree_iterations)
    if turn.loops is not None:
        turn.loops.restore(last.tool_calls, state.loop_repeats)
    if turn.failures is not None:
        turn.failures.restore(state.failed_rounds, state.steered)
    turn.pending = last.tool_calls
    return ResumedRound(
        last.tool_calls, {**state.decisions, **resumption.decisions}, frozenset(state.waiting)
    )
