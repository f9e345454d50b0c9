"""Fixtures of the durable tests: an engine on a fresh database, SQLite and then PostgreSQL
(DBOS is the extra)."""

from __future__ import annotations

import itertools
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
