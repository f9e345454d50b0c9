"""What the session tests share: the store under test (SQLite and PostgreSQL: one contract,
one suite), sessions closed after the test, a tool that blocks until released, work on many
threads, and raw SQL behind the library's back.
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_smith import (
    LlmClient,
    PostgresSession,
    Runtime,
    Session,
    SessionStore,
    SqliteSession,
    tool,
)
from agent_smith.sessions.postgres_database import DEFAULT_SCHEMA, SESSION_LOCKS
from tests.support.background import Background
from tests.support.llm_server import ScriptedLlmServer

#: Generous bound for anything the tests wait on (a bug fails, never hangs).
WAIT = 10.0

OpenSession = Callable[..., Session]


@pytest.fixture(autouse=True)
def _no_leaks(no_thread_leak: None) -> None:
    """Every session test leaves no agent_smith thread (lease keepers) behind."""


@pytest.fixture
def db(sqlite_store: Store) -> Path:
    """The SQLite store's file (created on first open), for SQLite's own tests."""
    return Path(sqlite_store.where)


class Store:
    """The session store under test: ``where`` (a file path or a database URL) and its
    ``kind``; opens sessions on it and reaches its rows behind the library's back.

    ``kind`` ``"sqlite-shared"``: SQLite sessions opened from a ``SessionStore``, which
    share its connections (one store per set of options), as the web app opens them;
    with ``store_per_open`` each session opens a store of its own (tests of opening).
    """

    def __init__(self, kind: str, where: str) -> None:
        self.kind = "sqlite" if kind == "sqlite-shared" else kind
        self.shared = kind == "sqlite-shared"
        self.where = where
        self.opened: list[Session] = []
        self.stores: dict[str, SessionStore] = {}
        self.store_per_open = False

    def open(self, session_id: str = "s", **options: Any) -> Session:
        """A session of this store, closed at the end of the test."""
        if self.shared:
            key = repr(sorted(options.items())) + (str(len(self.opened)) * self.store_per_open)
            store = self.stores.setdefault(key, SessionStore(self.where, **options))
            session = store.open(session_id)
        else:
            opener = SqliteSession if self.kind == "sqlite" else PostgresSession
            session = opener(self.where, session_id, **options)
        self.opened.append(session)
        return session

    def sql(self, statement: str, *params: object) -> list[tuple[Any, ...]]:
        """Run one statement (``?`` placeholders) on the store, committed; its rows."""
        if self.kind == "sqlite":
            return sql(Path(self.where), statement, *params)
        import psycopg

        options = f"-c search_path={DEFAULT_SCHEMA}"
        with psycopg.connect(self.where, autocommit=True, options=options) as conn:
            cursor = conn.execute(statement.replace("?", "%s"), params)
            return cursor.fetchall() if cursor.description else []

    def hold(self, holder: str, session_id: str = "s") -> None:
        """Store a lease on ``session_id`` held by ``holder`` for the next hour."""
        self.open(session_id=session_id).messages()  # the store exists
        self.sql(
            "INSERT INTO leases (session_id, holder, expires_at) VALUES (?, ?, ?)"
            " ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder,"
            " expires_at = excluded.expires_at",
            session_id,
            holder,
            time.time() + 3600,
        )

    @contextlib.contextmanager
    def write_locked(self, session_id: str = "s") -> Iterator[None]:
        """Another connection in the middle of a long write of ``session_id``."""
        if self.kind == "sqlite":
            holder = sqlite3.connect(self.where, isolation_level=None)
            holder.execute("BEGIN IMMEDIATE")
            try:
                yield
            finally:
                holder.execute("ROLLBACK")
                holder.close()
            return
        import psycopg

        with psycopg.connect(self.where, autocommit=True) as conn:
            conn.execute("BEGIN")
            conn.execute(
                "SELECT pg_advisory_xact_lock(%s::int4, hashtext(%s))",
                (SESSION_LOCKS, session_id),
            )
            yield
            conn.execute("ROLLBACK")

    def close(self) -> None:
        for session in self.opened:
            session.close()
        for store in self.stores.values():
            store.close()


@pytest.fixture(params=["sqlite", "sqlite-shared", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """Each store in turn: a SQLite file (sessions of their own, then sessions sharing a
    ``SessionStore``'s connections), then a fresh PostgreSQL database."""
    if request.param != "postgres":
        where = str(tmp_path / "sessions.db")
    else:
        where = request.getfixturevalue("postgres_url")
    opened = Store(request.param, where)
    yield opened
    opened.close()


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[Store]:
    """A SQLite store, for what only SQLite has (files, pragmas, process ids)."""
    opened = Store("sqlite", str(tmp_path / "sessions.db"))
    yield opened
    opened.close()


@pytest.fixture
def open_session(store: Store) -> OpenSession:
    """``open_session(session_id="s", **options)``: a session of the store under test."""
    return store.open


@pytest.fixture
def llm(llm_server: ScriptedLlmServer, runtime: Runtime) -> LlmClient:
    """A client of the scripted server (tests/support/llm_server.py), no retries."""
    return LlmClient(llm_server.url, "test", runtime=runtime, max_retries=0)


class Blocker:
    """A tool that says when it started and returns only once the test lets it."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()

        @tool
        def lookup(city: str) -> str:
            """Look a city up (blocks until the test releases it)."""
            self.started.set()
            self.release.wait(WAIT)
            return f"{city}: sunny"

        self.tool = lookup


@pytest.fixture
def blocker() -> Iterator[Blocker]:
    b = Blocker()
    yield b
    b.release.set()


def on_threads(count: int, work: Callable[[int], object]) -> None:
    """Run ``work(0)`` ... ``work(count - 1)``, each on a thread of its own, and wait for all.

    Re-raises the first exception a thread raised (so a failure shows its
    traceback); a thread still running after a generous bound fails the test.
    """
    jobs = [Background(functools.partial(work, i), name=f"test-thread-{i}") for i in range(count)]
    for job in jobs:
        assert job.join(3 * WAIT), f"{job.thread.name} did not finish"
    for job in jobs:
        if job.error is not None:
            raise job.error


def sql(db: Path, statement: str, *params: object) -> list[tuple[Any, ...]]:
    """Run one statement on the file ``db`` behind the library's back (committed); its rows."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(statement, params).fetchall()
        conn.commit()
        return rows
    finally:
        conn.close()


def lease_row(store: Store, session_id: str = "s") -> tuple[str, float] | None:
    """The session's lease as stored: ``(holder, expires_at)``, None when nobody holds it."""
    rows = store.sql("SELECT holder, expires_at FROM leases WHERE session_id = ?", session_id)
    return (rows[0][0], rows[0][1]) if rows else None


def lapse_lease(store: Store, session_id: str = "s") -> None:
    """Make the lease look as if its holder stopped renewing long ago."""
    store.sql("UPDATE leases SET expires_at = ? WHERE session_id = ?", time.time() - 1, session_id)
