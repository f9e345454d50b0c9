"""Operating durable turns: list, inspect, cancel, resume and decide, from any process.

:class:`DurableTurns` is an operator's view of a durable database: a DBOS
client (it runs no workflow and recovers nothing, so an operator's process
never takes a turn over) and the step journal. It sees and steers every turn
on that database, wherever it runs; ``agent-smith durable`` is built on it.

Cancelling marks the turn's running workflow cancelled — its first run's,
or the run after a decision (:mod:`~agent_smith.durable.waiting`), with the
runs still enqueued and the deadlines of its waits; the process running it
notices within :data:`CANCEL_POLL` seconds (:class:`CancelWatch`) and cancels
the agent, so the running step ends through the agent's own cancellation
(the turn raises :class:`~agent_smith.errors.CancelledError`). Resuming a
cancelled turn (or one that failed) has a launched engine run it again from
its record: recorded steps replay, the rest run (a cancelled deadline stays
cancelled).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from dbos import DBOS, DBOSClient, WorkflowStatus
from dbos._serialization import DBOSPortableJSONSerializer

from ..agent.agent import Agent
from ..base.json_fields import JsonObject
from ..errors import DurableStateError
from .engine import DEFAULT_DATABASE, TURN_WORKFLOW, database_url, open_database
from .event_stream import read_events
from .journal import ANSWER, DONE, Entry, Journal, database_errors
from .waiting import RUN_WORKFLOW, WAITING, deadline_run_id, decide, waiting_calls

#: How often a running turn checks whether it was cancelled elsewhere (seconds).
CANCEL_POLL = 0.5
#: The status of a turn that waits for a decision (or whose run after one has not ended).
WAITING_STATUS = "WAITING"
#: The statuses of a run that stopped before its end: resumable.
_STOPPED = ["CANCELLED", "ERROR", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"]


@dataclass(frozen=True)
class TurnInfo:
    """One durable turn as DBOS knows it.

    ``status`` is DBOS's for the turn's first run: ``PENDING`` (running, or
    waiting for recovery), ``ENQUEUED``, ``SUCCESS``, ``ERROR``, ``CANCELLED``,
    ...; or ``WAITING`` while the turn waits for a decision (until its answer). ``created`` and
    ``updated`` are epoch milliseconds. ``steps`` (filled by
    :meth:`DurableTurns.inspect`) are the turn's journal entries in turn order.
    """

    turn_id: str
    agent: str
    message: str
    status: str
    created: int
    updated: int
    steps: tuple[tuple[str, Entry], ...] = ()


class DurableTurns:
    """The durable turns on ``database`` (a path or URL, as for ``DurableEngine``) of the
    DBOS application ``app`` (the engine's)."""

    def __init__(
        self, database: str | Path = DEFAULT_DATABASE, *, app: str = "agent-smith"
    ) -> None:
        self._url = url = database_url(database)
        self._database = open_database(url)
        schema = None if url.startswith("sqlite") else "dbos"
        with database_errors(url):
            ready = sa.inspect(self._database).has_table("workflow_status", schema=schema)
        if not ready:
            self._database.dispose()
            raise DurableStateError(f"{url!r} holds no durable turns (no DBOS tables)")
        self._journal = Journal(self._database)
        self._client = DBOSClient(
            system_database_engine=self._database,
            serializer=DBOSPortableJSONSerializer(),
            application_name=app,
        )

    def recent(self, *, status: str | None = None, limit: int = 100) -> list[TurnInfo]:
        """The newest turns first (at most ``limit``), of a ``status`` if given."""
        # A turn's own status may differ from its first run's (WAITING, a later run's
        # CANCELLED or ERROR): those are looked for among all turns, newest first.
        asked = None if status in (WAITING_STATUS, *_STOPPED) else status
        with database_errors(self._url):
            found = self._client.list_workflows(
                name=TURN_WORKFLOW,
                status=asked,
                limit=limit if asked == status else None,
                sort_desc=True,
            )
        infos = (self._info(s) for s in found)
        return list(itertools.islice((i for i in infos if status in (None, i.status)), limit))

    def inspect(self, turn_id: str) -> TurnInfo | None:
        """Turn ``turn_id`` with its recorded steps; None if there is no such turn."""
        with database_errors(self._url, turn_id):
            found = self._client.list_workflows(workflow_ids=[turn_id], name=TURN_WORKFLOW)
        return self._info(found[0], steps=True) if found else None

    def cancel(self, turn_id: str) -> None:
        """Cancel turn ``turn_id`` wherever it runs: its first run, or the run after a
        decision that runs (or waits to) now."""
        with database_errors(self._url, turn_id):
            self._client.cancel_workflow(turn_id)
            for run in self._later_runs(turn_id, ["PENDING", "ENQUEUED", "DELAYED"]):
                self._client.cancel_workflow(run.workflow_id)

    def resume(self, turn_id: str) -> None:
        """Have a launched engine run a cancelled or failed turn again from its record."""
        with database_errors(self._url, turn_id):
            first = self._client.list_workflows(workflow_ids=[turn_id], status=_STOPPED)
            later = self._later_runs(turn_id, _STOPPED)
            deadlines = deadline_run_id(turn_id, "")  # cancelled deadlines stay cancelled
            for run in [*first, *(r for r in later if not r.workflow_id.startswith(deadlines))]:
                self._client.resume_workflow(run.workflow_id)

    def _later_runs(self, turn_id: str, status: list[str]) -> list[WorkflowStatus]:
        """The runs of turn ``turn_id`` after its decisions (and deadlines) in ``status``."""
        return self._client.list_workflows(
            workflow_id_prefix=f"{turn_id}/",
            name=RUN_WORKFLOW,
            status=status,
            load_input=False,
            load_output=False,
        )

    def _info(self, found: WorkflowStatus, *, steps: bool = False) -> TurnInfo:
        turn_id = found.workflow_id
        with database_errors(self._url, turn_id):
            entries = self._journal.entries(turn_id)
            status = _status(str(found.status), entries)
            if status == WAITING_STATUS:  # unless the run after a decision stopped
                stopped = self._later_runs(turn_id, _STOPPED)
                status = str(stopped[-1].status) if stopped else status
        if steps and ANSWER not in entries and found.status == "SUCCESS" and found.output:
            entries[ANSWER] = Entry(DONE, str(found.output))  # a first run's answer: its output
        ordered = tuple(sorted(entries.items(), key=lambda kv: _order(kv[0]))) if steps else ()
        return _info(found, status, ordered)

    def decide(self, turn_id: str, call_id: str, decision: bool | str = True) -> None:
        """Decide about a waiting call: True runs it, False or a reason denies it."""
        with database_errors(self._url, turn_id):
            decide(self._journal, self._client, turn_id, call_id, decision)

    def waiting(self, turn_id: str) -> list[JsonObject]:
        """The calls of turn ``turn_id`` that wait for a decision now."""
        with database_errors(self._url, turn_id):
            return waiting_calls(self._journal, turn_id)

    def events(self, turn_id: str, offset: int = 0) -> Iterator[JsonObject]:
        """Turn ``turn_id``'s event records from ``offset``, then live until it ends."""
        return read_events(self._client, self._journal, turn_id, offset)

    def close(self) -> None:
        self._client.destroy()
        self._database.dispose()

    def __enter__(self) -> DurableTurns:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CancelWatch:
    """While a turn runs: cancel ``agent`` when the turn's workflow is cancelled elsewhere."""

    def __init__(self, agent: Agent, turn_id: str) -> None:
        self._agent = agent
        self._turn_id = turn_id
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._watch, name=f"durable-cancel-watch-{turn_id}", daemon=True
        )

    def __enter__(self) -> CancelWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(CANCEL_POLL):
            status = DBOS.get_workflow_status(self._turn_id)
            if status is not None and status.status == "CANCELLED":
                self._agent.cancel()
                return


