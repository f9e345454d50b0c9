"""Each evaluator's verdict on runs made by hand: pass, fail, score, reason, error."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from agent_smith import ConfigError, EvalError, TestModel, TokenUsage, UserMessage
from agent_smith.batch.result import ItemError
from agent_smith.evals import (
    Case,
    CaseRun,
    Check,
    Contains,
    Equals,
    EvalContext,
    EvalResult,
    ExpectedCall,
    Limits,
    LlmJudge,
    OutputValid,
    Regex,
    ToolCalls,
)
from agent_smith.evals.evaluator import judge_run
from agent_smith.messages import AssistantMessage, ToolCall

CASE = Case("c1", "What is 6*7?", expected="42")


def ctx(content: str | None = "It is 42.", **fields: object) -> EvalContext:
    run = CaseRun("c1", 1, content=content, **fields)  # type: ignore[arg-type]
    return EvalContext(CASE, run)


def calls(*made: tuple[str, dict[str, object]]) -> EvalContext:
    messages = (
        UserMessage("?"),
        AssistantMessage(
            None, tool_calls=[ToolCall(f"id{i}", n, dict(a)) for i, (n, a) in enumerate(made)]
        ),
    )
    return ctx("done", messages=messages, turns=2)


@dataclass(frozen=True)
class Point:
    x: int
    y: int


def test_equals_compares_the_text_with_the_expected_answer() -> None:
    assert Equals().evaluate(ctx(" 42 ")).passed
    failed = Equals().evaluate(ctx("It is 42."))
    assert (failed.passed, failed.score, failed.reason) == (False, 0.0, "'It is 42.' != '42'")
    assert Equals("it IS 42.", ignore_case=True).evaluate(ctx()).passed


def test_equals_compares_a_typed_output_by_its_json() -> None:
    typed = EvalContext(
        Case("p", "?", expected={"y": 2, "x": 1}), CaseRun("p", 1, "{}", {"x": 1, "y": 2})
    )
    assert Equals().evaluate(typed).passed
    other = EvalContext(typed.case, CaseRun("p", 1, "{}", {"x": 1, "y": 3}))
    assert not Equals().evaluate(other).passed


def test_contains_and_regex_look_inside_the_answer() -> None:
    assert Contains().evaluate(ctx()).passed
    assert not Contains("43").evaluate(ctx()).passed
    assert Contains("IT IS", ignore_case=True).evaluate(ctx()).passed
    assert Regex(r"\b42\b").evaluate(ctx()).passed
    assert not Regex(r"42", full=True).evaluate(ctx()).passed
    with pytest.raises(ConfigError, match="not a pattern"):
        Regex("(")


def test_a_failed_run_fails_the_answer_checks_with_its_error() -> None:
    failed = ctx(None, error=ItemError("AgentStopped", "max_iterations reached"))
    for evaluator in (Equals(), Contains(), Regex("x"), OutputValid()):
        result = evaluator.evaluate(failed)
        assert not result.passed and "max_iterations reached" in result.reason


def test_output_valid_checks_the_output_against_a_named_type() -> None:
    good = EvalContext(CASE, CaseRun("c1", 1, "{}", {"x": 1, "y": 2}))
    bad = EvalContext(CASE, CaseRun("c1", 1, "{}", {"x": "one"}))
    assert OutputValid().evaluate(good).passed
    assert not OutputValid().evaluate(ctx()).passed  # no typed output at all
    named = OutputValid("tests.evals.test_evaluators:Point")
    assert named.evaluate(good).passed
    result = named.evaluate(bad)
    assert not result.passed and "does not fit Point" in result.reason


def test_tool_calls_match_in_any_order_with_argument_subsets() -> None:
    made = calls(("calc", {"expression": "1+1", "precise": True}), ("read", {"path": "a"}))
    expected = (ExpectedCall("read"), ExpectedCall("calc", {"expression": "1+1"}))
    assert ToolCalls(expected).evaluate(made).passed
    exact = ToolCalls(expected, arguments="exact").evaluate(made)
    assert (exact.passed, exact.score) == (False, 0.5)
    assert "missing calc(expression='1+1')" in exact.reason
    assert not ToolCalls(expected, ordered=True).evaluate(made).passed
    assert ToolCalls(tuple(reversed(expected)), ordered=True).evaluate(made).passed


def test_a_loose_expected_call_does_not_take_the_call_a_strict_one_needs() -> None:
    made = calls(("calc", {"expression": "2"}), ("calc", {"expression": "1"}))
    expected = (ExpectedCall("calc"), ExpectedCall("calc", {"expression": "2"}))
    assert ToolCalls(expected).evaluate(made).passed


def test_tool_calls_only_and_counts() -> None:
    made = calls(("calc", {}), ("calc", {}), ("read", {}))
    only = ToolCalls((ExpectedCall("calc"),), only=True).evaluate(made)
    assert not only.passed and "unexpected call(s) to calc, read" in only.reason
    counted = ToolCalls(counts={"calc": 1}).evaluate(made)
    assert not counted.passed and "calc called 2 time(s), expected 1" in counted.reason
    assert ToolCalls(counts={"calc": 2, "write": 0}).evaluate(made).passed


def test_tool_calls_read_from_a_dataset_file_become_expected_calls() -> None:
    evaluator = ToolCalls(({"name": "calc", "arguments": {"x": 1}},))  # type: ignore[arg-type]
    assert evaluator.calls == (ExpectedCall("calc", {"x": 1}),)
    with pytest.raises(ConfigError, match="calls\\[0\\]"):
        ToolCalls(({"tool": "calc"},))  # type: ignore[arg-type]


def test_limits_name_everything_that_went_over() -> None:
    run = ctx(turns=5, usage=TokenUsage(10, 20, 30, cost=0.5), seconds=2.5)
    assert Limits(max_turns=5, max_tokens=30, max_cost=0.5, max_seconds=3).evaluate(run).passed
    result = Limits(max_turns=4, max_tokens=29, max_cost=0.1, max_seconds=1).evaluate(run)
    assert result.reason == "5 turns > 4; 30 tokens > 29; cost 0.5 > 0.1; 2.500 s > 1 s"
    unpriced = Limits(max_cost=1).evaluate(ctx())
    assert not unpriced.passed and "no cost known" in unpriced.reason


def test_a_python_function_returns_a_bool_a_score_a_pair_or_a_result() -> None:
    def short(c: EvalContext) -> bool:
        return len(c.run.content or "") < 20

    assert Check(short).evaluate(ctx()).passed and Check(short).name == "short"
    assert Check(lambda c: 0.25, label="quarter").evaluate(ctx()) == EvalResult(
        "quarter", False, 0.25, "score 0.25"
    )
    assert Check(lambda c: (False, "too polite")).evaluate(ctx()).reason == "too polite"
    with pytest.raises(EvalError, match="returned str"):
        Check(lambda c: "yes").evaluate(ctx())


def test_an_evaluator_that_raises_is_a_failed_verdict_with_its_error() -> None:
    def broken(c: EvalContext) -> bool:
        raise KeyError("missing")

    results = judge_run([Check(broken), Contains()], ctx())
    assert results[0] == EvalResult.failed("broken", "KeyError: 'missing'")
    assert results[1].passed  # the next evaluator still judged


def _judge(*replies: str) -> TestModel:
    return TestModel(list(replies))


def test_a_judge_returns_its_typed_verdict() -> None:
    model = _judge(json.dumps({"passed": True, "score": 0.9, "reason": "correct"}))
    result = LlmJudge("Is the answer right?", model).evaluate(ctx())
    assert result == EvalResult("judge", True, 0.9, "correct")
    prompt = model.requests[0].messages[-1].content
    assert "Is the answer right?" in prompt and "What is 6*7?" in prompt
    assert "Expected answer:\n42" in prompt and "It is 42." in prompt


def test_a_judge_answering_nonsense_is_an_eval_error_naming_the_case() -> None:
    model = _judge("I think it is fine", "Definitely!")
    with pytest.raises(EvalError, match="case c1: the judge's answer is no verdict") as caught:
        LlmJudge("Right?", model, output_retries=1).evaluate(ctx())
    assert caught.value.case == "c1"
    out_of_range = _judge(json.dumps({"passed": True, "score": 7, "reason": "great"}))
    with pytest.raises(EvalError, match=r"score 7.0 is not in \[0, 1\]"):
        LlmJudge("Right?", out_of_range).evaluate(ctx())


def test_a_judge_without_a_model_uses_the_runs_judge_or_says_it_has_none() -> None:
    with pytest.raises(EvalError, match="the judge has no model"):
        LlmJudge("Right?").evaluate(ctx())
    model = _judge(json.dumps({"passed": False, "score": 0, "reason": "wrong"}))
    given = EvalContext(CASE, ctx().run, judge=model)
    assert not LlmJudge("Right?").evaluate(given).passed
