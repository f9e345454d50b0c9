"""What the eval tests share: a runtime for factory-made agents, closed before the leak check."""

from __future__ import annotations

import pytest

from agent_smith import Runtime


@pytest.fixture
def rt(no_thread_leak: None, runtime: Runtime) -> Runtime:
    """The test's runtime; its worker threads are gone before ``no_thread_leak`` looks."""
    return runtime
