"""Fixtures for the toolkit tests: a workspace next to an outside folder, a tool context."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_smith.base.cancellation import CancellationSource
from agent_smith.llm.client import LlmClient
from agent_smith.runtime import Runtime
from agent_smith.tools.base import ToolContext
from tests.support.llm_server import ScriptedLlmServer


@pytest.fixture(autouse=True)
def _no_leaks(no_thread_leak: None) -> None:
    """Every toolkit test leaves no agent_smith thread behind."""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The workspace root: an empty folder."""
    folder = tmp_path / "root"
    folder.mkdir()
    return folder


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the workspace, holding a secret no tool may reach."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("the outside secret\n")
    return folder


@pytest.fixture
def context() -> Iterator[ToolContext]:
    """A context for calling a tool's ``invoke`` directly."""
    with Runtime() as runtime:
        yield ToolContext(
            CancellationSource().token, 30.0, "call_1", logging.getLogger("test"), runtime
        )


@pytest.fixture
def llm(llm_server: ScriptedLlmServer, runtime: Runtime) -> LlmClient:
    """A client of the scripted server, for tests that run an agent with a toolkit."""
    return LlmClient(llm_server.url, "test", runtime=runtime, max_retries=0)
