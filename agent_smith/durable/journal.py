"""The step journal: each durable turn's records, keyed by the step's position.

One table, ``agent_smith_steps``, in the DBOS system database (SQLite by
default, PostgreSQL for many hosts): a row per step of a turn, keyed by the
turn's workflow id and the step's position (``m1`` the first model request,
``t2`` the second tool call; the sub-agent that call ran keeps its steps
under its own workflow id, ``<turn id>/t2``). A row is ``started`` while its
tool runs and ``done`` with its JSON record once the result is in. Keys come
from positions, never from thread timing, so parallel calls and nested turns
replay in the same order.

DBOS numbers a workflow's steps with one counter drawn in the order threads
reach it; calls that run in parallel (and sub-agents that run beside each
other) would draw their numbers in a different order after a crash. The
journal's keys are the call's place in the turn instead; DBOS keeps the turn
itself (its workflow, recovery, messages, cancellation).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError

from ..errors import DurableStateError

STARTED = "started"
DONE = "done"

#: The journal key of a turn's final answer (the JSON of a history's message).
ANSWER = "answer"

_metadata = sa.MetaData()
sa.Table(
    "agent_smith_steps",
    _metadata,
    sa.Column("turn_id", sa.String(255), primary_key=True),
    sa.Column("step", sa.String(255), primary_key=True),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("record", sa.Text, nullable=True),
)

# Plain statements, compiled once: building them with the expression language
# costs more than the SQLite write itself.
_SELECT = sa.text("SELECT step, state, record FROM agent_smith_steps WHERE turn_id = :turn_id")
_UPSERT = sa.text(
    "INSERT INTO agent_smith_steps (turn_id, step, state, record) "
    "VALUES (:turn_id, :step, :state, :record) "
    "ON CONFLICT (turn_id, step) DO UPDATE SET state = excluded.state, record = excluded.record"
)
_INSERT = sa.text(
    "INSERT INTO agent_smith_steps (turn_id, step, state, record) "
    "VALUES (:turn_id, :step, :state, :record) ON CONFLICT (turn_id, step) DO NOTHING"
)
_SELECT_ONE = sa.text(
    "SELECT state, record FROM agent_smith_steps WHERE turn_id = :turn_id AND step = :step"
)


@dataclass(frozen=True)
class Entry:
    """One step's row: ``started`` (no record yet) or ``done`` with its JSON record."""

    state: str
    record: str | None


class Journal:
    """The step journal in the database of ``engine`` (the engine DBOS uses too). Thread-safe."""

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine
        self._url = engine.url.render_as_string(hide_password=True)
        self._lock = threading.Lock()
        for attempt in (1, 2):
            try:
                _metadata.create_all(engine)
                break
            except SQLAlchemyError as err:
                # Processes started together (a server's workers) race to create the table:
                # the loser's CREATE fails on the winner's table, which a second look finds.
                if attempt == 2:
                    raise DurableStateError(
                        f"cannot open the durable database {self._url!r}: {err}"
                    ) from err

    def entries(self, turn_id: str) -> dict[str, Entry]:
        """Every recorded step of ``turn_id`` by its key."""
        with database_errors(self._url, turn_id), self._engine.connect() as conn:
            rows = conn.execute(_SELECT, {"turn_id": turn_id})
            return {row.step: Entry(row.state, row.record) for row in rows}

    def entry(self, turn_id: str, step: str) -> Entry | None:
        """Step ``step`` of ``turn_id`` as recorded now (None: not recorded)."""
        with database_errors(self._url, turn_id), self._engine.connect() as conn:
            row = conn.execute(_SELECT_ONE, {"turn_id": turn_id, "step": step}).first()
        return None if row is None else Entry(row.state, row.record)

    def first(self, turn_id: str, step: str, record: str) -> bool:
        """Record ``step`` unless it is recorded already (by any process); whether this did."""
        row = {"turn_id": turn_id, "step": step, "state": DONE, "record": record}
        with database_errors(self._url, turn_id), self._lock, self._engine.begin() as conn:
            return conn.execute(_INSERT, row).rowcount == 1

    def started(self, turn_id: str, step: str) -> None:
        """Mark ``step`` as running (its result not recorded yet)."""
        self._put(turn_id, step, STARTED, None)

    def done(self, turn_id: str, step: str, record: str) -> None:
        """Record ``step``'s result."""
        self._put(turn_id, step, DONE, record)

    def _put(self, turn_id: str, step: str, state: str, record: str | None) -> None:
        row = {"turn_id": turn_id, "step": step, "state": state, "record": record}
        with database_errors(self._url, turn_id), self._lock, self._engine.begin() as conn:
            conn.execute(_UPSERT, row)


@contextmanager
def database_errors(url: str, turn_id: str = "") -> Iterator[None]:
    """Turn a database failure into a DurableStateError naming the database and the turn."""
    try:
        yield
    except SQLAlchemyError as err:
        about = f" for turn {turn_id!r}" if turn_id else ""
        raise DurableStateError(
            f"durable database {url!r} failed{about}: {getattr(err, 'orig', None) or err}",
            turn_id=turn_id,
        ) from err
