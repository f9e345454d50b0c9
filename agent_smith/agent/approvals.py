"""Approving tool calls: what the agent asks, what a person answers, and the event that asks.

A tool is *marked* with ``requires_approval`` — ``True``, or a predicate of
the call's parsed arguments — through ``@tool(requires_approval=...)``,
``ToolOptions(requires_approval=...)``, ``ServerConfig(require_approval=...)``
for MCP tools or ``SubAgentSpec(requires_approval=...)``. Before a round's
tool calls run, the agent asks about every marked call
(:mod:`agent_smith.agent.approval_gate`), in one of three ways:

* an *approver*: ``Agent(..., approver=fn)``; ``fn(request)`` runs on the
  loop's thread and returns ``True``/``False`` or a :class:`Decision`;
* without one, :meth:`Agent.stream` yields an :class:`ApprovalRequested`
  event per call; answer it with ``approve()``, ``deny(reason)`` or
  ``defer()`` before asking for the next event — an event left unanswered
  counts as denied (fail-safe);
* without one, :meth:`Agent.send` pauses the turn: it raises
  :class:`~agent_smith.errors.ApprovalRequired` with a
  :class:`~agent_smith.agent.paused.PausedTurn` to resume later (a
  deferred event pauses a stream the same way).

Approved calls and the round's unmarked calls then run together, in
parallel; a denied call never runs and the model reads an error result
``{"error": true, "denied": true, "message": "denied: <reason>"}``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..base.paused_turn import NEVER_CANCELLED, NOT_APPROVED, ApprovalRequest, Decision
from ..errors import ConfigError
from ..messages import ToolCall
from ..tools.dispatch import ToolOutcome, error_outcome

__all__ = [
    "NEVER_CANCELLED",
    "NOT_APPROVED",
    "ApprovalRequest",
    "ApprovalRequested",
    "Approver",
    "Decision",
    "DecisionLike",
    "Decisions",
    "as_decision",
    "denied_outcome",
]

#: What callers may give as an answer: ``True`` (approve), ``False`` or a reason (deny).
DecisionLike = bool | str | Decision
#: ``Agent.resume``'s answers: waiting call id -> its answer.
Decisions = Mapping[str, DecisionLike]


def as_decision(value: object, *, where: str) -> Decision:
    """``value`` (True, False, a reason string or a Decision) as a Decision; ConfigError if none."""
    if isinstance(value, Decision):
        return value if value.approved or value.reason else Decision.deny()
    if isinstance(value, bool):
        return Decision.approve() if value else Decision.deny()
    if isinstance(value, str):
        return Decision.deny(value)
    raise ConfigError(
        f"{where}: expected True, False, a reason string or a Decision, got {type(value).__name__}"
    )


def denied_outcome(
    call: ToolCall, reason: str, *, max_result_bytes: int | None = None
) -> ToolOutcome:
    """The error result a denied call gets instead of running: ``denied: <reason>``."""
    return error_outcome(call, f"denied: {reason}", max_result_bytes=max_result_bytes, denied=True)


#: ``Agent(approver=...)``: decides about one request, on the loop's thread.
Approver = Callable[[ApprovalRequest], "bool | Decision"]

_DEFERRED: Any = object()


class ApprovalRequested:
    """Stream event: ``request`` needs approval before the round's calls run.

    Answer before asking the stream for its next event: :meth:`approve`,
    :meth:`deny` or :meth:`defer` (pause the turn and decide later; the
    stream then raises :class:`~agent_smith.errors.ApprovalRequired`). An
    event left unanswered counts as denied. Answers may come from another
    thread, as long as they come before the next event is asked for; an
    answer after that raises ConfigError (it would not count).
    """

    __slots__ = ("_answer", "_settled", "request")

    def __init__(self, request: ApprovalRequest) -> None:
        self.request = request
        self._answer: Decision | None = None
        self._settled = False

    @property
    def call(self) -> ToolCall:
        return self.request.call

    @property
    def answered(self) -> bool:
        return self._answer is not None

    def approve(self) -> None:
        """Let the call run."""
        self._set(Decision.approve())

    def deny(self, reason: str = NOT_APPROVED) -> None:
        """Do not run the call; the model reads ``denied: <reason>``."""
        self._set(Decision.deny(reason))

    def defer(self) -> None:
        """Decide later: the turn pauses once the round's requests were shown."""
        self._set(_DEFERRED)

    def settle(self) -> Decision | None:
        """For the agent loop: the answer (unanswered: denied), or None when deferred."""
        self._settled = True
        answer = self._answer
        if answer is None:
            return Decision.deny("no answer to the approval request")
        return None if answer is _DEFERRED else answer

    def _set(self, answer: Decision) -> None:
        if self._settled:
            raise ConfigError(
                f"the approval request for call {self.request.call_id!r} was already settled; "
                "answer it before asking the stream for the next event"
            )
        self._answer = answer

    def __repr__(self) -> str:
        return f"ApprovalRequested({self.request.tool_name!r}, call_id={self.request.call_id!r})"
