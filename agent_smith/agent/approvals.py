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
from dataclasses import dataclass, field
from typing import Any

from ..cancellation import CancellationSource, CancellationToken
from ..errors import ConfigError
from ..messages import (
    REQUIRED,
    JsonObject,
    ToolCall,
    expect_object,
    json_field,
    tool_call_from_dict,
    tool_call_to_dict,
)
from ..tools.dispatch import ToolOutcome, error_outcome

#: The reason given when a call is denied without one.
NOT_APPROVED = "not approved"
#: A token that is never cancelled (requests read back from JSON carry it).
NEVER_CANCELLED = CancellationSource().token


@dataclass(frozen=True)
class Decision:
    """A person's answer about one call: run it, or deny it for ``reason``."""

    approved: bool
    reason: str = ""

    @classmethod
    def approve(cls) -> Decision:
        return cls(True)

    @classmethod
    def deny(cls, reason: str = NOT_APPROVED) -> Decision:
        return cls(False, reason or NOT_APPROVED)

    def to_dict(self) -> JsonObject:
        return {"approved": self.approved, "reason": self.reason}

    @classmethod
    def from_dict(cls, data: object, where: str = "decision") -> Decision:
        """Read a decision written by :meth:`to_dict`; ParseError naming ``where``."""
        obj = expect_object(data, where)
        return cls(
            json_field(obj, "approved", bool, REQUIRED, where, "decision"),
            json_field(obj, "reason", str, "", where, "decision"),
        )


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


@dataclass(frozen=True)
class ApprovalRequest:
    """One call waiting for approval: the call, its tool's description, who asks.

    ``agent`` and ``depth`` name the asking agent (depth 0: the root; a
    sub-agent's requests reach the root's approver with their own). ``cancel``
    is the turn's cancellation token: an approver that waits for a person
    should also wake on it (``request.cancel.on_cancel(...)``) so that
    ``agent.cancel()`` stops the turn at once.
    """

    call: ToolCall
    description: str = ""
    agent: str = "agent"
    depth: int = 0
    cancel: CancellationToken = field(default=NEVER_CANCELLED, compare=False, repr=False)

    @property
    def call_id(self) -> str:
        return self.call.id

    @property
    def tool_name(self) -> str:
        return self.call.name

    @property
    def arguments(self) -> JsonObject:
        """The call's parsed arguments (do not change them)."""
        return self.call.arguments

    def to_dict(self) -> JsonObject:
        return {
            "call": tool_call_to_dict(self.call),
            "description": self.description,
            "agent": self.agent,
            "depth": self.depth,
        }

    @classmethod
    def from_dict(cls, data: object, where: str = "approval request") -> ApprovalRequest:
        """Read a request written by :meth:`to_dict`; ParseError naming ``where``."""
        obj = expect_object(data, where)
        what = "approval request"
        return cls(
            tool_call_from_dict(obj.get("call"), f"{where}.call"),
            json_field(obj, "description", str, "", where, what),
            json_field(obj, "agent", str, REQUIRED, where, what),
            json_field(obj, "depth", int, REQUIRED, where, what),
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
