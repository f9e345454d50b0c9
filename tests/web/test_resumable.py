"""Following a turn's stream in the log, called as a WSGI function (no server, no model)."""

from __future__ import annotations

import gc
import io
import os
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_smith import Agent, LlmClient, ParseError, Session, SqliteEventLog, WebApp
from agent_smith.web.resumable import last_event


@pytest.fixture
def log(tmp_path: Path) -> Iterator[SqliteEventLog]:
    with SqliteEventLog(tmp_path / "events.db", poll_seconds=0.01) as events:
        yield events


@pytest.fixture
def app(tmp_path: Path, log: SqliteEventLog) -> Iterator[WebApp]:
    llm = LlmClient("http://127.0.0.1:9", "test")

    def build(session: Session) -> Agent:
        return Agent(llm, session=session)

    with WebApp(build, sessions=tmp_path / "c.db", streams=log) as web:
        yield web


def resume(app: WebApp, conversation: str, last_id: str) -> tuple[str, bytes]:
    seen: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        seen["status"] = status

    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": f"/api/chat/{conversation}/stream",
        "HTTP_LAST_EVENT_ID": last_id,
        "wsgi.input": io.BytesIO(b""),
    }
    body = app(environ, start_response)
    try:
        data = b"".join(body)
    finally:
        getattr(body, "close", lambda: None)()
    return seen["status"], data


def test_a_stream_whose_worker_died_ends_with_the_protocols_error(
    app: WebApp, log: SqliteEventLog
) -> None:
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead = f"{os.uname().nodename}:{child.stdout.strip()}::gone"
    log.writer_check_seconds = 0.0
    log.open_stream("local/c1#t1", conversation="local/c1", writer=dead)
    log.append(
        "local/c1#t1", 1, ['data: {"type":"start"}\n\n', 'data: {"type":"text-start","id":"a"}\n\n']
    )
    status, body = resume(app, "c1", "t1:1")
    assert status == "200 OK"
    text = body.decode()
    assert text.startswith(': t1 after 1\n\nid: t1:2\ndata: {"type":"text-start"')
    assert "the worker running this turn stopped before the end" in text
    assert text.endswith("data: [DONE]\n\n")


def test_a_thousand_reconnects_do_not_grow_memory(app: WebApp, log: SqliteEventLog) -> None:
    key = "local/c2#t2"
    log.open_stream(key, conversation="local/c2", writer="host:1:1:x")
    log.append(key, 1, [f'data: {{"type":"text-delta","delta":"{i}"}}\n\n' for i in range(20)])
    log.close_stream(key)
    for _ in range(100):  # warm up: caches, connections, interned strings
        assert resume(app, "c2", "t2:10")[0] == "200 OK"
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for i in range(1000):
            status, body = resume(app, "c2", f"t2:{i % 20}")
            assert status == "200 OK" and body.count(b"id: t2:") == 20 - i % 20
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    growth = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    assert growth < 64_000, f"1,000 reconnects kept {growth} bytes"
    assert log.waiting_streams() == 0


def test_a_last_event_id_must_name_a_turn_and_a_number() -> None:
    assert last_event("abc:12") == ("abc", 12)
    assert last_event(None) is None and last_event("") is None
    for bad in ("12", "abc:", "abc:x", "a/b:1", "a#b:2"):
        with pytest.raises(ParseError):
            last_event(bad)
