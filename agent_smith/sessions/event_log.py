"""EventLog: each turn's events in a store, numbered, readable from any process and any offset.

A web turn's output is a *stream*: an append-only list of events (text: the
protocol frames the turn produced) numbered 1, 2, 3, ... in the order the turn
wrote them. The turn's writer appends; any number of readers, in any worker
process or on any host sharing the store, read "the events after N" and then
follow the rest live. That one mechanism gives resumable streams: a client
whose connection dropped (or whose worker was killed) reconnects anywhere,
says the last event id it saw, and gets every later one exactly once.

The contract, for each store (:class:`SqliteEventLog` here,
:class:`~agent_smith.sessions.postgres_event_log.PostgresEventLog`):

* :meth:`EventLog.open_stream` creates a stream for one turn of one
  ``conversation`` (the caller's scoped conversation id) and names its
  ``writer`` (a :func:`~agent_smith.sessions.lease.new_holder` id); opening
  it again (a turn recovered by another process) only changes the writer.
* :meth:`EventLog.append` is idempotent by ``(stream, sequence)``: writing
  event 7 twice keeps the first. A turn replayed after a crash (a durable
  turn) writes the same events with the same numbers, so each is stored
  once. It returns False once the stream was cancelled (:meth:`cancel`):
  the writer should stop its turn.
* :meth:`EventLog.read` returns the events after a sequence number, oldest
  first, and whether the stream is closed (no event will follow).
* :meth:`EventLog.follow` reads, then waits for more, until the stream is
  closed or its writer died (:class:`~agent_smith.errors.StreamLostError`).

Wake-ups. A reader waiting for events is woken at once by an append in its own
process (a condition variable), and by the store across processes: PostgreSQL
``LISTEN/NOTIFY``; on SQLite, which cannot notify another process, a bounded
poll (every ``poll_seconds``) stands in.

A store that fails for a moment (a PostgreSQL server restarting) costs a wait,
not the stream: :meth:`EventLog.outlast` calls an idempotent operation again
for up to ``retry_seconds``; readers (:meth:`follow`) and the web app's
writers use it.

Streams are kept after they close so late readers can replay them;
:meth:`EventLog.prune` drops closed streams older than a given age.
"""

from __future__ import annotations

import json
import logging
import math
import os
import sqlite3
import threading
import time
from abc import abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

from .._internal.closing import Closeable
from ..errors import ConfigError, SessionError, StreamLostError
from .database import Database
from .group_commit import GroupCommit, Row
from .lease import holder_is_dead

#: How many events one read returns at most.
READ_LIMIT = 500
#: How long :meth:`EventLog.outlast` keeps trying a failing store (a restart takes seconds).
RETRY_SECONDS = 30.0

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class StreamInfo:
    """One stream's row: whose conversation it belongs to, who writes it, its state."""

    stream: str
    conversation: str
    writer: str
    closed: bool
    cancelled: bool


@dataclass(frozen=True)
class Batch:
    """Events read after some sequence number; ``closed``: the stream ended and all are read."""

    events: tuple[tuple[int, str], ...]
    closed: bool


