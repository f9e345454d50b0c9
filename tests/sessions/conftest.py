"""What the session tests share: a database path, sessions closed after the test, a tool
that blocks until released, work on many threads, and raw SQL behind the library's back.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_smith import LlmClient, Runtime, SqliteSession, tool
from tests.support.background import Background
from tests.support.llm_server import ScriptedLlmServer

#: Generous bound for anything the tests wait on (a bug fails, never hangs).
WAIT = 10.0

OpenSession = Callable[..., SqliteSession]


@pytest.fixture(autouse=True)
def _no_leaks(no_thread_leak: None) -> None:
    """Every session test leaves no agent_smith thread (lease keepers) behind."""


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Where the test's session store lives (created on first open)."""
    return tmp_path / "sessions.db"


@pytest.fixture
def open_session(db: Path) -> Iterator[OpenSession]:
    """``open_session(session_id="s", path=db, **options)``: a SqliteSession closed at the end."""
    opened: list[SqliteSession] = []

    def open_(session_id: str = "s", path: Path | None = None, **options: Any) -> SqliteSession:
        session = SqliteSession(path if path is not None else db, session_id, **options)
        opened.append(session)
        return session

    yield open_
    for session in opened:
        session.close()


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


def lease_row(db: Path, session_id: str = "s") -> tuple[str, float] | None:
    """The session's lease as stored: ``(holder, expires_at)``, None when nobody holds it."""
    rows = sql(db, "SELECT holder, expires_at FROM leases WHERE session_id = ?", session_id)
    return (rows[0][0], rows[0][1]) if rows else None


def lapse_lease(db: Path, session_id: str = "s") -> None:
    """Make the lease look as if its holder stopped renewing long ago."""
    sql(db, "UPDATE leases SET expires_at = ? WHERE session_id = ?", time.time() - 1, session_id)
