"""SqliteSession: conversations in one SQLite file, safe for many threads and worker processes.

The built-in :class:`~agent_smith.sessions.session.Session`, on the standard
library's ``sqlite3`` and nothing else: no server, one file that every
worker process of an application opens. WAL mode lets readers run while a
writer commits; each thread has its own connection; every append is one
short write transaction (a few statements, no fsync in the default
``synchronous="normal"``, so a killed process loses nothing it committed;
``"full"`` also survives a power cut, at the cost of an fsync per message).
What every store shares (the statements, the lease rules, the rows' JSON) is
:class:`~agent_smith.sessions.stored.StoredSession`; the file format and its
version are :mod:`.schema`; connections and error translation
:mod:`.database`.
"""

from __future__ import annotations

import os
from typing import Literal

from ..errors import ConfigError
from . import schema
from .database import Database
from .stored import StoredSession, check_options


class SqliteSession(StoredSession):
    """One conversation (``session_id``) in the SQLite session store at ``path``.

    The file is created on first use and must be a store of its own (not an
    application's existing database). Options: ``lease_seconds`` (30) is how
    long a turn's claim outlives a worker that died mid-turn on another host;
    ``busy_timeout`` (5 s) how long a write waits for another writer's lock
    before AgentTimeoutError; ``synchronous`` ``"normal"`` (survives a killed
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
        check_options(session_id, lease_seconds, busy_timeout)
        database = open_database(path, busy_timeout=busy_timeout, synchronous=synchronous)
        super().__init__(database, session_id, lease_seconds=lease_seconds, owned=True)

    @classmethod
    def in_store(
        cls, database: Database, session_id: str, *, lease_seconds: float = 30.0
    ) -> SqliteSession:
        """A session on an open store's shared connections (:func:`open_database`);
        closing it leaves them open."""
        check_options(session_id, lease_seconds, database.busy_timeout)
        session = cls.__new__(cls)
        StoredSession.__init__(
            session, database, session_id, lease_seconds=lease_seconds, owned=False
        )
        return session

    @property
    def path(self) -> str:
        """The database file."""
        return self._db.name


def open_database(
    path: str | os.PathLike[str],
    *,
    busy_timeout: float = 5.0,
    synchronous: Literal["normal", "full"] = "normal",
) -> Database:
    """The SQLite session store at ``path``, checked (and set up or migrated) once.

    Sessions opened on it with :meth:`SqliteSession.in_store` share its
    connections (one per thread), so opening a session costs no connection
    and no schema check; ``close()`` closes them all.
    """
    where = os.fspath(path) if isinstance(path, (str, os.PathLike)) else path
    if not isinstance(where, str) or where in ("", ":memory:"):
        # ":memory:" would give every thread's connection a database of its own.
        raise ConfigError(f"SqliteSession needs the path of a database file, got {where!r}")
    if synchronous not in ("normal", "full"):
        raise ConfigError(f"synchronous must be 'normal' or 'full', got {synchronous!r}")
    database = Database(where, busy_timeout=busy_timeout, synchronous=synchronous)
    try:
        schema.prepare(database)
    except BaseException:
        database.close()
        raise
    return database
