"""Fixtures of the durable tests: an engine on a fresh database, SQLite and then PostgreSQL
(DBOS is the extra), and worker processes that work the durable queues
(tests/durable/queue_worker.py)."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("dbos")

from agent_smith.base.json_fields import JsonObject
from agent_smith.durable import DurableEngine

#: Generous bound for a wait on another thread or process.
WAIT = 60.0


@pytest.fixture(params=["sqlite", "postgres"])
def new_database(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], str]:
    """``new_database()``: a fresh durable database each call, a SQLite file in ``tmp_path``
    or a new database on the test PostgreSQL server (each test runs on both)."""
    if request.param == "postgres":
        server = request.getfixturevalue("postgres_server")
        new: Callable[[], str] = server.new_database
        return new
    numbers = itertools.count()
    return lambda: str(tmp_path / f"turns-{next(numbers)}.sqlite")


@pytest.fixture
def engine(new_database: Callable[[], str]) -> Iterator[DurableEngine]:
    """An engine on a fresh database, not launched yet (register agents first)."""
    with DurableEngine(new_database()) as opened:
        yield opened


def wait_until(probe: Callable[[], list[JsonObject]]) -> list[JsonObject]:
    """``probe()`` once it is not empty (polled, bounded by :data:`WAIT`)."""
    pause = threading.Event()
    for _ in range(int(WAIT / 0.05)):
        found = probe()
        if found:
            return found
        pause.wait(0.05)
    raise AssertionError("never happened")


ROOT = Path(__file__).resolve().parents[2]


class Workers:
    """Two worker processes on one database (tests/durable/queue_worker.py), ready to work."""

    def __init__(self, database: Path, workdir: Path) -> None:
        self.workdir = workdir
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.processes = [
            subprocess.Popen(
                [sys.executable, "-m", "tests.durable.queue_worker", str(database), str(workdir)],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
            for _ in range(2)
        ]
        pause = threading.Event()
        for _ in range(int(WAIT / 0.1)):
            if len(list(workdir.glob("ready.*"))) == 2:
                return
            for process in self.processes:
                assert process.poll() is None, process.communicate()[0].decode(errors="replace")
            pause.wait(0.1)
        raise AssertionError("the workers never got ready")

    @property
    def pids(self) -> set[str]:
        return {str(p.pid) for p in self.processes}

    def stop(self) -> None:
        (self.workdir / "stop").write_text("")
        for process in self.processes:
            out, _ = process.communicate(timeout=WAIT)
            assert process.returncode == 0, out.decode(errors="replace")


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[Workers]:
    database = tmp_path / "turns.sqlite"
    with DurableEngine(database) as engine:
        engine.launch()  # DBOS's tables, before the workers start together
    running = Workers(database, tmp_path)
    try:
        yield running
    finally:
        running.stop()
