"""A paused turn's plain data: the approval requests it waits on and the decisions given.

These values cross layers: the agent makes them (:mod:`agent_smith.agent.approvals`,
:mod:`agent_smith.agent.paused`), :class:`~agent_smith.errors.ApprovalRequired`
carries them and a session stores them
(:class:`~agent_smith.sessions.binding.SessionBinding`). So they live here,
below all of those users, and depend only on messages, cancellation and errors.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .._internal import json_input
from ..errors import ParseError
from ..messages import TokenUsage, ToolCall
from .cancellation import CancellationSource, CancellationToken
from .history_json import tool_call_from_dict, tool_call_to_dict, usage_from_dict, usage_to_dict
from .json_fields import REQUIRED, JsonObject, expect_object, json_field

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
