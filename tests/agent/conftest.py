"""Fixtures for the agent tests: a runtime and an LLM client on the scripted server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_smith.llm.client import LlmClient
from agent_smith.runtime import Runtime
from agent_smith.tools.base import Tool
from tests.support.approvals import Ledger, marked_tools
from tests.support.llm_server import ScriptedLlmServer

#: Generous bound for anything the tests wait on (a bug fails, never hangs).
WAIT = 10.0


@pytest.fixture(autouse=True)
def _no_leaks(no_thread_leak: None) -> None:
    """Every agent test leaves no agent_smith thread behind."""


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    with Runtime(max_workers=8) as rt:
        yield rt


@pytest.fixture
def llm(llm_server: ScriptedLlmServer, runtime: Runtime) -> LlmClient:
    return LlmClient(llm_server.url, "test", runtime=runtime, max_retries=0)


@pytest.fixture
def ledger() -> Ledger:
    """What the approval tests' tools did."""
    return Ledger()


@pytest.fixture
def tools(ledger: Ledger) -> list[Tool]:
    """delete_file (asks), pay (asks over 100), look (never asks): tests/support/approvals.py."""
    return marked_tools(ledger)
