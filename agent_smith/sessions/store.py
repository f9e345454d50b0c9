"""SessionStore: where conversations are kept, named by a path or a URL; a session per id.

Everything that accepts "a session store" — :class:`~agent_smith.web.app.WebApp`'s
``sessions``, ``agent-smith web --sessions`` — takes one string and opens it
here, so the choice of store is the string alone:

* a path (``"conversations.db"``) is a SQLite file:
  :class:`~agent_smith.sessions.sqlite.SqliteSession` on it, every session of
  the store sharing its connections (one per thread: a web server's request
  threads open no connection and check no schema per request);
* a ``postgresql://`` (or ``postgres://``) URL is a PostgreSQL database:
  :class:`~agent_smith.sessions.postgres.PostgresSession` on it, every
  session of the store sharing one connection pool.

::

    store = SessionStore("postgresql://app@db.internal/app")
    with store.open("user-42/chat-1") as session:
        agent = Agent(llm, session=session)
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._internal.closing import Closeable
from ..errors import ConfigError
from .session import Session

if TYPE_CHECKING:
    from .database import Database

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(where: object) -> bool:
    """Whether ``where`` names a PostgreSQL database rather than a SQLite file."""
    return isinstance(where, str) and where.startswith(_POSTGRES_SCHEMES)


class SessionStore(Closeable):
    """The session store at ``where`` (a SQLite file path or a PostgreSQL URL).

    ``options`` go to the store's sessions (``lease_seconds``, ``busy_timeout``;
    SQLite: ``synchronous``; PostgreSQL: ``connect_timeout``, ``pool_size``,
    ``schema``: see :class:`~agent_smith.sessions.sqlite.SqliteSession` and
    :class:`~agent_smith.sessions.postgres.PostgresSession`). A PostgreSQL
    store connects now: an unreachable server is a SessionError here; a
    SQLite file is opened (and checked) by the first :meth:`open`.
    ``close()`` closes the pool or the file's connections (the sessions opened
    from it must be closed first).
    """

    def __init__(self, where: str | os.PathLike[str], **options: Any) -> None:
        self._options = options
        self._file: Database | None = None  # a SQLite file, opened by the first open()
        self._file_lock = threading.Lock()
        if is_postgres_url(where):
            from .postgres_database import PostgresDatabase

            lease_seconds = options.pop("lease_seconds", 30.0)
            schema = options.pop("schema", None)
            if schema is not None:
                options["schema_name"] = schema
            self._database: PostgresDatabase | None = PostgresDatabase(str(where), **options)
            self._options = {"lease_seconds": lease_seconds}
            self.where = self._database.name
            return
        text = os.fspath(where) if isinstance(where, (str, os.PathLike)) else where
        if not isinstance(text, str) or "://" in text:
            raise ConfigError(
                f"a session store is a SQLite file path or a postgresql:// URL, got {where!r}"
            )
        self._database = None
        self.where = text

    def open(self, session_id: str) -> Session:
        """The session ``session_id`` of this store (close it after use)."""
        if self._database is not None:
            from .postgres import PostgresSession

            return PostgresSession.in_store(self._database, session_id, **self._options)
        from .sqlite import SqliteSession

        options = dict(self._options)
        lease_seconds = options.pop("lease_seconds", 30.0)
        database = self._sqlite(options)
        return SqliteSession.in_store(database, session_id, lease_seconds=lease_seconds)

    def close(self) -> None:
        """Close the store's shared connections; calling it again does nothing."""
        if self._database is not None:
            self._database.close()
        with self._file_lock:
            if self._file is not None:
                self._file.close()

    def _sqlite(self, options: dict[str, Any]) -> Database:
        with self._file_lock:
            if self._file is None:
                from .sqlite import open_database

                self._file = open_database(self.where, **options)
            return self._file

    def __repr__(self) -> str:
        return f"SessionStore({self.where!r})"


def session_opener(
    sessions: str | os.PathLike[str] | Callable[[str], Session],
) -> tuple[Callable[[str], Session], SessionStore | None]:
    """A function from a session id to its session, and the store it opens them from.

    ``sessions`` itself when it is such a function (the store: None, it is the
    caller's); else the ``open`` of a new :class:`SessionStore` at that path or
    URL, which the caller closes when done.
    """
    if isinstance(sessions, str | os.PathLike):
        store = SessionStore(sessions)  # a SQLite file, or a postgresql:// URL
        return store.open, store
    if callable(sessions):
        return sessions, None
    raise ConfigError(
        "sessions must be a SQLite file path, a postgresql:// URL or a function of a session id"
    )
