"""Durable approval waits: a waiting turn holds no thread; a decision from any process goes on.

A call that needs a person's decision, and that the caller's ``on_event`` did
not answer at once, pauses the turn — the agent's own pause
(:class:`~agent_smith.errors.ApprovalRequired`), which runs nothing of the
round. The run records what waits (the journal step :data:`WAITING`: the
agent, the user's message and the waiting calls) and ends: its workflow
finishes, and no thread, process or lock waits for the person.

A decision comes from any process with the database (:func:`decide`:
``DurableAgent.decide``, ``DurableTurns.decide``, ``agent-smith durable
approve``, the web app). It is recorded in the journal (step
``decision.<call id>``; the first decision about a call is the one that
counts) and enqueues the turn's next run on its agent's run queue
(:func:`runs_queue`): the workflow ``<turn id>/<call id>``, which only an
engine launched with that agent registered takes. That run goes through the
turn again from its record — recorded steps replay, decided calls are
answered from the journal — and goes on, or pauses again while calls of the
round are still undecided. The queue is partitioned
by turn with one run per partition at a time, across processes: two
decisions never run a turn twice at once, and a run that finds the turn
finished replays its answer.

A wait's deadline (``DurableAgent(approval_timeout=...)``) is a run enqueued
when the call first waits, delayed until then: a row in the database, not a
sleeping thread. When it comes, unless a decision came first, it records a
denial ("no decision before the deadline") and runs the turn on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dbos import DBOS, DBOSClient

from ..base.json_fields import JsonObject
from ..errors import DurableStateError
from .journal import Journal
from .records import decode_record

if TYPE_CHECKING:
    from ..agent.approvals import ApprovalRequest, ApprovalRequested

#: The journal key of the calls a paused turn waits on (and what its next run needs).
WAITING = "waiting"
#: The queues the runs that continue a turn go through (one per agent), partitioned by turn.
RUNS_QUEUE = "agent_smith.turn_runs"
#: The name of the workflow of a turn's later runs.
RUN_WORKFLOW = "agent_smith.durable_turn_run"
#: How often a launched engine looks for runs on its agents' run queues (seconds).
QUEUE_POLL = 0.25


def decision_key(call_id: str) -> str:
    """The journal key of the decision about ``call_id``."""
    return f"decision.{call_id}"


def runs_queue(agent: str) -> str:
    """The queue of the runs that continue the turns of agent ``agent``: only the engines
    with that agent registered take them."""
    return f"{RUNS_QUEUE}.{agent}"


def deadline_run_id(turn_id: str, call_id: str) -> str:
    """The id of the run that denies ``call_id`` at its wait's deadline."""
    return f"{turn_id}/deadline/{call_id}"


def register_runs_queue(agent: str) -> None:
    """Declare agent ``agent``'s run queue in the launched DBOS of this process (one run per
    turn at a time)."""
    DBOS.register_queue(runs_queue(agent), partition_concurrency=1, polling_interval_sec=QUEUE_POLL)


@dataclass(frozen=True)
class Waiting:
    """A paused turn: its agent, the user's message, the calls it waits on, its deadline."""

    agent: str
    message: str
    calls: list[JsonObject]
    timeout: float | None

    def record(self) -> str:
        return json.dumps(
            {
                "kind": "waiting",
                "agent": self.agent,
                "message": self.message,
                "calls": self.calls,
                "timeout": self.timeout,
            },
            ensure_ascii=False,
        )


def waiting_of(journal: Journal, turn_id: str) -> Waiting | None:
    """What turn ``turn_id`` waited on when it last paused (None: it never paused)."""
    entry = journal.entry(turn_id, WAITING)
    if entry is None or entry.record is None:
        return None
    data = decode_record(entry.record, "waiting", turn_id, WAITING)
    agent, message, calls, timeout = (data.get(k) for k in ("agent", "message", "calls", "timeout"))
    if (
        not isinstance(agent, str)
        or not isinstance(message, str)
        or not isinstance(calls, list)
        or not (timeout is None or isinstance(timeout, (int, float)))
    ):
        raise DurableStateError(
            f"durable turn {turn_id!r}: its waiting record is not one", turn_id=turn_id
        )
    return Waiting(agent, message, calls, timeout)


