"""``AGENT_SMITH_REQUIRE_ALL=1``: a skipped test fails, with the reason it gave for skipping.

A test that needs a peer (xllamacpp, a model, an npm server, a browser, an
optional package) skips saying what is missing, so a partial checkout still
runs what it can. CI (``.ci/run``) sets the variable: there a skip hides a
test that did not run, so every skip — a ``pytest.skip`` in a test or a
fixture, a ``skipif`` mark, an ``importorskip`` at module level — is turned
into a failure here, in one place. Expected failures (``xfail``) are left alone.

A pytest plugin, loaded by tests/conftest.py.
"""

from __future__ import annotations

import os

import pytest
from _pytest.reports import BaseReport

#: The variable, and the value that turns skips into failures.
VARIABLE = "AGENT_SMITH_REQUIRE_ALL"


def required() -> bool:
    """Whether this run allows no skip."""
    return os.environ.get(VARIABLE) == "1"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport:
    report: pytest.TestReport = yield
    if report.skipped and not hasattr(report, "wasxfail") and required():
        _fail(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> pytest.CollectReport:
    report: pytest.CollectReport = yield
    if report.skipped and required():
        _fail(report)
    return report


def _fail(report: BaseReport) -> None:
    skipped = report.longrepr
    reason = skipped[2] if isinstance(skipped, tuple) else str(skipped)
    reason = reason.removeprefix("Skipped: ")
    report.outcome = "failed"
    report.longrepr = f"skipped, but {VARIABLE}=1 allows no skip: {reason}"
