"""Reports: the numbers, the JSON round trip, the HTML page, comparisons and the pytest helper."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent_smith import TokenUsage, UserMessage
from agent_smith.batch.result import ItemError
from agent_smith.evals import (
    CaseReport,
    CaseRun,
    EvalReport,
    EvalResult,
    RunReport,
    assert_eval,
)
from agent_smith.evals.stats import noise_band, pass_at_k, pass_hat_k, quantile, rate_error
from agent_smith.messages import AssistantMessage


def run(case: str, repeat: int, passed: bool, *, seconds: float = 1.0) -> RunReport:
    messages = (UserMessage(f"question {case}"), AssistantMessage("yes" if passed else "no <b>"))
    made = CaseRun(
        case,
        repeat,
        content="yes" if passed else "no <b>",
        messages=messages,
        usage=TokenUsage(10, 5, 15, cost=0.01),
        turns=1,
        seconds=seconds,
    )
    return RunReport(made, (EvalResult.of("contains", passed, "" if passed else "'yes' not in"),))


def report(name: str, results: dict[str, list[bool]]) -> EvalReport:
    k = max(len(v) for v in results.values())
    cases = tuple(
        CaseReport(ident, f"question {ident}", tuple(run(ident, r + 1, p) for r, p in enumerate(v)))
        for ident, v in results.items()
    )
    return EvalReport(name, cases, k)


def test_pass_at_k_and_pass_hat_k_estimators() -> None:
    assert pass_at_k(3, 0, 3) == 0.0 and pass_at_k(3, 1, 3) == 1.0
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)  # 1 - C(3,2)/C(4,2)
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)  # C(2,2)/C(4,2)
    assert pass_hat_k(3, 3, 3) == 1.0 and pass_hat_k(3, 2, 3) == 0.0
    assert quantile([1, 2, 3, 4], 0.5) == 2.5 and quantile([], 0.5) == 0.0


def test_the_report_numbers() -> None:
    r = report("x", {"a": [True, True, True], "b": [True, False, False], "c": [False] * 3})
    assert r.pass_rate == pytest.approx(4 / 9)
    assert (r.pass_at_k, r.pass_hat_k) == (pytest.approx(2 / 3), pytest.approx(1 / 3))
    assert r.repeat_rates == [pytest.approx(2 / 3), pytest.approx(1 / 3), pytest.approx(1 / 3)]
    assert r.standard_error == pytest.approx(rate_error([(1, 3), (1 / 3, 3), (0, 3)]))
    assert r.metric("pass@k") == r.pass_at_k and r.passes(0.4) and not r.passes(0.5)
    assert [c.id for c, _ in r.failures()] == ["b", "b", "c", "c", "c"]


def test_a_report_comes_back_equal_from_its_json(tmp_path: Path) -> None:
    r = report("x", {"a": [True, False], "b": [False, False]})
    broken = CaseReport("cases.jsonl:3", error="not valid JSON")
    r = EvalReport(r.name, (*r.cases, broken), r.repeat)
    path = tmp_path / "report.json"
    r.save(path)
    assert EvalReport.load(path) == r
    summary = json.loads(path.read_text())["summary"]
    assert summary["pass_rate"] == pytest.approx(1 / 6) and summary["runs"] == 4


def test_the_terminal_table_has_a_row_per_case_and_the_totals() -> None:
    text = report("demo", {"a": [True, True], "b": [True, False]}).table()
    lines = text.splitlines()
    assert lines[0].split() == ["case", "passed", "rate", "p50", "s", "failure"]
    assert lines[1].split()[:3] == ["a", "2/2", "100.0%"]
    assert lines[2].split()[:3] == ["b", "1/2", "50.0%"] and "contains: 'yes' not in" in lines[2]
    assert "pass rate 75.0%" in text and "pass@2 100.0%" in text and "pass^2 50.0%" in text


def test_the_html_page_is_self_contained_and_carries_its_numbers(tmp_path: Path) -> None:
    r = report("demo <x>", {"a": [True, True], "b": [True, False]})
    page = r.to_html()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    assert not re.search(r"(src|href)=\"https?:", page)
    assert 'data-metric="pass_rate" data-value="0.75"' in page
    assert 'data-metric="pass_at_k" data-value="1.0"' in page
    assert '<g data-case="b" data-value="0.5">' in page
    assert "demo &lt;x&gt;" in page and "no &lt;b&gt;" in page  # escaped, with the conversation
    assert page.count("<details") == 1 and 'data-failing="b"' in page
    assert "<svg" in r._repr_html_() and "<html" not in r._repr_html_()
    path = tmp_path / "report.html"
    r.save(path)
    assert path.read_text(encoding="utf-8") == page


def test_comparing_two_reports_tells_regressions_from_noise() -> None:
    base = report(
        "base", {"steady": [True] * 4, "noisy": [True, False, True, False], "gone": [True] * 4}
    )
    new = report(
        "new", {"steady": [False] * 4, "noisy": [True, True, False, False], "fresh": [True] * 4}
    )
    diff = base.compare(new)
    verdicts = {c.id: c.verdict for c in diff.cases}
    assert verdicts == {"steady": "regressed", "noisy": "same", "gone": "removed", "fresh": "new"}
    (steady,) = diff.regressions
    assert steady.change == -1.0 and steady.band == 0.0
    assert diff.total.band == pytest.approx(noise_band(base.standard_error, new.standard_error))
    assert "steady" in diff.table() and "regressed" in diff.table()


def test_a_change_smaller_than_the_band_is_within_noise() -> None:
    base = report("base", {"a": [True, True, False, False]})
    new = report("new", {"a": [True, True, True, False]})
    (change,) = base.compare(new).cases
    assert change.change == 0.25 and change.band > 0.25 and change.verdict == "within noise"


def test_assert_eval_fails_under_the_threshold_with_the_table() -> None:
    r = report("demo", {"a": [True], "b": [False]})
    assert_eval(r, 0.5)
    with pytest.raises(AssertionError, match=r"pass_rate 50.0% is under 60.0%") as caught:
        assert_eval(r, 0.6)
    assert "contains: 'yes' not in" in str(caught.value)


def test_a_failed_run_shows_its_error_in_the_page() -> None:
    failed = CaseRun("a", 1, error=ItemError("AgentStopped", "max_iterations"))
    r = EvalReport("x", (CaseReport("a", "q", (RunReport(failed),)),))
    assert "AgentStopped: max_iterations" in r.to_html() and r.pass_rate == 0.0
