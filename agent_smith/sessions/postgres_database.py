"""A PostgreSQL session store: a connection pool, short transactions, locks, typed errors.

What :class:`~agent_smith.sessions.postgres.PostgresSession` needs of
PostgreSQL (psycopg 3 and ``psycopg_pool``, the extra ``[postgres]``), behind
the :class:`~agent_smith.sessions.stored.SessionDatabase` seam:

* **Tables** live in a schema of their own (``agent_smith_sessions`` unless
  told otherwise), so the store can share a database with an application:
  every connection's ``search_path`` names it, and the statements of
  :mod:`.stored` run unchanged. Opening checks (and creates, or migrates) it
  like a SQLite file (:mod:`.schema`), under a lock, so workers that start
  together create it once.
* **Connections** come from one pool per store and process (a process forked
  after opening — a pre-forking server — makes its own pool on first use,
  never touching its parent's). The first one is made directly when the
  store opens, so an unreachable server is a :class:`SessionError` at once
  rather than a pool waiting in the background.
* **Transactions**: a read is ``REPEATABLE READ`` (one snapshot, as the
  contract asks); a write first takes a transaction lock on its session id
  (``pg_advisory_xact_lock``), so writes of one session never interleave,
  exactly as SQLite's single writer, while writes of different sessions run
  at once. The store's clock is the server's (one clock for every host).
* **Leases**: a turn's holder keeps a session-level advisory lock, keyed by
  its holder id, on a pool connection of its own for as long as the turn
  runs. The server drops that lock the moment the connection ends — the
  holder's process died, on any host — so another turn sees at once that the
  holder is gone (``pg_try_advisory_xact_lock`` succeeds). A holder whose
  host vanished from the network keeps its lease until the lease expires. If
  the holder's connection broke (the server restarted), the next renewal
  takes the lock again on a fresh one.
* **Errors** are translated here, once: a lock wait past ``busy_timeout``
  (``lock_timeout`` on the server) is :class:`AgentTimeoutError`; anything
  else — the server unreachable or restarting, a closed store — is
  :class:`SessionError` naming the store (its URL without the password). A
  transaction that failed is rolled back by the server: nothing half-written.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import logging
import os
import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..errors import AgentTimeoutError, ConfigError, SessionError
from . import schema
from .sql import Rows, Sql

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

log = logging.getLogger(__name__)

#: The schema that holds the tables unless the store is told another.
DEFAULT_SCHEMA = "agent_smith_sessions"

#: The first key of the two-key advisory locks on session ids (a namespace of ours).
SESSION_LOCKS = 0x61_73_73_6E  # "assn"

_CREATE = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE sessions ("
    " session_id TEXT PRIMARY KEY, revision BIGINT NOT NULL, paused_turn TEXT,"
    " created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE messages ("
    " id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    " session_id TEXT NOT NULL, body TEXT NOT NULL)",
    "CREATE INDEX messages_by_session ON messages (session_id, id)",
    "CREATE TABLE leases ("
    " session_id TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at DOUBLE PRECISION NOT NULL)",
)

_pool_ids = itertools.count()


def redacted(url: str) -> str:
    """``url`` without its password, for messages and logs."""
    return re.sub(r"^([a-z]+://[^/:@]*):[^/@]*@", r"\1:***@", url)


class PostgresDatabase:
    """One PostgreSQL session store: its pool, schema, transactions and locks (see the module doc).

    ``pool_size``: the most connections this process opens (each running turn
    keeps one for its lease, the others serve reads and writes);
    ``busy_timeout``: how long a write waits for another writer of its session;
    ``connect_timeout``: how long an operation waits for a connection.
    """

    def __init__(
        self,
        url: str,
        *,
        busy_timeout: float = 5.0,
        connect_timeout: float = 10.0,
        pool_size: int = 10,
        schema_name: str = DEFAULT_SCHEMA,
    ) -> None:
        if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", schema_name):
            raise ConfigError(
                f"schema must be a lowercase SQL name (letters, digits, _), got {schema_name!r}"
            )
        if not (isinstance(pool_size, int) and pool_size >= 2):
            raise ConfigError(f"pool_size must be 2 or more connections, got {pool_size!r}")
        if not connect_timeout > 0:
            raise ConfigError(f"connect_timeout must be positive, got {connect_timeout!r}")
        try:
            import psycopg  # noqa: F401 - the extra, imported only here
            import psycopg_pool  # noqa: F401
        except ImportError as err:
            raise ConfigError(
                "PostgreSQL sessions need psycopg 3 and psycopg_pool: "
                "pip install 'agent-smith[postgres]'"
            ) from err
        self.url = url
        self.name = redacted(url)
        self.schema = schema_name
        self.busy_timeout = busy_timeout
        self.connect_timeout = connect_timeout
        self.pool_size = pool_size
        self._lock = threading.Lock()
        self._closed = False
        self._claims: dict[str, psycopg.Connection[Any]] = {}  # holder -> its lock's connection
        self._pool: ConnectionPool[Any] | None = None
        self._pid = 0
        self._prepare()

    # -- the SessionDatabase seam ---------------------------------------------

    @contextmanager
    def read(self, operation: str) -> Iterator[_Sql]:
        """A read transaction: one snapshot (``REPEATABLE READ``)."""
        with self._transaction(operation, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") as sql:
            yield sql

    @contextmanager
    def write(self, operation: str, session_id: str = "") -> Iterator[tuple[_Sql, float]]:
        """A write transaction holding ``session_id``'s lock, and the server's clock."""
        with self._transaction(operation, "BEGIN") as sql:
            row = sql.execute(
                "SELECT pg_advisory_xact_lock(?::int4, hashtext(?)),"
                " extract(epoch FROM clock_timestamp())::float8",
                (SESSION_LOCKS, session_id),
            ).fetchone()
            yield sql, float(row[1])

    def holder_is_dead(self, conn: Sql, holder: str) -> bool:
        """True when no connection holds ``holder``'s lock (its process ended, or it
        never took one: a holder of another store's format)."""
        row = conn.execute(
            "SELECT pg_try_advisory_xact_lock(?::int8)", (_holder_key(holder),)
        ).fetchone()
        return bool(row[0])

    def claim(self, holder: str) -> None:
        """Hold ``holder``'s lock on a connection of its own (again, if that one broke)."""
        import psycopg

        with self._lock:
            conn = self._claims.get(holder)
        if conn is not None:
            try:
                conn.execute("SELECT 1")
                return
            except psycopg.Error:
                log.info(
                    "session store %s: the lease lock's connection broke; taking it again",
                    self.name,
                )
                self._put_back(conn)
        with self.errors("take the lease lock"):
            pool = self._pool_here()
            conn = pool.getconn(self.connect_timeout)
            try:
                conn.execute("SELECT pg_advisory_lock(%s::int8)", (_holder_key(holder),))
            except BaseException:
                pool.putconn(conn)
                raise
        with self._lock:
            self._claims[holder] = conn

    def release(self, holder: str) -> None:
        """Drop ``holder``'s lock and give its connection back; never raises."""
        with self._lock:
            conn = self._claims.pop(holder, None)
        if conn is None:
            return
        with contextlib.suppress(Exception):
            conn.execute("SELECT pg_advisory_unlock(%s::int8)", (_holder_key(holder),))
        self._put_back(conn)

    def close_thread(self) -> None:
        """Nothing to do: connections belong to the pool, not to threads."""

    def close(self) -> None:
        """Release every lock, close the pool; later use raises SessionError."""
        with self._lock:
            self._closed = True
            claims = list(self._claims.values())
            self._claims.clear()
            pool, self._pool = (self._pool, None) if self._pid == os.getpid() else (None, None)
        for conn in claims:
            with contextlib.suppress(Exception):
                conn.close()
        if pool is not None:
            pool.close()

    # -- errors ----------------------------------------------------------------

    @contextmanager
    def errors(self, operation: str) -> Iterator[None]:
        """Translate any psycopg error raised in the block (see the module doc)."""
        import psycopg
        from psycopg_pool import PoolClosed, PoolTimeout

        try:
            yield
        except psycopg.Error as err:
            if self._closed or isinstance(err, PoolClosed):
                raise SessionError(f"session store {self.name} is closed", store=self.name) from err
            if isinstance(err, psycopg.errors.LockNotAvailable):
                raise AgentTimeoutError(
                    f"session store {self.name}: {operation} waited over {self.busy_timeout} s "
                    "for the session's lock",
                    operation=operation,
                    budget=self.busy_timeout,
                ) from err
            if isinstance(err, PoolTimeout):
                raise SessionError(
                    f"session store {self.name}: {operation} got no connection within "
                    f"{self.connect_timeout} s (the server is unreachable, or all "
                    f"{self.pool_size} connections are in use)",
                    store=self.name,
                ) from err
            raise SessionError(
                f"session store {self.name}: {operation} failed: {_first_line(err)}",
                store=self.name,
            ) from err

    # -- helpers -----------------------------------------------------------------

    def _connect_options(self) -> dict[str, Any]:
        lock_ms = max(1, round(self.busy_timeout * 1000))
        return {
            "autocommit": True,
            "connect_timeout": max(2, round(self.connect_timeout)),
            "options": f"-c search_path={self.schema} -c lock_timeout={lock_ms}",
            "application_name": "agent_smith-sessions",
        }

    def _prepare(self) -> None:
        """Connect once (an unreachable server fails here), then check or set up the schema."""
        import psycopg

        try:
            conn = psycopg.connect(self.url, **self._connect_options())
        except psycopg.Error as err:
            raise SessionError(
                f"cannot reach the session store {self.name}: {_first_line(err)}",
                store=self.name,
            ) from err
        with conn, self.errors("open"):
            sql = _Sql(conn)
            sql.execute("BEGIN")
            sql.execute("SELECT pg_advisory_xact_lock(?::int4, hashtext(?))", (SESSION_LOCKS, ""))
            found = self._version(sql)
            if found is None:
                sql.execute(f"CREATE SCHEMA IF NOT EXISTS {self.schema}")
                schema.create(sql, _CREATE, self.name)
            elif found < schema.SCHEMA_VERSION:
                schema.migrate(sql, found, self.name)
            sql.execute("COMMIT")

    def _version(self, sql: _Sql) -> int | None:
        rows = sql.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = ?",
            (self.schema,),
        ).fetchall()
        columns: dict[str, set[str]] = {}
        for table, column in rows:
            columns.setdefault(table, set()).add(column)

        def read_meta() -> dict[str, str] | None:
            if not {"key", "value"} <= columns["meta"]:
                return None  # a 'meta' table of some other shape
            return {str(k): str(v) for k, v in sql.execute("SELECT key, value FROM meta")}

        kind = f"a PostgreSQL schema ({self.schema})"
        return schema.version(columns, read_meta, self.name, kind)

    def _pool_here(self) -> ConnectionPool[Any]:
        """This process's pool, made on first use (see the module doc)."""
        from psycopg_pool import ConnectionPool

        with self._lock:
            if self._closed:
                raise SessionError(f"session store {self.name} is closed", store=self.name)
            if self._pool is not None and self._pid == os.getpid():
                return self._pool
            self._pool = ConnectionPool(
                self.url,
                kwargs=self._connect_options(),
                min_size=1,
                max_size=self.pool_size,
                timeout=self.connect_timeout,
                check=ConnectionPool.check_connection,
                name=f"agent_smith-sessions-pg-{next(_pool_ids)}",
                num_workers=1,
                open=True,
            )
            self._pid = os.getpid()
            self._claims.clear()  # a parent's connections are not ours to use
            return self._pool

    @contextmanager
    def _transaction(self, operation: str, begin: str) -> Iterator[_Sql]:
        import psycopg

        with self.errors(operation), self._pool_here().connection() as conn:
            sql = _Sql(conn)
            sql.execute(begin)
            try:
                yield sql
            except BaseException:
                with contextlib.suppress(psycopg.Error):
                    conn.execute("ROLLBACK")
                raise
            sql.execute("COMMIT")

    def _put_back(self, conn: psycopg.Connection[Any]) -> None:
        with self._lock:
            pool = self._pool if self._pid == os.getpid() else None
        if pool is None:
            conn.close()
            return
        with contextlib.suppress(Exception):
            pool.putconn(conn)


class _Sql:
    """A psycopg connection as :class:`~agent_smith.sessions.sql.Sql`: ``?`` placeholders."""

    __slots__ = ("_conn",)

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def execute(self, statement: str, parameters: Sequence[Any] = (), /) -> Rows:
        return self._conn.execute(_dialect(statement), parameters)

    def executemany(self, statement: str, parameters: Iterable[Sequence[Any]], /) -> Rows:
        cursor = self._conn.cursor()
        cursor.executemany(_dialect(statement), list(parameters))
        return cursor


@functools.lru_cache(maxsize=64)
def _dialect(statement: str) -> str:
    """``statement`` with psycopg's placeholders (ours never hold a literal ``?`` or ``%``)."""
    return statement.replace("?", "%s")


def _holder_key(holder: str) -> int:
    """The 64-bit advisory lock key of a lease holder."""
    digest = hashlib.blake2b(holder.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _first_line(err: BaseException) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
