"""Evals under tracing: each run of a case is an ``eval_case`` span, parent of its turn's spans."""

from __future__ import annotations

import pytest

from agent_smith import Agent, Runtime, TestModel
from agent_smith.evals import Case, Contains, Dataset, evaluate
from tests.tracing.conftest import Spans


@pytest.fixture(autouse=True)
def _no_leaks(no_thread_leak: None) -> None:
    """No thread left behind."""


def test_each_run_of_a_case_is_a_span_holding_its_turn(spans: Spans, runtime: Runtime) -> None:
    cases = Dataset((Case("a", "a", expected="a"), Case("b", "b", expected="b")), (Contains(),))

    def make() -> Agent:
        return Agent(TestModel(respond=lambda request: "a"), name="judged", runtime=runtime)

    report = evaluate(cases, make, repeat=2, concurrency=2)
    assert report.pass_rate == 0.5
    for case in ("a", "b"):
        runs = spans.named(f"eval_case {case}")
        assert sorted(s.attributes["agent_smith.eval.repeat"] for s in runs) == [1, 2]  # type: ignore[index]
        assert {s.attributes["agent_smith.eval.case"] for s in runs} == {case}  # type: ignore[index]
        for run in runs:
            assert [c.name for c in spans.children(run)] == ["invoke_agent judged"]
    assert len(spans.named("invoke_agent judged")) == 4
