"""Fixtures for the session tests: a database path and sessions closed after the test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_smith import LlmClient, Runtime, SqliteSession
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
