"""A pytest helper: fail the test when an eval scores under a threshold.

::

    def test_agent_is_good_enough():
        report = evaluate(Dataset.load("cases.jsonl"), make_agent, repeat=3)
        assert_eval(report, min_pass_rate=0.8)

The failure message is the report's table, so the test log says which
cases failed and why. Plain ``assert`` underneath: no pytest import, any
test runner shows it.
"""

from __future__ import annotations

from .report import EvalReport
from .table import percent


def assert_eval(report: EvalReport, min_pass_rate: float, *, metric: str = "pass_rate") -> None:
    """Raise AssertionError (with the report's table) if ``metric`` is under ``min_pass_rate``."""
    got = report.metric(metric)
    if got < min_pass_rate:
        raise AssertionError(
            f"eval {report.name!r}: {metric} {percent(got)} is under {percent(min_pass_rate)}\n"
            f"{report.table()}"
        )
