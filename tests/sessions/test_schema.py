"""The store's format and version: new stores set up, older ones migrated, newer versions
and strangers refused."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agent_smith import ConfigError, SessionError, SqliteSession, UserMessage
from agent_smith.sessions import schema
from agent_smith.sessions.schema import FORMAT, SCHEMA_VERSION
from tests.sessions.conftest import WAIT, Store, on_threads, sql


def test_a_new_store_gets_a_versioned_meta_table(store: Store) -> None:
    store.open()
    assert dict(store.sql("SELECT key, value FROM meta")) == {  # type: ignore[arg-type]
        "format": FORMAT,
        "schema_version": str(SCHEMA_VERSION),
    }


def test_a_new_file_gets_wal_mode(sqlite_store: Store, db: Path) -> None:
    sqlite_store.open()
    assert sql(db, "PRAGMA journal_mode") == [("wal",)]


def test_threads_opening_a_new_file_at_once_all_get_the_store(tmp_path: Path) -> None:
    # Switching a new file to WAL needs the file to itself: two threads switching
    # while a third writes once deadlocked in SQLite, and one open failed at once
    # as "waited over 5.0 s for the database lock" (about 1 round in 100).
    for round_ in range(100):
        path = tmp_path / f"new-{round_}.db"
        start = threading.Barrier(8)

        def open_it(i: int, path: Path = path, start: threading.Barrier = start) -> None:
            start.wait(WAIT)
            session = SqliteSession(path, f"user-{i}")
            try:
                session.append(UserMessage(str(i)))
            finally:
                session.close()

        on_threads(8, open_it)
        assert sql(path, "PRAGMA journal_mode") == [("wal",)]


def test_an_existing_empty_file_becomes_a_store(sqlite_store: Store, db: Path) -> None:
    db.write_bytes(b"")
    sqlite_store.open().append(UserMessage("hi"))
    assert sqlite_store.open().messages() == [UserMessage("hi")]


@pytest.fixture
def store(store: Store) -> Store:
    """The store under test, each session opening it anew: opening is what is tested here
    (the sessions of one ``SessionStore`` share the check it made when it opened)."""
    store.store_per_open = True
    return store


def test_a_newer_schema_version_is_a_config_error(store: Store) -> None:
    store.open().append(UserMessage("written by a newer agent_smith"))
    store.sql(f"UPDATE meta SET value = '{SCHEMA_VERSION + 1}' WHERE key = 'schema_version'")
    with pytest.raises(ConfigError, match=r"schema version 2, newer than the 1 .* upgrade"):
        store.open()


def test_an_older_schema_is_migrated_forward_on_open_keeping_the_conversations(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.open().append(UserMessage("written by an older agent_smith"))
    monkeypatch.setattr(schema, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    migration = ("ALTER TABLE sessions ADD COLUMN title TEXT",)
    monkeypatch.setitem(schema.MIGRATIONS, SCHEMA_VERSION + 1, migration)
    assert store.open().messages() == [UserMessage("written by an older agent_smith")]
    assert dict(store.sql("SELECT key, value FROM meta"))["schema_version"] == "2"
    assert store.sql("SELECT title FROM sessions") == [(None,)]  # the migration ran, once
    store.open().append(UserMessage("and by the newer one"))
    assert len(store.open().messages()) == 2


def _untouched(path: Path) -> None:
    assert not path.with_name(path.name + "-wal").exists()
    assert not path.with_name(path.name + "-journal").exists()


def test_a_file_that_is_not_sqlite_is_a_session_error_and_stays_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    content = b"my shopping list\n" * 300
    path.write_bytes(content)
    with pytest.raises(SessionError, match=r"notes\.txt is not a SQLite database") as caught:
        SqliteSession(path, "s")
    assert caught.value.store == str(path)
    assert path.read_bytes() == content
    _untouched(path)


def test_another_applications_database_is_refused_and_stays_untouched(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    sql(path, "CREATE TABLE users (id INTEGER, name TEXT)")
    sql(path, "INSERT INTO users VALUES (1, 'ann')")
    content = path.read_bytes()
    with pytest.raises(SessionError, match=r"not an agent_smith session store \(tables: users\)"):
        SqliteSession(path, "s")
    assert path.read_bytes() == content
    assert sql(path, "PRAGMA journal_mode") == [("delete",)]
    _untouched(path)


@pytest.mark.parametrize(
    "statements",
    [
        ("CREATE TABLE meta (name TEXT)",),  # a 'meta' table of another shape
        ("CREATE TABLE meta (key TEXT, value TEXT)", "INSERT INTO meta VALUES ('format', 'x')"),
    ],
)
def test_a_foreign_meta_table_is_refused(tmp_path: Path, statements: tuple[str, ...]) -> None:
    path = tmp_path / "other.db"
    for statement in statements:
        sql(path, statement)
    with pytest.raises(SessionError, match="not an agent_smith session store"):
        SqliteSession(path, "s")


def test_a_store_without_a_valid_version_is_refused(store: Store) -> None:
    store.open()
    store.sql("UPDATE meta SET value = 'one' WHERE key = 'schema_version'")
    with pytest.raises(SessionError, match="no valid schema_version"):
        store.open()


def test_a_store_missing_a_table_is_damaged(store: Store) -> None:
    store.open()
    store.sql("DROP TABLE leases")
    with pytest.raises(SessionError, match=r"is damaged .* missing tables: leases"):
        store.open()


def test_a_corrupt_file_is_a_session_error(sqlite_store: Store, db: Path) -> None:
    session = sqlite_store.open()
    session.replace([UserMessage("x" * 2000) for _ in range(50)])
    session.close()
    sql(db, "PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(db.read_bytes())
    page = 4096
    data[page : len(data)] = b"\xa5" * (len(data) - page)  # every page after the first
    db.write_bytes(bytes(data))
    with pytest.raises(SessionError, match="is corrupt"):
        SqliteSession(db, "s").messages()


def test_a_directory_or_missing_folder_is_a_session_error(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match="failed"):
        SqliteSession(tmp_path, "s")
    with pytest.raises(SessionError, match="failed"):
        SqliteSession(tmp_path / "no" / "such" / "dir.db", "s")
