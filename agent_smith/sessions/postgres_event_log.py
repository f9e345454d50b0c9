"""PostgresEventLog: the event log (:mod:`.event_log`) on PostgreSQL, for many hosts.

psycopg 3 with a connection pool (the optional extra ``agent-smith[postgres]``,
imported when a log is built). Every append notifies the channel
:data:`CHANNEL` in its transaction (``pg_notify``, delivered on commit) with
the stream's id; one listener thread per log holds a connection that
``LISTEN``\\ s on it and wakes the readers of that stream in this process. A
lost notification (the listener reconnecting after the server restarted)
costs at most ``poll_seconds``: readers re-read that often anyway.

Store failures raise :class:`~agent_smith.errors.SessionError` naming the
server (without its password).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .._internal.extras import install_hint
from ..errors import ConfigError, SessionError
from .event_log import READ_LIMIT, RETRY_SECONDS, Batch, EventLog, StreamInfo
from .group_commit import Row

log = logging.getLogger(__name__)

#: The ``LISTEN/NOTIFY`` channel of appends; the payload is the stream id.
CHANNEL = "agent_smith_events"
_LISTEN_TICK = 0.5  # how often the listener checks that it should stop

_CREATE = (
    "CREATE TABLE IF NOT EXISTS agent_smith_event_streams ("
    " stream TEXT PRIMARY KEY, conversation TEXT NOT NULL, writer TEXT NOT NULL,"
    " closed BOOLEAN NOT NULL DEFAULT FALSE, cancelled BOOLEAN NOT NULL DEFAULT FALSE,"
    " created_at DOUBLE PRECISION NOT NULL, position BIGSERIAL)",
    "CREATE INDEX IF NOT EXISTS agent_smith_event_streams_by_conversation"
    " ON agent_smith_event_streams (conversation, position)",
    "CREATE TABLE IF NOT EXISTS agent_smith_events ("
    " stream TEXT NOT NULL, seq BIGINT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (stream, seq))",
)
_INFO = "SELECT stream, conversation, writer, closed, cancelled FROM agent_smith_event_streams"


class PostgresEventLog(EventLog):
    """Event streams in the PostgreSQL database at ``url`` (``postgresql://...``).

    ``pool_size`` bounds the connections appends and reads use at once (the
    listener has one more of its own); ``poll_seconds`` is how long a reader
    waits for a notification before reading again anyway; ``retry_seconds``
    how long :meth:`outlast` tries again while the server is unreachable.
    """

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 10,
        poll_seconds: float = 2.0,
        retry_seconds: float = RETRY_SECONDS,
    ) -> None:
        super().__init__(poll_seconds=poll_seconds, retry_seconds=retry_seconds)
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError as err:
            raise ConfigError(
                f"PostgresEventLog needs psycopg: {install_hint('postgres')}"
            ) from err
        if pool_size < 1:
            raise ConfigError(f"pool_size must be at least 1, got {pool_size!r}")
        self._psycopg = psycopg
        self._url = url
        self._where = _redacted(url)
        try:
            self._pool = ConnectionPool(
                url,
                min_size=1,
                max_size=pool_size,
                kwargs={"autocommit": True},
                check=ConnectionPool.check_connection,  # none left broken by a restart
                open=False,
                name="agent_smith-events",
            )
            self._pool.open(wait=True, timeout=10)
        except psycopg.Error as err:
            raise self._error("connect", err) from err
        except Exception as err:  # the pool's own timeout error when nothing answers
            self._pool.close()
            raise SessionError(
                f"event log {self._where}: cannot connect ({err})", store=self._where
            ) from err
        try:
            with self._transaction("create tables") as cur:
                for statement in _CREATE:
                    cur.execute(statement)
        except BaseException:
            self._pool.close()
            raise
        self._listener = threading.Thread(target=self._listen, name="agent_smith-events-listen")
        self._listener.start()

    # -- the store -----------------------------------------------------------

    def open_stream(self, stream: str, *, conversation: str, writer: str) -> None:
        with self._transaction("open stream") as cur:
            cur.execute(
                "INSERT INTO agent_smith_event_streams (stream, conversation, writer, created_at)"
                " VALUES (%s, %s, %s, %s)"
                " ON CONFLICT (stream) DO UPDATE SET writer = excluded.writer",
                (stream, conversation, writer, time.time()),
            )

    def _write_events(self, rows: Sequence[Row], streams: Sequence[str]) -> set[str]:
        names = list(streams)
        with self._transaction("append events") as cur:
            cur.executemany(
                "INSERT INTO agent_smith_events (stream, seq, data) VALUES (%s, %s, %s)"
                " ON CONFLICT (stream, seq) DO NOTHING",
                rows,
            )
            cur.execute(
                "SELECT stream FROM agent_smith_event_streams"
                " WHERE stream = ANY(%s) AND NOT cancelled",
                (names,),
            )
            running = {str(row[0]) for row in cur.fetchall()}
            cur.execute(
                "SELECT pg_notify(%s, name) FROM unnest(%s::text[]) AS name", (CHANNEL, names)
            )
        return running

    def _mark(self, stream: str, flag: str) -> None:
        with self._transaction(f"mark stream {flag}") as cur:
            cur.execute(
                f"UPDATE agent_smith_event_streams SET {flag} = TRUE WHERE stream = %s", (stream,)
            )
            cur.execute("SELECT pg_notify(%s, %s)", (CHANNEL, stream))
        self._wake(stream)

    def read(self, stream: str, after: int, *, limit: int = READ_LIMIT) -> Batch:
        with self._transaction("read events") as cur:
            cur.execute("SELECT closed FROM agent_smith_event_streams WHERE stream = %s", (stream,))
            closed = cur.fetchone()
            cur.execute(
                "SELECT seq, data FROM agent_smith_events WHERE stream = %s AND seq > %s"
                " ORDER BY seq LIMIT %s",
                (stream, after, limit),
            )
            rows = cur.fetchall()
        ended = closed is not None and bool(closed[0]) and len(rows) < limit
        return Batch(tuple((int(seq), str(data)) for seq, data in rows), ended)

    def info(self, stream: str) -> StreamInfo | None:
        with self._transaction("stream info") as cur:
            cur.execute(f"{_INFO} WHERE stream = %s", (stream,))
            return _info(cur.fetchone())

    def latest(self, conversation: str) -> StreamInfo | None:
        with self._transaction("latest stream") as cur:
            cur.execute(
                f"{_INFO} WHERE conversation = %s ORDER BY position DESC LIMIT 1", (conversation,)
            )
            return _info(cur.fetchone())

    def prune(self, older_than: float) -> int:
        cutoff = time.time() - older_than
        with self._transaction("prune streams") as cur:
            cur.execute(
                "DELETE FROM agent_smith_event_streams WHERE closed AND created_at < %s"
                " RETURNING stream",
                (cutoff,),
            )
            gone = [row[0] for row in cur.fetchall()]
            cur.execute("DELETE FROM agent_smith_events WHERE stream = ANY(%s)", (gone,))
        return len(gone)

    def close(self) -> None:
        """Stop the listener and close every connection; calling it again does nothing."""
        if self._closing.is_set():
            return
        self._closing.set()
        self._listener.join()
        self._pool.close()

    def __repr__(self) -> str:
        return f"PostgresEventLog({self._where!r})"

    # -- helpers -------------------------------------------------------------

    @contextmanager
    def _transaction(self, operation: str) -> Iterator[Any]:
        """A cursor in one transaction on a pooled connection; errors made typed."""
        try:
            with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
                yield cur
        except self._psycopg.Error as err:
            raise self._error(operation, err) from err

    def _error(self, operation: str, err: Exception) -> SessionError:
        return SessionError(
            f"event log {self._where}: {operation} failed: {err}".strip(), store=self._where
        )

    def _listen(self) -> None:
        """Wake this process's readers on every notification, reconnecting after a failure."""
        psycopg = self._psycopg
        while not self._closing.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self._wake()  # anything appended while we were not listening
                    while not self._closing.is_set():
                        for note in conn.notifies(timeout=_LISTEN_TICK):
                            self._wake(note.payload)
            except psycopg.Error as err:
                log.warning("event log %s: listening failed (%s); retrying", self._where, err)
                self._closing.wait(self.poll_seconds)


def _redacted(url: str) -> str:
    """``url`` without its password."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    credentials, _, host = rest.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}@{host}"


def _info(row: tuple[Any, ...] | None) -> StreamInfo | None:
    if row is None:
        return None
    stream, conversation, writer, closed, cancelled = row
    return StreamInfo(str(stream), str(conversation), str(writer), bool(closed), bool(cancelled))