class EventLog(Closeable):
    """A store of numbered event streams (see the module doc). Thread-safe."""

    def __init__(
        self,
        *,
        poll_seconds: float,
        writer_check_seconds: float = 2.0,
        retry_seconds: float = RETRY_SECONDS,
    ) -> None:
        if not (math.isfinite(poll_seconds) and poll_seconds > 0):
            raise ConfigError(f"poll_seconds must be a positive number, got {poll_seconds!r}")
        self.poll_seconds = poll_seconds
        self.writer_check_seconds = writer_check_seconds
        self.retry_seconds = retry_seconds
        self._closing = threading.Event()  # set by close(): no more retries, no more listening
        self._changed = threading.Condition()
        # Per stream with readers waiting in this process: a counter bumped on each
        # append (here, or notified by the store) and how many readers wait on it.
        self._generation: dict[str, list[int]] = {}
        self._appends = GroupCommit(self._write_events, self._wake)

    # -- the store -----------------------------------------------------------

    @abstractmethod
    def open_stream(self, stream: str, *, conversation: str, writer: str) -> None:
        """Create ``stream`` for a turn of ``conversation``, or make ``writer`` its writer."""

    def append(self, stream: str, first: int, events: Sequence[str]) -> bool:
        """Store ``events`` as numbers ``first, first + 1, ...`` (each once); False if cancelled.

        Appends from other threads that arrive while a write is going on are
        written together in the next transaction (:mod:`.group_commit`).
        """
        rows = [(stream, first + i, data) for i, data in enumerate(events)]
        return self._appends.append(stream, rows)

    @abstractmethod
    def _write_events(self, rows: Sequence[Row], streams: Sequence[str]) -> set[str]:
        """Store ``rows`` (each once) in one transaction; which of ``streams`` are not cancelled."""

    def close_stream(self, stream: str) -> None:
        """Mark ``stream`` ended: readers stop after its last event."""
        self._mark(stream, "closed")

    def cancel(self, stream: str) -> None:
        """Ask the writer of ``stream`` to stop (its next :meth:`append` returns False)."""
        self._mark(stream, "cancelled")

    @abstractmethod
    def _mark(self, stream: str, flag: str) -> None:
        """Set ``stream``'s ``flag`` (``closed`` or ``cancelled``) and wake its readers."""

    @abstractmethod
    def read(self, stream: str, after: int, *, limit: int = READ_LIMIT) -> Batch:
        """The events of ``stream`` numbered above ``after``, at most ``limit``, oldest first."""

    @abstractmethod
    def info(self, stream: str) -> StreamInfo | None:
        """The stream's row, or None if there is no such stream."""

    @abstractmethod
    def latest(self, conversation: str) -> StreamInfo | None:
        """The newest stream of ``conversation``, or None."""

    @abstractmethod
    def prune(self, older_than: float) -> int:
        """Drop the closed streams opened over ``older_than`` seconds ago; how many."""

    # -- following -----------------------------------------------------------

    def follow(self, stream: str, after: int = 0) -> Iterator[tuple[int, str]]:
        """The events after ``after``, then each new one as it is written, until the end.

        Raises StreamLostError when the stream is still open but its writer is
        a process of this host that no longer runs (its turn died with it and
        nobody recovered it).
        """
        with self._changed:
            self._generation.setdefault(stream, [0, 0])[1] += 1
        try:
            checked = time.monotonic()
            while True:
                with self._changed:
                    seen = self._generation[stream][0]
                batch = self.outlast(f"read {stream}", partial(self.read, stream, after))
                for event in batch.events:
                    after = event[0]
                    yield event
                if batch.closed:
                    return
                if batch.events:
                    continue
                if time.monotonic() - checked >= self.writer_check_seconds:
                    checked = time.monotonic()
                    self._check_writer(stream)
                self._wait(stream, seen)
        finally:
            with self._changed:
                counts = self._generation[stream]
                counts[1] -= 1
                if counts[1] == 0:
                    del self._generation[stream]

    def outlast(self, operation: str, call: Callable[[], T]) -> T:
        """``call()``, called again after a store failure until ``retry_seconds`` passed.

        Only for calls that may run twice (this contract's appends, marks and
        reads may). Raises the last SessionError then, or at once if the log
        is closing.
        """
        deadline = time.monotonic() + self.retry_seconds
        delay = 0.05
        while True:
            try:
                return call()
            except SessionError as err:
                if self._closing.is_set() or time.monotonic() + delay > deadline:
                    raise
                log.warning("event log: %s failed (%s); trying again", operation, err)
            self._closing.wait(delay)
            delay = min(delay * 2, 1.0)

    def _wait(self, stream: str, seen: int) -> None:
        """Until an append to ``stream`` after generation ``seen`` wakes us, or the poll bound."""
        counts = self._generation[stream]
        with self._changed:
            self._changed.wait_for(lambda: counts[0] != seen, self.poll_seconds)

    def _check_writer(self, stream: str) -> None:
        info = self.info(stream)
        if info is None:
            raise StreamLostError(f"event stream {stream!r} was deleted", stream=stream)
        if not info.closed and holder_is_dead(info.writer):
            raise StreamLostError(
                f"event stream {stream!r}: its writer {info.writer} stopped before the end",
                stream=stream,
            )

    def _wake(self, stream: str | None = None) -> None:
        """Wake the readers of ``stream`` (None: of every stream) in this process."""
        with self._changed:
            if stream is None:
                for counts in self._generation.values():
                    counts[0] += 1
            elif stream in self._generation:
                self._generation[stream][0] += 1
            else:
                return
            self._changed.notify_all()

    def waiting_streams(self) -> int:
        """How many streams have readers waiting in this process (for tests and metrics)."""
        with self._changed:
            return len(self._generation)