def _info(
    status: WorkflowStatus, state: str, steps: tuple[tuple[str, Entry], ...] = ()
) -> TurnInfo:
    inputs: object = status.input or {}
    args = inputs.get("args", ()) if isinstance(inputs, dict) else ()
    agent, message = (str(a) for a in (*args, "", "")[:2])
    return TurnInfo(
        turn_id=status.workflow_id,
        agent=agent,
        message=message,
        status=state,
        created=status.created_at or 0,
        updated=status.updated_at or 0,
        steps=steps,
    )


def _status(first_run: str, entries: dict[str, Entry]) -> str:
    """A turn's status: its first run's, except ``WAITING`` from its first pause to its answer
    (the first run ends there, its run not always yet; the runs after the decisions end the
    turn and record its answer)."""
    paused = WAITING in entries and first_run in ("SUCCESS", "PENDING")
    return WAITING_STATUS if paused and ANSWER not in entries else first_run


def _order(key: str) -> tuple[int, tuple[tuple[int, str], ...], str]:
    """Steps in turn order: ``start``, the steps by position (``m2`` before ``m10``), then
    what waited and was decided, then the ``answer``."""
    if key == "start":
        return (0, (), key)
    parts = key.split(".")
    if all(p[:1] in ("m", "t") and p[1:].isdigit() for p in parts):
        return (1, tuple((int(p[1:]), p[:1]) for p in parts), key)
    return (3 if key == "answer" else 2, (), key)
