"""A metrics collector installed for one test, removed after it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_smith import MetricsCollector


@pytest.fixture
def collector() -> Iterator[MetricsCollector]:
    collector = MetricsCollector().install()
    try:
        yield collector
    finally:
        collector.uninstall()
