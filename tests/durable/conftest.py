"""Fixtures of the durable tests: an engine on a fresh SQLite database (DBOS is the extra)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("dbos")

from agent_smith.base.json_fields import JsonObject
from agent_smith.durable import DurableEngine

#: Generous bound for a wait on another thread or process.
WAIT = 60.0


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[DurableEngine]:
    """An engine on ``tmp_path/turns.sqlite``, not launched yet (register agents first)."""
    with DurableEngine(tmp_path / "turns.sqlite") as opened:
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
