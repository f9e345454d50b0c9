"""Fixtures shared by the whole suite."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_smith.metrics import MetricsCollector
from agent_smith.runtime import Runtime
from tests.support.llm_server import ScriptedLlmServer

# Under AGENT_SMITH_REQUIRE_ALL=1 (CI) every skip fails, with its reason.
pytest_plugins = [
    "tests.support.require_all",
    "tests.support.postgres",
    "tests.support.browser",
]


def _ours(thread: threading.Thread) -> bool:
    return thread.name.startswith("agent_smith-")


@pytest.fixture
def no_thread_leak() -> Iterator[None]:
    """Fail the test if it leaves an agent_smith thread running.

    Threads are given a generous moment to finish joining: close() returns
    after join(), so a leak is a thread that never ends, not a slow one.
    """
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 10.0
    while True:
        leaked = [t for t in threading.enumerate() if t not in before and _ours(t) and t.is_alive()]
        if not leaked or time.monotonic() > deadline:
            break
        leaked[0].join(0.1)
    assert not leaked, f"threads left running: {[t.name for t in leaked]}"


@pytest.fixture
def llm_server() -> Iterator[ScriptedLlmServer]:
    """A scripted OpenAI-compatible server on 127.0.0.1 (see tests/support/llm_server.py)."""
    with ScriptedLlmServer() as server:
        yield server


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    """A fresh Runtime with default settings, closed after the test."""
    with Runtime() as rt:
        yield rt


@pytest.fixture
def collector() -> Iterator[MetricsCollector]:
    """A metrics collector installed for the test, removed after it."""
    collector = MetricsCollector().install()
    try:
        yield collector
    finally:
        collector.uninstall()


@pytest.fixture
def aws_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Made-up AWS credentials in the environment, and no AWS config files read."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
