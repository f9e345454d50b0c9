"""Fixtures shared by the CLI's batch and eval command tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from tests.support.batch import answer
from tests.support.llm_server import ScriptedLlmServer


@pytest.fixture
def keep_sys_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Restore ``sys.path`` after the test: the batch and eval commands add the working folder."""
    monkeypatch.setattr(sys, "path", list(sys.path))


@pytest.fixture
def answering_server() -> Iterator[ScriptedLlmServer]:
    """A model server that answers each input as ``answer: <input>``."""
    with ScriptedLlmServer(answer) as s:
        yield s
