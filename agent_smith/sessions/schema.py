"""The session database's schema, its version, and telling our files from anyone else's.

A session store is a SQLite file of its own. Its ``meta`` table names the
format (``agent_smith.sessions``) and the schema version. Opening a file:

* an empty file (or a new one) gets WAL mode and the tables;
* a store of this version or an older one is used (there is only version 1);
* a store of a newer version is a :class:`ConfigError` (upgrade agent_smith:
  an older library must not write a format it does not know);
* anything else — a file that is not SQLite, a SQLite database of another
  application, a store missing tables — is a :class:`SessionError`, and the
  file is left untouched: nothing is written to a file we do not recognise.

Tables: ``sessions`` (one row per conversation: revision, paused turn,
timestamps), ``messages`` (one row per message, the JSON form of
``messages_to_json``, in insertion order), ``leases`` (the turn lease, see
:mod:`.lease`).
"""

from __future__ import annotations

import logging
import sqlite3

from ..errors import ConfigError, SessionError
from .database import Database

log = logging.getLogger(__name__)

FORMAT = "agent_smith.sessions"
SCHEMA_VERSION = 1

_TABLES = ("leases", "messages", "meta", "sessions")

_CREATE = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE sessions ("
    " session_id TEXT PRIMARY KEY, revision INTEGER NOT NULL, paused_turn TEXT,"
    " created_at REAL NOT NULL, updated_at REAL NOT NULL)",
    "CREATE TABLE messages ( id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, body TEXT NOT NULL)",
    "CREATE INDEX messages_by_session ON messages (session_id, id)",
    "CREATE TABLE leases ("
    " session_id TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at REAL NOT NULL)",
)


def prepare(db: Database) -> None:
    """Check ``db`` is a session store this version reads; set up a new, empty one."""
    with db.read("open") as conn:
        version = _version(conn, db.path)
    if version is not None:
        return
    with db.errors("open"):
        # Persistent: set once, every later connection of every process is in WAL mode.
        mode = db.connection().execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        log.warning(
            "session store %s: WAL mode unavailable (%s); writers block readers", db.path, mode
        )
    with db.write("open") as conn:
        if _version(conn, db.path) is None:  # nobody created it while we waited for the lock
            for statement in _CREATE:
                conn.execute(statement)
            conn.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)",
                (("format", FORMAT), ("schema_version", str(SCHEMA_VERSION))),
            )
            log.debug("session store %s: created schema version %d", db.path, SCHEMA_VERSION)


def _version(conn: sqlite3.Connection, store: str) -> int | None:
    """The store's schema version, None for an empty database; raise for anything else."""
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not names:
        return None
    foreign = SessionError(
        f"{store} is a SQLite database but not an agent_smith session store "
        f"(tables: {', '.join(sorted(names))}); give sessions a file of their own",
        store=store,
    )
    if "meta" not in names:
        raise foreign
    try:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.OperationalError:  # a 'meta' table of some other shape
        raise foreign from None
    if meta.get("format") != FORMAT:
        raise foreign
    try:
        version = int(meta["schema_version"])
    except (KeyError, TypeError, ValueError):
        raise SessionError(
            f"session store {store} has no valid schema_version in its meta table", store=store
        ) from None
    if version > SCHEMA_VERSION:
        raise ConfigError(
            f"session store {store} has schema version {version}, newer than the "
            f"{SCHEMA_VERSION} this agent_smith reads; upgrade agent_smith to open it"
        )
    missing = sorted(set(_TABLES) - names)
    if version < 1 or missing:
        raise SessionError(
            f"session store {store} is damaged (schema version {version}, "
            f"missing tables: {', '.join(missing) or 'none'})",
            store=store,
        )
    return version
