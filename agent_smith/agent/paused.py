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

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

from .._internal import json_input
from ..errors import ApprovalRequired, ConfigError, ParseError, PausedTurnMismatch
from ..messages import (
    REQUIRED,
    AssistantMessage,
    TokenUsage,
    ToolCall,
    expect_object,
    json_field,
    usage_from_dict,
    usage_to_dict,
)
from .approvals import NEVER_CANCELLED, ApprovalRequest, Decision, Decisions, as_decision

if TYPE_CHECKING:
    from .agent import Agent
    from .turn import Turn


@dataclass(frozen=True)
class PausedTurn:
    """Where a paused turn stopped: plain data, JSON via :meth:`to_json` / :meth:`from_json`.

    ``call_ids`` are the paused round's calls (the history's last message),
    ``requests`` the calls still waiting for a decision, ``decisions`` the
    answers already given in that round. ``iterations`` and
    ``tree_iterations`` count the LLM calls made so far (by this agent, by its
    whole sub-agent tree), ``loop_repeats``, ``failed_rounds`` and ``steered``
    carry the loop guards on, and ``usage`` is the turn's usage so far.
    """

    agent: str
    call_ids: tuple[str, ...]
    requests: tuple[ApprovalRequest, ...]
    decisions: Mapping[str, Decision] = field(default_factory=dict)
    iterations: int = 1
    tree_iterations: int = 1
    usage: TokenUsage = field(default_factory=TokenUsage)
    loop_repeats: int = 0
    failed_rounds: int = 0
    steered: bool = False
    session: str = ""
    revision: int = 0
    seal: str = ""

    #: The version of the JSON form; from_json refuses others.
    VERSION: ClassVar[int] = 1

    @property
    def waiting(self) -> tuple[str, ...]:
        """Ids of the calls waiting for a decision."""
        return tuple(request.call_id for request in self.requests)

    def to_json(self) -> str:
        """The state as a JSON object (stable keys, ``"version": 1``)."""
        return json.dumps(self.wire(), ensure_ascii=False)

    def canonical(self) -> bytes:
        """The bytes a seal covers: the JSON form without the seal, keys sorted, compact."""
        wire = {**self.wire(), "session": self.session, "revision": self.revision}
        wire.pop("seal", None)
        return json.dumps(wire, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()

    def wire(self) -> dict[str, Any]:
        """The JSON object of :meth:`to_json` (a sealed state adds session, revision, seal)."""
        wire = {
            "version": self.VERSION,
            "agent": self.agent,
            "call_ids": list(self.call_ids),
            "requests": [request.to_dict() for request in self.requests],
            "decisions": {k: d.to_dict() for k, d in self.decisions.items()},
            "iterations": self.iterations,
            "tree_iterations": self.tree_iterations,
            "usage": usage_to_dict(self.usage),
            "loop_repeats": self.loop_repeats,
            "failed_rounds": self.failed_rounds,
            "steered": self.steered,
        }
        if self.seal:
            wire.update(session=self.session, revision=self.revision, seal=self.seal)
        return wire

    @classmethod
    def from_json(cls, text: str | bytes) -> PausedTurn:
        """Read a state written by :meth:`to_json`; ParseError if it is not one."""
        try:
            data = json_input.loads(text)
        except (ValueError, UnicodeDecodeError) as err:
            raise ParseError(f"paused turn is not valid JSON ({err})") from err
        where, what = "paused turn JSON", "paused turn"
        obj = expect_object(data, where)
        if obj.get("version") != cls.VERSION:
            raise ParseError(
                f"paused turn has version {obj.get('version')!r}; this agent_smith reads "
                f"version {cls.VERSION}"
            )

        def required(key: str, kind: type[Any]) -> Any:
            return json_field(obj, key, kind, REQUIRED, where, what)

        call_ids = required("call_ids", list)
        if not all(isinstance(i, str) for i in call_ids):
            raise ParseError("paused turn: 'call_ids' must be a list of strings")
        requests = required("requests", list)
        decisions = json_field(obj, "decisions", dict, {}, where, what)
        return cls(
            agent=required("agent", str),
            call_ids=tuple(call_ids),
            requests=tuple(
                ApprovalRequest.from_dict(r, f"{where}.requests[{i}]")
                for i, r in enumerate(requests)
            ),
            decisions={
                str(k): Decision.from_dict(d, f"{where}.decisions[{k!r}]")
                for k, d in decisions.items()
            },
            iterations=required("iterations", int),
            tree_iterations=required("tree_iterations", int),
            usage=usage_from_dict(required("usage", dict), f"{where}.usage"),
            loop_repeats=required("loop_repeats", int),
            failed_rounds=required("failed_rounds", int),
            steered=required("steered", bool),
            session=json_field(obj, "session", str, "", where, what),
            revision=json_field(obj, "revision", int, 0, where, what),
            seal=json_field(obj, "seal", str, "", where, what),
        )


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
