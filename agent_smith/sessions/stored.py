"""The session contract on a SQL database: what SQLite and PostgreSQL sessions share.

:class:`StoredSession` is the whole of :class:`~agent_smith.sessions.session.Session`
over a :class:`SessionDatabase`, the few things a store does its own way:
transactions and their errors, the clock, how it knows a lease's holder is
gone, and what a turn holds while it runs. The tables (``sessions``,
``messages``, ``leases``: :mod:`.schema`), the statements, the lease rules
(:mod:`.lease`) and the rows' JSON (:mod:`.codec`) are the same in every
store, so :class:`~agent_smith.sessions.sqlite.SqliteSession` and
:class:`~agent_smith.sessions.postgres.PostgresSession` store the same rows
and answer the same way.
"""

from __future__ import annotations

import logging
import math
import secrets
import threading
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

from ..errors import AgentBusyError, AgentSmithError, ConfigError, SessionError
from ..messages import Message
from . import codec, lease
from .session import Session, SessionState
from .sql import Sql

log = logging.getLogger(__name__)


class SessionDatabase(Protocol):
    """A store's database, as :class:`StoredSession` uses it."""

    @property
    def name(self) -> str:
        """The store as errors name it (a path; a URL without its password)."""

    def read(self, operation: str) -> AbstractContextManager[Sql]:
        """A read transaction: one consistent snapshot."""

    def write(self, operation: str, session_id: str) -> AbstractContextManager[tuple[Sql, float]]:
        """A write transaction that no other write of ``session_id`` interleaves with,
        and the store's clock (epoch seconds) as it began; rolled back if the block raises."""

    def holder_is_dead(self, conn: Sql, holder: str) -> bool:
        """Whether the lease holder ``holder`` is known to run no more."""

    def claim(self, holder: str) -> None:
        """Show that ``holder`` runs (for :meth:`holder_is_dead`) until :meth:`release`;
        called when a turn begins and at each renewal (again after a lost connection)."""

    def release(self, holder: str) -> None:
        """Undo :meth:`claim`; never raises."""

    def close_thread(self) -> None:
        """Let go of what the calling thread holds (a lease keeper that ends)."""

    def close(self) -> None:
        """Close every connection; later use raises SessionError."""


def check_options(session_id: str, lease_seconds: float, busy_timeout: float) -> None:
    """Raise ConfigError for options no store accepts (before anything is opened)."""
    if not isinstance(session_id, str) or not session_id:
        raise ConfigError(f"session_id must be a non-empty string, got {session_id!r}")
    if not (math.isfinite(lease_seconds) and lease_seconds > 0):
        raise ConfigError(f"lease_seconds must be a positive number, got {lease_seconds!r}")
    if not (math.isfinite(busy_timeout) and busy_timeout >= 0):
        raise ConfigError(f"busy_timeout must be zero or more seconds, got {busy_timeout!r}")


