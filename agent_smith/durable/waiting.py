"""Durable approval waits: a call waiting for a person's decision, as DBOS messages.

In a durable turn an :class:`~agent_smith.agent.approvals.ApprovalRequested`
event that nobody answered at once waits for a decision message on the turn's
workflow (:func:`await_decision`, a ``DBOS.recv`` in the turn's own thread, so
its place among the turn's DBOS operations comes from the call's position).
The waiting call is published as the workflow event :data:`WAITING`, read
by :func:`waiting_calls` from any process. The decision comes from any
process with :func:`send_decision` (``DurableAgent.decide``): DBOS keeps the
message until the turn receives it, and a turn recovered after a crash waits
again, or replays the decision it had already received.

A wait has an optional deadline (``DurableAgent(approval_timeout=...)``,
seconds, durable across restarts as DBOS's own timer): when it passes, the
call is denied and the model reads why.
"""

from __future__ import annotations

from typing import Any, Protocol

from dbos import DBOS

from ..agent.approvals import ApprovalRequested
from ..base.json_fields import JsonObject

#: The workflow event listing a turn's calls that wait for a decision.
WAITING = "agent_smith.waiting"
#: A wait without a deadline still gives DBOS a finite one: about three years.
_FOREVER = 1e8


def _topic(call_id: str) -> str:
    return f"agent_smith.approval.{call_id}"


def await_decision(event: ApprovalRequested, timeout: float | None) -> None:
    """Wait for the decision about ``event``'s call and answer the event with it."""
    call = event.call
    DBOS.set_event(WAITING, [{"call_id": call.id, "tool": call.name, "arguments": call.arguments}])
    deadline = timeout or _FOREVER
    message: Any = DBOS.recv(_topic(call.id), timeout_seconds=deadline)
    DBOS.set_event(WAITING, [])
    if message is None:
        event.deny(f"no decision before the deadline ({deadline:g} s)")
    elif isinstance(message, dict) and message.get("approved") is True:
        event.approve()
    else:
        reason = message.get("reason") if isinstance(message, dict) else None
        event.deny(reason if isinstance(reason, str) and reason else "denied")


class Messenger(Protocol):
    """What sends decisions and reads events: ``DBOS`` itself, or a ``DBOSClient``."""

    def send(self, destination_id: str, message: Any, topic: str | None = None) -> None: ...

    def get_event(self, workflow_id: str, key: str, timeout_seconds: float = 60) -> Any: ...


def send_decision(messenger: Messenger, turn_id: str, call_id: str, decision: bool | str) -> None:
    """Decide about ``call_id`` of turn ``turn_id``: True runs it, False or a reason denies it."""
    message: JsonObject = {"approved": decision is True}
    if isinstance(decision, str):
        message["reason"] = decision
    messenger.send(turn_id, message, _topic(call_id))


def waiting_calls(messenger: Messenger, turn_id: str) -> list[JsonObject]:
    """The calls of turn ``turn_id`` waiting for a decision now (any process)."""
    calls = messenger.get_event(turn_id, WAITING, timeout_seconds=0)
    return list(calls) if isinstance(calls, list) else []
