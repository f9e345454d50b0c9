"""Eval runs: factories and specs, repeats, resume, cancellation, and bad cases kept apart."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_smith import (
    Agent,
    AgentSpec,
    CancelledError,
    ConfigError,
    ImagePart,
    LlmClient,
    Runtime,
    TestModel,
    TextPart,
)
from agent_smith.cli.demo_tools import CalculatorTool
from agent_smith.evals import (
    Case,
    Check,
    Contains,
    Dataset,
    EvalContext,
    ExpectedCall,
    LlmJudge,
    Regex,
    ToolCalls,
    evaluate,
    run_eval,
)
from agent_smith.llm.request import LlmRequest
from agent_smith.llm.testing import Reply, call
from agent_smith.messages import AssistantMessage, UserMessage
from tests.support.background import WAIT, Background
from tests.support.batch import answer
from tests.support.llm_server import Hold, JsonObject, ScriptedLlmServer, Text
from tests.support.media import png


def arithmetic(request: LlmRequest) -> Reply:
    """Calculator first, then the result in a sentence; ``flaky`` right every other time."""
    last = request.messages[-1]
    if last.role == "tool":
        return f"The answer is {last.content}."
    expression = str(last.content).removeprefix("What is ").removesuffix("?")
    return call("calculator", expression=expression)


def calculator_agent(rt: Runtime) -> Callable[[], Agent]:
    return lambda: Agent(TestModel(respond=arithmetic), tools=[CalculatorTool()], runtime=rt)


ARITHMETIC = Dataset(
    (
        Case("add", "What is 2+3?", expected="5"),
        Case("mul", "What is 6*7?", expected="42"),
        Case("wrong", "What is 1+1?", expected="3"),
    ),
    evaluators=(Contains(), ToolCalls((ExpectedCall("calculator"),), counts={"calculator": 1})),
    name="arithmetic",
)


def test_every_case_runs_repeat_times_on_a_fresh_agent_and_is_judged(rt: Runtime) -> None:
    made: list[Agent] = []

    def factory() -> Agent:
        made.append(calculator_agent(rt)())
        return made[-1]

    report = evaluate(ARITHMETIC, factory, repeat=2, concurrency=3)
    assert len(made) == 6 and len({id(a) for a in made}) == 6
    assert [(c.id, c.passes, len(c.runs)) for c in report.cases] == [
        ("add", 2, 2),
        ("mul", 2, 2),
        ("wrong", 0, 2),
    ]
    assert report.pass_rate == pytest.approx(2 / 3)
    run = report.cases[0].runs[0]
    assert [m.role for m in run.run.messages] == ["user", "assistant", "tool", "assistant"]
    assert run.run.turns == 2 and run.run.content == "The answer is 5."
    assert report.evaluator_rates() == {"contains": pytest.approx(2 / 3), "tool_calls": 1.0}


def test_pass_at_k_and_pass_hat_k_of_a_flaky_case(rt: Runtime) -> None:
    turn = itertools.count()
    lock = threading.Lock()

    def flaky(request: LlmRequest) -> Reply:
        with lock:
            right = next(turn) % 2 == 0
        return "5" if right else "no idea"

    dataset = Dataset((Case("flaky", "2+3?", expected="5"),), evaluators=(Contains(),))
    report = evaluate(
        dataset, lambda: Agent(TestModel(respond=flaky), runtime=rt), repeat=4, concurrency=1
    )
    assert (report.pass_rate, report.pass_at_k, report.pass_hat_k) == (0.5, 1.0, 0.0)
    assert report.repeat_rates == [1.0, 0.0, 1.0, 0.0]
    assert report.spread == pytest.approx(0.57735, abs=1e-5)


def test_a_case_of_parts_sends_its_image_to_the_model(rt: Runtime) -> None:
    seen: list[object] = []

    def look(request: LlmRequest) -> Reply:
        seen.append(request.messages[-1].content)
        return "It is red."

    image = ImagePart("image/png", data=png())
    case = Case("picture", (TextPart("What colour is this?"), image), expected="red")
    report = evaluate(
        Dataset((case,), evaluators=(Contains(ignore_case=True),)),
        lambda: Agent(TestModel(respond=look), runtime=rt),
    )
    assert seen == [(TextPart("What colour is this?"), image)]
    assert report.pass_rate == 1.0
    assert report.cases[0].input == "What colour is this?"


def test_a_case_continues_its_history(rt: Runtime) -> None:
    seen: list[list[str]] = []

    def remember(request: LlmRequest) -> Reply:
        seen.append([str(m.content) for m in request.messages if m.role != "system"])
        return "Ada"

    case = Case(
        "name",
        "What is my name?",
        history=(UserMessage("I am Ada."), AssistantMessage("Hello Ada.")),
        expected="Ada",
    )
    dataset = Dataset((case,), evaluators=(Contains(),))
    report = evaluate(dataset, lambda: Agent(TestModel(respond=remember), runtime=rt))
    assert seen == [["I am Ada.", "Hello Ada.", "What is my name?"]]
    assert report.pass_rate == 1.0
    assert [m.content for m in report.cases[0].runs[0].run.messages] == ["What is my name?", "Ada"]


def test_an_evaluator_that_raises_is_an_error_in_the_report_and_the_run_goes_on(
    rt: Runtime,
) -> None:
    def picky(ctx: EvalContext) -> bool:
        if ctx.case.id == "mul":
            raise ValueError("cannot judge multiplication")
        return True

    report = evaluate(ARITHMETIC, calculator_agent(rt), evaluators=(Check(picky),))
    assert [c.passes for c in report.cases] == [1, 0, 0]
    (verdict,) = [e for e in report.cases[1].runs[0].evaluations if e.name == "picky"]
    assert verdict.error == "ValueError: cannot judge multiplication"
    assert report.evaluator_errors() == {"picky": 1}


def test_a_judge_answering_nonsense_fails_only_that_case_naming_it(rt: Runtime) -> None:
    def judge(request: LlmRequest) -> str:
        if any("What is 6*7?" in str(m.content) for m in request.messages):
            return "Looks fine to me!"  # no verdict, every time
        return json.dumps({"passed": True, "score": 1.0, "reason": "right"})

    report = evaluate(
        ARITHMETIC,
        calculator_agent(rt),
        judge=TestModel(respond=judge),
        evaluators=(LlmJudge("Right?"),),
    )
    verdicts = {
        c.id: next(e for e in c.runs[0].evaluations if e.name == "judge") for c in report.cases
    }
    assert verdicts["add"].passed and verdicts["wrong"].passed
    assert not verdicts["mul"].passed and verdicts["mul"].error is not None
    assert "case mul: the judge's answer is no verdict" in verdicts["mul"].error
    assert report.evaluator_errors() == {"judge": 1}


@dataclass(frozen=True)
class Point:
    x: int
    y: int


def test_an_expected_value_that_does_not_fit_the_output_type_fails_only_its_case(
    rt: Runtime,
) -> None:
    model = TestModel(respond=lambda request: '{"x": 1, "y": 2}')
    dataset = Dataset(
        (
            Case("ok", "point?", expected={"x": 1, "y": 2}),
            Case("bad", "point?", expected={"x": "one"}),
        )
    )
    report = evaluate(dataset, lambda: Agent(model, output_type=Point, runtime=rt))
    ok, bad = report.cases
    assert ok.passes == 1 and ok.runs[0].run.output == {"x": 1, "y": 2}
    error = bad.runs[0].run.error
    assert error is not None and error.type == "EvalError"
    assert error.message.startswith(
        "case bad: the expected value does not fit the output type Point"
    )
    assert bad.error == str(error)
    assert len(model.requests) == 1  # the bad case never reached the model


def test_unreadable_dataset_entries_are_failed_cases_in_the_report(
    tmp_path: Path, rt: Runtime
) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(
        '{"id": "add", "input": "What is 2+3?", "expected": "5"}\n'
        '{"id": "odd", "input": "x", "evaluators": [{"type": "vibes"}]}\n'
        "not json\n",
        encoding="utf-8",
    )
    report = evaluate(Dataset.load(path), calculator_agent(rt), evaluators=(Contains(),))
    assert (report.cases[0].id, report.cases[0].pass_rate) == ("add", 1.0)
    odd, broken = report.cases[1:]
    assert odd.id == "odd" and "unknown evaluator 'vibes'" in (odd.error or "")
    assert broken.id == f"{path}:3" and "not valid JSON" in (broken.error or "")
    assert report.pass_rate == pytest.approx(1 / 3)


@pytest.fixture
def server(no_thread_leak: None) -> Iterator[ScriptedLlmServer]:
    with ScriptedLlmServer(answer) as s:
        yield s


def test_an_interrupted_spec_run_continues_and_records_each_run_once(
    server: ScriptedLlmServer, tmp_path: Path
) -> None:
    out = tmp_path / "runs.jsonl"
    dataset = Dataset(
        tuple(Case(f"c{i}", f"q{i}", expected=f"answer: q{i}") for i in range(3)),
        evaluators=(Contains(),),
    )
    spec = AgentSpec(server.url)
    with run_eval(dataset, spec, repeat=2, results=out, concurrency=1) as run:
        first = [next(run), next(run)]
    assert all(r.passed for r in first)
    with run_eval(dataset, spec, repeat=2, results=out) as run:
        assert (run.skipped, run.pending) == (2, 4)
        report = run.report()
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert sorted(ids) == sorted(f"c{i}#{r}" for i in range(3) for r in (1, 2))
    assert len(report.runs) == 6 and report.pass_rate == 1.0
    assert len(server.requests) == 6
    again = run_eval(dataset, spec, repeat=2, results=out, evaluators=(Regex("nope"),))
    with again:
        assert again.pending == 0
        rates = again.report().evaluator_rates()  # the recorded runs judged again, not run
    assert rates == {"regex": 0.0, "contains": 1.0} and len(server.requests) == 6


def test_cancel_from_another_thread_stops_the_run(rt: Runtime) -> None:
    gate = threading.Event()
    holds = [Hold(gate, Text("too late")) for _ in range(2)]
    both = list(holds)

    def held(body: JsonObject) -> Hold:
        return holds.pop(0) if holds else Hold(gate, Text("later"))

    dataset = Dataset((Case("a", "x"), Case("b", "y")))
    with ScriptedLlmServer(held) as server:
        run = run_eval(dataset, lambda: Agent(LlmClient(server.url, runtime=rt)), concurrency=2)
        waiting = Background(run.report)
        assert all(h.reached.wait(WAIT) for h in both)
        run.cancel()
        assert waiting.done.wait(WAIT)
        gate.set()
    assert isinstance(waiting.error, CancelledError)
    run.close()


def test_an_agent_that_is_neither_a_spec_nor_a_factory_is_refused(rt: Runtime) -> None:
    with pytest.raises(ConfigError, match="AgentSpec or a function"):
        run_eval(ARITHMETIC, "agent")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="repeat"):
        run_eval(ARITHMETIC, calculator_agent(rt), repeat=0)