_CREATE = (
    "CREATE TABLE IF NOT EXISTS event_streams ("
    " stream TEXT PRIMARY KEY, conversation TEXT NOT NULL, writer TEXT NOT NULL,"
    " closed INTEGER NOT NULL DEFAULT 0, cancelled INTEGER NOT NULL DEFAULT 0,"
    " created_at REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS event_streams_by_conversation"
    " ON event_streams (conversation, created_at)",
    "CREATE TABLE IF NOT EXISTS events ("
    " stream TEXT NOT NULL, seq INTEGER NOT NULL, data TEXT NOT NULL,"
    " PRIMARY KEY (stream, seq)) WITHOUT ROWID",
)
_INFO = "SELECT stream, conversation, writer, closed, cancelled FROM event_streams"


class SqliteEventLog(EventLog):
    """Event streams in the SQLite file ``path`` (a file of its own), shared by the processes
    of one host. Readers in another process notice new events within ``poll_seconds``."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        poll_seconds: float = 0.05,
        busy_timeout: float = 5.0,
        retry_seconds: float = RETRY_SECONDS,
    ) -> None:
        super().__init__(poll_seconds=poll_seconds, retry_seconds=retry_seconds)
        where = os.fspath(path)
        if not where or where == ":memory:":
            raise ConfigError(f"SqliteEventLog needs the path of a database file, got {where!r}")
        self._db = Database(where, busy_timeout=busy_timeout, synchronous="normal")
        try:
            with self._db.errors("open"):
                self._db.connection().execute("PRAGMA journal_mode = WAL")
            with self._db.write("open") as (conn, _):
                for statement in _CREATE:
                    conn.execute(statement)
        except BaseException:
            self._db.close()
            raise

    @property
    def path(self) -> str:
        return self._db.path

    def open_stream(self, stream: str, *, conversation: str, writer: str) -> None:
        with self._db.write("open stream") as (conn, _):
            conn.execute(
                "INSERT INTO event_streams (stream, conversation, writer, created_at)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (stream) DO UPDATE SET writer = excluded.writer",
                (stream, conversation, writer, time.time()),
            )

    def _write_events(self, rows: Sequence[Row], streams: Sequence[str]) -> set[str]:
        with self._db.write("append events") as (conn, _):
            conn.executemany(
                "INSERT OR IGNORE INTO events (stream, seq, data) VALUES (?, ?, ?)", rows
            )
            running = conn.execute(
                "SELECT stream FROM event_streams WHERE cancelled = 0"
                " AND stream IN (SELECT value FROM json_each(?))",
                (json.dumps(streams),),
            ).fetchall()
        return {str(row[0]) for row in running}

    def _mark(self, stream: str, flag: str) -> None:
        with self._db.write(f"mark stream {flag}") as (conn, _):
            conn.execute(f"UPDATE event_streams SET {flag} = 1 WHERE stream = ?", (stream,))
        self._wake(stream)

    def read(self, stream: str, after: int, *, limit: int = READ_LIMIT) -> Batch:
        with self._db.read("read events") as conn:
            closed = conn.execute(
                "SELECT closed FROM event_streams WHERE stream = ?", (stream,)
            ).fetchone()
            rows = conn.execute(
                "SELECT seq, data FROM events WHERE stream = ? AND seq > ? ORDER BY seq LIMIT ?",
                (stream, after, limit),
            ).fetchall()
        ended = closed is not None and bool(closed[0]) and len(rows) < limit
        return Batch(tuple((int(seq), str(data)) for seq, data in rows), ended)

    def info(self, stream: str) -> StreamInfo | None:
        with self._db.read("stream info") as conn:
            row = conn.execute(f"{_INFO} WHERE stream = ?", (stream,)).fetchone()
        return _info(row)

    def latest(self, conversation: str) -> StreamInfo | None:
        with self._db.read("latest stream") as conn:
            row = conn.execute(
                f"{_INFO} WHERE conversation = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
                (conversation,),
            ).fetchone()
        return _info(row)

    def prune(self, older_than: float) -> int:
        cutoff = time.time() - older_than
        with self._db.write("prune streams") as (conn, _):
            old = "SELECT stream FROM event_streams WHERE closed = 1 AND created_at < ?"
            conn.execute(f"DELETE FROM events WHERE stream IN ({old})", (cutoff,))
            cursor = conn.execute(
                "DELETE FROM event_streams WHERE closed = 1 AND created_at < ?", (cutoff,)
            )
            return cursor.rowcount

    def close(self) -> None:
        """Close every connection; later use raises SessionError."""
        self._closing.set()
        self._db.close()

    def __repr__(self) -> str:
        return f"SqliteEventLog({self.path!r})"


def _info(row: sqlite3.Row | tuple[object, ...] | None) -> StreamInfo | None:
    if row is None:
        return None
    stream, conversation, writer, closed, cancelled = row
    return StreamInfo(str(stream), str(conversation), str(writer), bool(closed), bool(cancelled))
