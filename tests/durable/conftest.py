"""Fixtures of the durable tests: an engine on a fresh SQLite database (DBOS is the extra)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("dbos")

from agent_smith.durable import DurableEngine

#: Generous bound for a wait on another thread or process.
WAIT = 60.0


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[DurableEngine]:
    """An engine on ``tmp_path/turns.sqlite``, not launched yet (register agents first)."""
    with DurableEngine(tmp_path / "turns.sqlite") as opened:
        yield opened
