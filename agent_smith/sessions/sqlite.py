"""SqliteSession: conversations in one SQLite file, safe for many threads and worker processes.

The built-in :class:`~agent_smith.sessions.session.Session`, on the standard
library's ``sqlite3`` and nothing else: no server, one file that every
worker process of an application opens. WAL mode lets readers run while a
writer commits; each thread has its own connection; every append is one
short write transaction (a few statements, no fsync in the default
``synchronous="normal"``, so a killed process loses nothing it committed;
``"full"`` also survives a power cut, at the cost of an fsync per message).
Turns are arbitrated by the lease of :mod:`.lease`; the file format and its
version by :mod:`.schema`; connections and error translation by
:mod:`.database`.
"""

from __future__ import annotations

import json
import logging
import math
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Literal

from .._internal import json_input
from ..base.history_json import message_from_dict, message_to_dict
from ..errors import AgentBusyError, AgentSmithError, ConfigError, ParseError, SessionError
from ..messages import Message
from . import lease, schema
from .database import Database
from .session import Session, SessionState

log = logging.getLogger(__name__)


class SqliteSession(Session):
    """One conversation (``session_id``) in the SQLite session store at ``path``.

    The file is created on first use and must be a store of its own (not an
    application's existing database). Options: ``lease_seconds`` (30) is how
    long a turn's claim outlives a worker that died mid-turn; ``busy_timeout``
    (5 s) how long a write waits for another writer's lock before
    AgentTimeoutError; ``synchronous`` ``"normal"`` (survives a killed
    process) or ``"full"`` (also a power cut; an fsync per write).

    Thread-safe: share one object between threads, or open one per request.
    ``close()`` releases a held lease and closes every connection.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        session_id: str,
        *,
        lease_seconds: float = 30.0,
        busy_timeout: float = 5.0,
        synchronous: Literal["normal", "full"] = "normal",
    ) -> None:
        where = os.fspath(path) if isinstance(path, (str, os.PathLike)) else path
        if not isinstance(where, str) or where in ("", ":memory:"):
            # ":memory:" would give every thread's connection a database of its own.
            raise ConfigError(f"SqliteSession needs the path of a database file, got {where!r}")
        if not isinstance(session_id, str) or not session_id:
            raise ConfigError(f"session_id must be a non-empty string, got {session_id!r}")
        if not (math.isfinite(lease_seconds) and lease_seconds > 0):
            raise ConfigError(f"lease_seconds must be a positive number, got {lease_seconds!r}")
        if not (math.isfinite(busy_timeout) and busy_timeout >= 0):
            raise ConfigError(f"busy_timeout must be zero or more seconds, got {busy_timeout!r}")
        if synchronous not in ("normal", "full"):
            raise ConfigError(f"synchronous must be 'normal' or 'full', got {synchronous!r}")
        self._id = session_id
        self.lease_seconds = lease_seconds
        self._db = Database(where, busy_timeout=busy_timeout, synchronous=synchronous)
        try:
            schema.prepare(self._db)
        except BaseException:
            self._db.close()
            raise
        self._lock = threading.Lock()
        self._holder: str | None = None  # set while this object runs a turn
        self._keeper: lease.LeaseKeeper | None = None

    @property
    def session_id(self) -> str:
        return self._id

    @property
    def path(self) -> str:
        """The database file."""
        return self._db.path

    # -- reading -------------------------------------------------------------

    def load(self) -> SessionState:
        with self._db.read("load") as conn:
            row = conn.execute(
                "SELECT revision, paused_turn FROM sessions WHERE session_id = ?", (self._id,)
            ).fetchone()
            rows = conn.execute(
                "SELECT body FROM messages WHERE session_id = ? ORDER BY id", (self._id,)
            )
            messages = self._decode(rows)
        revision, paused = row if row is not None else (0, None)
        return SessionState(messages, revision, paused)

    def session_ids(self) -> list[str]:
        with self._db.read("list sessions") as conn:
            rows = conn.execute("SELECT session_id FROM sessions ORDER BY session_id").fetchall()
        return [row[0] for row in rows]

    # -- writing -------------------------------------------------------------

    def append(self, message: Message) -> int:
        body = _encode(message)
        with self._write("append") as (conn, now):
            conn.execute("INSERT INTO messages (session_id, body) VALUES (?, ?)", (self._id, body))
            return _touch(conn, self._id, now)

    def replace(self, messages: Iterable[Message]) -> int:
        bodies = [(self._id, _encode(m)) for m in messages]
        with self._write("replace") as (conn, now):
            conn.execute("DELETE FROM messages WHERE session_id = ?", (self._id,))
            conn.executemany("INSERT INTO messages (session_id, body) VALUES (?, ?)", bodies)
            return _touch(conn, self._id, now)

    def clear(self) -> int:
        with self._write("clear") as (conn, now):
            conn.execute("DELETE FROM messages WHERE session_id = ?", (self._id,))
            revision = _touch(conn, self._id, now)
            _set_paused(conn, self._id, None)
            return revision

    def save_paused_turn(self, data: str | None) -> int:
        if data is not None and not isinstance(data, str):
            raise ConfigError(f"a paused turn is stored as JSON text, got {type(data).__name__}")
        with self._write("save paused turn") as (conn, now):
            revision = _touch(conn, self._id, now)
            _set_paused(conn, self._id, data)
            return revision

    def delete(self, session_id: str) -> None:
        holder = self._holder if session_id == self._id else None
        with self._db.write("delete") as conn:
            lease.check(conn, session_id, holder, now=time.time())
            for table in ("messages", "sessions", "leases"):
                conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))

    # -- turns ---------------------------------------------------------------

    def begin_turn(self) -> int:
        with self._lock:
            if self._holder is not None:
                raise AgentBusyError(
                    f"session {self._id!r} is already running a turn through this SqliteSession"
                )
            holder = lease.new_holder()
            with self._db.write("begin turn") as conn:
                now = time.time()
                lease.take(conn, self._id, holder, now=now, duration=self.lease_seconds)
                row = conn.execute(
                    "SELECT revision FROM sessions WHERE session_id = ?", (self._id,)
                ).fetchone()
            self._holder = holder
            self._keeper = lease.LeaseKeeper(
                lambda: self._renew(holder),
                interval=self.lease_seconds / 3,
                on_exit=self._db.close_thread,
                name=self._id[:24],
            )
        log.debug("session %s: turn begun by %s", self._id, holder)
        return int(row[0]) if row is not None else 0

    def end_turn(self) -> None:
        with self._lock:
            holder, keeper = self._holder, self._keeper
            self._holder = self._keeper = None
        if keeper is not None:
            keeper.stop()
        if holder is None:
            return
        try:
            with self._db.write("end turn") as conn:
                lease.release(conn, self._id, holder)
        except AgentSmithError as err:
            log.warning(
                "session %s: releasing the lease failed (%s); it expires in %s s",
                self._id,
                err,
                self.lease_seconds,
            )

    def close(self) -> None:
        """Release a held lease and close every connection; calling it again does nothing."""
        self.end_turn()
        self._db.close()

    def __repr__(self) -> str:
        return f"SqliteSession({self.path!r}, {self._id!r})"

    # -- helpers -------------------------------------------------------------

    @contextmanager
    def _write(self, operation: str) -> Iterator[tuple[sqlite3.Connection, float]]:
        """A write transaction that first checks this object may write (the lease fence)."""
        with self._db.write(operation) as conn:
            now = time.time()
            lease.check(conn, self._id, self._holder, now=now)
            yield conn, now

    def _renew(self, holder: str) -> bool:
        with self._db.write("renew lease") as conn:
            return lease.renew(conn, self._id, holder, now=time.time(), duration=self.lease_seconds)

    def _decode(self, rows: Iterable[tuple[object]]) -> tuple[Message, ...]:
        """The messages of ``rows`` as they arrive, each row's JSON parsed and dropped in turn.

        Nothing is kept of a row but its message, so a long load allocates
        (and wakes the garbage collector) no more than its messages need.
        """
        messages: list[Message] = []
        i = 0  # the row a failure names
        try:
            for i, (body,) in enumerate(rows):
                if type(body) is not str:
                    raise ParseError(f"message {i} is stored as {type(body).__name__}, not text")
                messages.append(message_from_dict(json_input.loads(body), f"message {i}"))
        except json.JSONDecodeError as err:
            raise self._damaged(f"message {i} is not valid JSON ({err.msg})") from err
        except ParseError as err:
            raise self._damaged(str(err)) from err
        return tuple(messages)

    def _damaged(self, what: str) -> SessionError:
        return SessionError(
            f"session {self._id!r} in {self.path} holds a damaged message: {what}",
            store=self.path,
        )


def _encode(message: Message) -> str:
    return json.dumps(message_to_dict(message), ensure_ascii=False)


def _touch(conn: sqlite3.Connection, session_id: str, now: float) -> int:
    """Give the session a new revision, creating its row on its first write."""
    revision = secrets.randbits(62) + 1  # opaque and never 0, which means "never written"
    conn.execute(
        "INSERT INTO sessions (session_id, revision, created_at, updated_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (session_id) DO UPDATE SET revision = excluded.revision,"
        " updated_at = excluded.updated_at",
        (session_id, revision, now, now),
    )
    return revision


def _set_paused(conn: sqlite3.Connection, session_id: str, data: str | None) -> None:
    conn.execute("UPDATE sessions SET paused_turn = ? WHERE session_id = ?", (data, session_id))
