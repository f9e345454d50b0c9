"""The session store's schema: its version, telling our stores from anyone else's, migrations.

Every store keeps the same tables: ``meta`` (the format, ``agent_smith.sessions``,
and the schema version), ``sessions`` (one row per conversation: revision,
paused turn, timestamps), ``messages`` (one row per message, the JSON form of
``messages_to_json``, in insertion order) and ``leases`` (the turn lease, see
:mod:`.lease`). Opening a store, in every store alike:

* an empty one (a new SQLite file, a PostgreSQL schema that does not exist
  yet) gets the tables at :data:`SCHEMA_VERSION`;
* an older version is migrated forward at once, in one transaction, by the
  statements of :data:`MIGRATIONS` (written in SQL both stores run);
* a newer version is a :class:`ConfigError` (upgrade agent_smith: an older
  library must not write a format it does not know);
* anything else — a file that is not SQLite, another application's tables, a
  store missing tables — is a :class:`SessionError`, and nothing is written:
  nothing is changed in a database we do not recognise.

This module also sets up SQLite files (WAL mode and the tables' SQLite
form); PostgreSQL's form is :mod:`.postgres_database`'s.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Collection

from ..errors import ConfigError, SessionError
from .database import Database
from .sql import Sql

log = logging.getLogger(__name__)

FORMAT = "agent_smith.sessions"
SCHEMA_VERSION = 1

#: ``MIGRATIONS[n]``: the statements that take a store from version ``n - 1`` to ``n``.
MIGRATIONS: dict[int, tuple[str, ...]] = {}

TABLES = ("leases", "messages", "meta", "sessions")

_CREATE_SQLITE = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE sessions ("
    " session_id TEXT PRIMARY KEY, revision INTEGER NOT NULL, paused_turn TEXT,"
    " created_at REAL NOT NULL, updated_at REAL NOT NULL)",
    "CREATE TABLE messages ( id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, body TEXT NOT NULL)",
    "CREATE INDEX messages_by_session ON messages (session_id, id)",
    "CREATE TABLE leases ("
    " session_id TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at REAL NOT NULL)",
)


def version(
    names: Collection[str], read_meta: Callable[[], dict[str, str] | None], store: str, kind: str
) -> int | None:
    """The store's schema version, None when it has no tables yet; raise for anything else.

    ``names`` are the tables found, ``read_meta()`` the ``meta`` table's
    rows (None when it is not of our shape), ``kind`` what the store is ("a
    SQLite database").
    """
    if not names:
        return None
    foreign = SessionError(
        f"{store} is {kind} but not an agent_smith session store "
        f"(tables: {', '.join(sorted(names))}); give sessions a store of their own",
        store=store,
    )
    meta = read_meta() if "meta" in names else None
    if meta is None or meta.get("format") != FORMAT:
        raise foreign
    try:
        found = int(meta["schema_version"])
    except (KeyError, TypeError, ValueError):
        raise SessionError(
            f"session store {store} has no valid schema_version in its meta table", store=store
        ) from None
    if found > SCHEMA_VERSION:
        raise ConfigError(
            f"session store {store} has schema version {found}, newer than the "
            f"{SCHEMA_VERSION} this agent_smith reads; upgrade agent_smith to open it"
        )
    missing = sorted(set(TABLES) - set(names))
    if found < 1 or missing:
        raise SessionError(
            f"session store {store} is damaged (schema version {found}, "
            f"missing tables: {', '.join(missing) or 'none'})",
            store=store,
        )
    return found


def create(conn: Sql, statements: Collection[str], store: str) -> None:
    """Make an empty store one of :data:`SCHEMA_VERSION` with ``statements`` (its tables)."""
    for statement in statements:
        conn.execute(statement)
    conn.executemany(
        "INSERT INTO meta (key, value) VALUES (?, ?)",
        (("format", FORMAT), ("schema_version", str(SCHEMA_VERSION))),
    )
    log.debug("session store %s: created schema version %d", store, SCHEMA_VERSION)


def migrate(conn: Sql, found: int, store: str) -> None:
    """Bring a store of version ``found`` to :data:`SCHEMA_VERSION` (inside a write)."""
    for target in range(found + 1, SCHEMA_VERSION + 1):
        for statement in MIGRATIONS[target]:
            conn.execute(statement)
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
    log.info("session store %s: migrated schema version %d to %d", store, found, SCHEMA_VERSION)


def prepare(db: Database) -> None:
    """Check ``db`` is a SQLite session store this version reads; set up or migrate it."""
    with db.read("open") as conn:
        found = _sqlite_version(conn, db.path)
    if found == SCHEMA_VERSION:
        return
    if found is None:
        with db.alone("open") as conn:
            # Persistent: set once, every later connection of every process is in WAL mode.
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            log.warning(
                "session store %s: WAL mode unavailable (%s); writers block readers", db.path, mode
            )
    with db.write("open") as (conn, _now):
        found = _sqlite_version(conn, db.path)  # as it is now we hold the lock
        if found is None:
            create(conn, _CREATE_SQLITE, db.path)
        elif found < SCHEMA_VERSION:
            migrate(conn, found, db.path)


def _sqlite_version(conn: sqlite3.Connection, store: str) -> int | None:
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def read_meta() -> dict[str, str] | None:
        try:
            return dict(conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.OperationalError:  # a 'meta' table of some other shape
            return None

    return version(names, read_meta, store, "a SQLite database")