def waiting_calls(journal: Journal, turn_id: str) -> list[JsonObject]:
    """The calls of turn ``turn_id`` that wait for a decision now (any process)."""
    waiting = waiting_of(journal, turn_id)
    if waiting is None:
        return []
    return [
        c
        for c in waiting.calls
        if journal.entry(turn_id, decision_key(str(c.get("call_id")))) is None
    ]


def answer_recorded(journal: Journal, turn_id: str, event: ApprovalRequested) -> bool:
    """Answer ``event`` with the decision recorded about its call, if there is one."""
    entry = journal.entry(turn_id, decision_key(event.call.id))
    if entry is None or entry.record is None:
        return False
    data = decode_record(entry.record, "decision", turn_id, decision_key(event.call.id))
    if data.get("approved") is True:
        event.approve()
    else:
        reason = data.get("reason")
        event.deny(reason if isinstance(reason, str) and reason else "denied")
    return True


def pause(
    journal: Journal,
    client: DBOSClient,
    turn_id: str,
    waiting: Waiting,
) -> None:
    """Record that turn ``turn_id`` waits on ``waiting.calls``; enqueue their deadlines."""
    journal.done(turn_id, WAITING, waiting.record())
    if waiting.timeout is None:
        return
    reason = f"no decision before the deadline ({waiting.timeout:g} s)"
    for call in waiting.calls:
        call_id = str(call["call_id"])
        # Enqueued once per call (the id is the call's): a later pause keeps the first deadline.
        enqueue_run(client, turn_id, deadline_run_id(turn_id, call_id), waiting, (call_id, reason))


def waiting_calls_of(requests: tuple[ApprovalRequest, ...]) -> list[JsonObject]:
    """The published form of a pause's waiting calls."""
    return [
        {"call_id": r.call.id, "tool": r.call.name, "arguments": r.call.arguments} for r in requests
    ]


def decide(
    journal: Journal, client: DBOSClient, turn_id: str, call_id: str, decision: bool | str
) -> None:
    """Decide about ``call_id`` of turn ``turn_id`` (True runs it, False or a reason denies it)
    and enqueue the run that goes on with it.

    Raises :class:`~agent_smith.errors.DurableStateError` when the turn never
    waited on that call, or when it was decided otherwise already (the same
    decision again only makes sure the run that goes on is enqueued).
    """
    waiting = waiting_of(journal, turn_id)
    if waiting is None or call_id not in {str(c.get("call_id")) for c in waiting.calls}:
        raise DurableStateError(
            f"durable turn {turn_id!r}: no call {call_id!r} waits for a decision",
            turn_id=turn_id,
        )
    record = decision_record(decision)
    if not journal.first(turn_id, decision_key(call_id), record):
        entry = journal.entry(turn_id, decision_key(call_id))
        if entry is None or entry.record != record:
            raise DurableStateError(
                f"durable turn {turn_id!r}: call {call_id!r} was decided already "
                f"({entry.record if entry is not None else 'unknown'})",
                turn_id=turn_id,
            )
    enqueue_run(client, turn_id, f"{turn_id}/{call_id}", waiting, None)


def deny_at_deadline(journal: Journal, turn_id: str, call_id: str, reason: str) -> bool:
    """Deny ``call_id`` for ``reason`` unless it was decided; whether this did."""
    return journal.first(turn_id, decision_key(call_id), decision_record(reason))


def decision_record(decision: bool | str) -> str:
    message: JsonObject = {"kind": "decision", "approved": decision is True}
    if isinstance(decision, str):
        message["reason"] = decision
    return json.dumps(message, ensure_ascii=False)


def enqueue_run(
    client: DBOSClient,
    turn_id: str,
    run_id: str,
    waiting: Waiting,
    deadline: tuple[str, str] | None,
) -> None:
    """Enqueue run ``run_id`` of turn ``turn_id``; a ``deadline`` (call id, reason) delays it
    by the wait's timeout and denies that call when it runs, unless it was decided."""
    options: Any = {
        "queue_name": runs_queue(waiting.agent),
        "workflow_name": RUN_WORKFLOW,
        "workflow_id": run_id,
        "queue_partition_key": turn_id,
    }
    if deadline is not None and waiting.timeout is not None:
        options["delay_seconds"] = waiting.timeout
    call_id, reason = deadline or ("", "")
    client.enqueue(options, waiting.agent, turn_id, waiting.message, call_id, reason)