class StoredSession(Session):
    """One conversation (``session_id``) in ``database`` (see the module doc).

    ``owned``: :meth:`close` closes the database too (a session opened on a
    path or URL of its own); otherwise the database outlives the session (one
    store's connections shared by many sessions).
    """

    def __init__(
        self, database: SessionDatabase, session_id: str, *, lease_seconds: float, owned: bool
    ) -> None:
        self._db = database
        self._id = session_id
        self._owned = owned
        self.lease_seconds = lease_seconds
        self._lock = threading.Lock()
        self._holder: str | None = None  # set while this object runs a turn
        self._keeper: lease.LeaseKeeper | None = None
        self._closed = False

    @property
    def session_id(self) -> str:
        return self._id

    # -- reading -------------------------------------------------------------

    def load(self) -> SessionState:
        with self._live().read("load") as conn:
            row = conn.execute(
                "SELECT revision, paused_turn FROM sessions WHERE session_id = ?", (self._id,)
            ).fetchone()
            rows = conn.execute(
                "SELECT body FROM messages WHERE session_id = ? ORDER BY id", (self._id,)
            )
            messages = codec.decode(rows, self._damaged)
        revision, paused = row if row is not None else (0, None)
        return SessionState(messages, revision, paused)

    def session_ids(self) -> list[str]:
        with self._live().read("list sessions") as conn:
            rows = conn.execute("SELECT session_id FROM sessions ORDER BY session_id").fetchall()
        return [row[0] for row in rows]

    # -- writing -------------------------------------------------------------

    def append(self, message: Message) -> int:
        body = codec.encode(message)
        with self._write("append") as (conn, now):
            conn.execute("INSERT INTO messages (session_id, body) VALUES (?, ?)", (self._id, body))
            return _touch(conn, self._id, now)

    def replace(self, messages: Iterable[Message]) -> int:
        bodies = [(self._id, codec.encode(m)) for m in messages]
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
        with self._live().write("delete", session_id) as (conn, now):
            lease.check(conn, session_id, holder, now=now, dead=self._db.holder_is_dead)
            for table in ("messages", "sessions", "leases"):
                conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))

    # -- turns ---------------------------------------------------------------

    def begin_turn(self) -> int:
        with self._lock:
            if self._holder is not None:
                raise AgentBusyError(
                    f"session {self._id!r} is already running a turn through this "
                    f"{type(self).__name__}"
                )
            holder = lease.new_holder()
            self._live().claim(holder)
            try:
                with self._db.write("begin turn", self._id) as (conn, now):
                    lease.take(
                        conn,
                        self._id,
                        holder,
                        now=now,
                        duration=self.lease_seconds,
                        dead=self._db.holder_is_dead,
                    )
                    row = conn.execute(
                        "SELECT revision FROM sessions WHERE session_id = ?", (self._id,)
                    ).fetchone()
            except BaseException:
                self._db.release(holder)
                raise
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
            with self._db.write("end turn", self._id) as (conn, _now):
                lease.release(conn, self._id, holder)
        except AgentSmithError as err:
            log.warning(
                "session %s: releasing the lease failed (%s); it expires in %s s",
                self._id,
                err,
                self.lease_seconds,
            )
        finally:
            self._db.release(holder)

    def close(self) -> None:
        """Release a held lease and close the connections it owns; calling it again does nothing."""
        self.end_turn()
        self._closed = True
        if self._owned:
            self._db.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._db.name!r}, {self._id!r})"

    # -- helpers -------------------------------------------------------------

    @contextmanager
    def _write(self, operation: str) -> Iterator[tuple[Sql, float]]:
        """A write transaction that first checks this object may write (the lease fence)."""
        with self._live().write(operation, self._id) as (conn, now):
            lease.check(conn, self._id, self._holder, now=now, dead=self._db.holder_is_dead)
            yield conn, now

    def _renew(self, holder: str) -> bool:
        with self._db.write("renew lease", self._id) as (conn, now):
            kept = lease.renew(conn, self._id, holder, now=now, duration=self.lease_seconds)
        if kept:
            self._db.claim(holder)
        return kept

    def _live(self) -> SessionDatabase:
        """The database, unless this session was closed (its store may still serve others)."""
        if self._closed:
            raise SessionError(
                f"session {self._id!r} of {self._db.name} is closed", store=self._db.name
            )
        return self._db

    def _damaged(self, what: str) -> SessionError:
        return SessionError(
            f"session {self._id!r} in {self._db.name} holds a damaged message: {what}",
            store=self._db.name,
        )


def _touch(conn: Sql, session_id: str, now: float) -> int:
    """Give the session a new revision, creating its row on its first write."""
    revision = secrets.randbits(62) + 1  # opaque and never 0, which means "never written"
    conn.execute(
        "INSERT INTO sessions (session_id, revision, created_at, updated_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (session_id) DO UPDATE SET revision = excluded.revision,"
        " updated_at = excluded.updated_at",
        (session_id, revision, now, now),
    )
    return revision


def _set_paused(conn: Sql, session_id: str, data: str | None) -> None:
    conn.execute("UPDATE sessions SET paused_turn = ? WHERE session_id = ?", (data, session_id))
