"""A durable turn's events as a DBOS stream, readable from any process and any offset.

The turn writes each agent-level event (a reply recorded, a call requested,
a result, a call waiting for approval, a guardrail verdict, a compaction, the
final answer) to the stream :data:`EVENTS` of its workflow as a JSON record
(:func:`event_record`). A reader — :meth:`DurableTurns.events
<agent_smith.durable.DurableTurns.events>`, in any process — gets every
record from the offset it asks for, then the rest as they are written, until
the ``final`` record. That record ends the stream: closing it too would cost
one more commit a turn, and DBOS's own reader stops when the workflow ends.
A run that pauses closes its stream (it has no ``final`` record).

The model's stream events (token deltas) are not written: a reply's text
arrives whole in its ``assistant`` record. Writing them would cost a database
write per token, and a turn recovered after a crash replays a recorded reply
in one piece, so the deltas it wrote before the crash could not be told
apart from those it writes after. The agent-level events are the same on
replay, so a recovered turn's stream goes on where it stopped, without gaps
or repeats (DBOS skips the writes it had recorded).

A turn that paused for a decision goes on in later runs, each a workflow of
its own (:mod:`~agent_smith.durable.waiting`) that replays the turn from its
start and so writes the same records again before the new ones. Each later
run notes itself in the journal (``run.1``, ``run.2``, ...) as it starts; a
reader at the end of one run's stream without a ``final`` record goes on with
the next run's stream after the records it has had already.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, Protocol

from dbos import DBOS

from ..agent.approvals import ApprovalRequested
from ..agent.events import (
    AgentEvent,
    AssistantTurn,
    ContextCompacted,
    FinalAnswer,
    GuardrailChecked,
    OutputRetry,
    ToolCallRequested,
    ToolResultReady,
)
from ..base.history_json import message_to_dict, tool_call_to_dict
from ..base.json_fields import JsonObject
from .journal import ANSWER, Entry, Journal
from .waiting import WAITING

#: The key of a durable turn's event stream.
EVENTS = "agent_smith.events"
#: How often a reader at the end of a paused run's stream looks for the next run (seconds).
NEXT_RUN_POLL = 0.1


def event_record(event: AgentEvent) -> JsonObject | None:
    """The JSON record of ``event`` in the durable stream; None for a model stream event."""
    if isinstance(event, AssistantTurn):
        return {"type": "assistant", "message": message_to_dict(event.message)}
    if isinstance(event, ToolCallRequested):
        return {"type": "tool_call", "call": tool_call_to_dict(event.call)}
    if isinstance(event, ToolResultReady):
        return {"type": "tool_result", "message": message_to_dict(event.message)}
    if isinstance(event, FinalAnswer):
        return {"type": "final", "message": message_to_dict(event.message)}
    if isinstance(event, ApprovalRequested):
        return {"type": "approval", "call": tool_call_to_dict(event.call)}
    if isinstance(event, GuardrailChecked):
        return {
            "type": "guardrail",
            "stage": event.stage,
            "guardrail": event.guardrail,
            "action": event.action,
            "message": event.message,
            "call_id": event.call_id,
        }
    if isinstance(event, ContextCompacted):
        return {"type": "compacted", "replaced": event.replaced, "kept": event.kept}
    if isinstance(event, OutputRetry):
        return {"type": "output_retry", "attempt": event.attempt, "errors": list(event.errors)}
    return None


def write_event(event: AgentEvent) -> None:
    """Append ``event``'s record to the turn's stream (in the turn's workflow thread)."""
    record = event_record(event)
    if record is not None:
        DBOS.write_stream(EVENTS, record)


def close_events() -> None:
    """End the stream of a run that paused: readers stop after its last record."""
    DBOS.close_stream(EVENTS)


def note_run(journal: Journal, turn_id: str, run_id: str, entries: dict[str, Entry]) -> None:
    """Note ``run_id`` as the next run of turn ``turn_id`` (not its first, nor noted yet)."""
    if run_id == turn_id:
        return
    runs = {e.record for k, e in entries.items() if k.startswith("run.")}
    if run_id in runs:  # a run recovered after a crash: noted the first time
        return
    number = len(runs) + 1
    while not journal.first(turn_id, f"run.{number}", run_id):  # one run at a time: rare
        number += 1


class StreamReader(Protocol):
    """What reads a stream: ``DBOS`` itself, or a ``DBOSClient``."""

    def read_stream(self, workflow_id: str, key: str, *, offset: int = 0) -> Iterator[Any]: ...


def read_events(
    reader: StreamReader, journal: Journal, turn_id: str, offset: int = 0
) -> Iterator[JsonObject]:
    """Turn ``turn_id``'s records from ``offset``, then live until the turn ends."""
    run_id, number, position = turn_id, 0, offset
    pause = threading.Event()
    while True:
        for record in reader.read_stream(run_id, EVENTS, offset=position):
            position += 1
            if isinstance(record, dict):
                yield record
                if record.get("type") == "final":
                    return
        number += 1
        while (entry := journal.entry(turn_id, f"run.{number}")) is None:
            if journal.entry(turn_id, WAITING) is None or journal.entry(turn_id, ANSWER):
                return  # it never paused, or that run ended it: no run comes after it
            pause.wait(NEXT_RUN_POLL)
        run_id = str(entry.record)
