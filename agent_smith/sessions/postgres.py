"""PostgresSession: conversations in PostgreSQL, for worker processes on many hosts.

The same contract, rows and errors as
:class:`~agent_smith.sessions.sqlite.SqliteSession` (both are
:class:`~agent_smith.sessions.stored.StoredSession`), on a PostgreSQL server
that every worker of every host reaches: psycopg 3 with a connection pool
(the extra ``[postgres]``, imported only when a PostgreSQL store opens). A
turn's lease is tied to its holder's own connection, so a worker that dies
on any host frees its conversations at once; the server's locks, clock and
errors are :mod:`.postgres_database`'s.

``PostgresSession(url, session_id)`` opens a pool of its own, closed with the
session; an application that opens a session per request shares one pool
through :class:`~agent_smith.sessions.store.SessionStore`.
"""

from __future__ import annotations

from .postgres_database import DEFAULT_SCHEMA, PostgresDatabase
from .stored import StoredSession, check_options


class PostgresSession(StoredSession):
    """One conversation (``session_id``) in the PostgreSQL session store at ``url``.

    ``url`` is a libpq URL (``postgresql://user:password@host:5432/db``). The
    tables live in the PostgreSQL schema ``schema`` (created on first use;
    the database may be an application's own). Options as for
    :class:`~agent_smith.sessions.sqlite.SqliteSession` — ``lease_seconds``
    (30: how long the claim of a worker whose host vanished outlives it),
    ``busy_timeout`` (5 s: how long a write waits for another writer of the
    same session) — and ``connect_timeout`` (10 s: how long an operation waits
    for a connection), ``pool_size`` (10 connections at most).

    Raises :class:`~agent_smith.errors.SessionError` at once when the server
    cannot be reached. Thread-safe; ``close()`` releases a held lease and
    closes the pool.
    """

    def __init__(
        self,
        url: str,
        session_id: str,
        *,
        lease_seconds: float = 30.0,
        busy_timeout: float = 5.0,
        connect_timeout: float = 10.0,
        pool_size: int = 10,
        schema: str = DEFAULT_SCHEMA,
    ) -> None:
        check_options(session_id, lease_seconds, busy_timeout)
        database = PostgresDatabase(
            url,
            busy_timeout=busy_timeout,
            connect_timeout=connect_timeout,
            pool_size=pool_size,
            schema_name=schema,
        )
        super().__init__(database, session_id, lease_seconds=lease_seconds, owned=True)

    @classmethod
    def in_store(
        cls, database: PostgresDatabase, session_id: str, *, lease_seconds: float = 30.0
    ) -> PostgresSession:
        """A session on an open store's shared pool; closing it leaves the pool open."""
        check_options(session_id, lease_seconds, database.busy_timeout)
        session = cls.__new__(cls)
        StoredSession.__init__(
            session, database, session_id, lease_seconds=lease_seconds, owned=False
        )
        return session

    @property
    def url(self) -> str:
        """The store's URL, without its password."""
        return self._db.name
