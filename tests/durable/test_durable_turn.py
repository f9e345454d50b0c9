"""A durable turn is the same turn: same history, same events; every step recorded once."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

pytest.importorskip("dbos")
from dbos import DBOS

from agent_smith import (
    Agent,
    AgentConfig,
    ConfigError,
    DurableStateError,
    LlmClient,
    ReplayMismatchError,
    SqliteSession,
    SubAgentSpec,
    TestModel,
    tool,
)
from agent_smith.durable import DurableAgent, DurableEngine
from agent_smith.durable.records import TurnStart, start_record
from agent_smith.durable.subturns import SUBTURN_WORKFLOW
from agent_smith.llm.testing import call
from agent_smith.tools.function import FunctionTool
from tests.support.llm_server import Calls, ScriptedLlmServer, Text


def adder(runs: list[str]) -> FunctionTool:
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        runs.append(f"{a}+{b}")
        return a + b

    return add


def parallel_script() -> list[object]:
    return [[call("add", a=1, b=2), call("add", a=3, b=4)], "3 and 7"]


@pytest.mark.parametrize("stream", [False, True])
def test_a_durable_turn_gives_the_history_and_events_of_the_same_turn_not_durable(
    engine: DurableEngine, stream: bool
) -> None:
    script = parallel_script()
    config = AgentConfig(stream=stream)
    plain = Agent(TestModel(script), tools=[adder([])], name="plain", config=config)
    plain_events = list(plain.stream("Add."))
    runs: list[str] = []
    model = TestModel(script)
    agent = Agent(model, tools=[adder(runs)], name="durable", config=config)
    durable = DurableAgent(agent, engine)
    engine.launch()
    events: list[object] = []
    answer = durable.send("Add.", turn_id="turn-1", on_event=events.append)
    assert answer == plain_events[-1].message  # type: ignore[attr-defined]
    assert agent.history == plain.history
    assert events == plain_events
    assert sorted(runs) == ["1+2", "3+4"]  # parallel calls, each run once
    assert len(model.requests) == 2


def test_the_same_turn_over_http_is_the_same_durable_or_not(engine: DurableEngine) -> None:
    replies = (Calls(("add", {"a": 1, "b": 2})), Text("3"))
    with ScriptedLlmServer() as server:
        server.script(*replies)
        plain = Agent(LlmClient(server.url, "m"), tools=[adder([])], name="plain")
        plain.send("Add.")
        server.script(*replies)
        agent = Agent(LlmClient(server.url, "m"), tools=[adder([])], name="durable")
        durable = DurableAgent(agent, engine)
        engine.launch()
        durable.send("Add.", turn_id="http-turn")
        assert len(server.requests) == 4
    assert agent.history == plain.history


def test_sending_a_finished_turn_again_returns_its_answer_without_running_it(
    engine: DurableEngine,
) -> None:
    runs: list[str] = []
    model = TestModel(parallel_script())
    durable = DurableAgent(Agent(model, tools=[adder(runs)]), engine)
    engine.launch()
    first = durable.send("Add.", turn_id="once")
    assert durable.send("Add.", turn_id="once") == first
    assert durable.result("once") == first
    assert len(model.requests) == 2 and len(runs) == 2


def test_a_sub_agent_runs_as_a_child_workflow_named_after_its_call(
    engine: DurableEngine,
) -> None:
    runs: list[str] = []
    child_model = TestModel([call("add", a=5, b=6), "11"])
    parent = Agent(TestModel([call("helper", task="add 5 and 6"), "it is 11"]), name="parent")
    spec = SubAgentSpec("helper", "Adds.", tool_factories=[lambda: adder(runs)])
    parent.add_subagent(spec, llm=child_model)
    durable = DurableAgent(parent, engine)
    engine.launch()
    assert durable.send("Add 5 and 6.", turn_id="nested").content == "it is 11"
    assert sorted(engine.journal.entries("nested")) == ["m1", "m2", "start", "t1"]  # answer: output
    child = engine.journal.entries("nested/t1")
    assert sorted(child) == ["m1", "m2", "t1"]
    assert all(entry.state == "done" for entry in child.values())
    status = DBOS.get_workflow_status("nested/t1")
    assert status is not None and status.name == SUBTURN_WORKFLOW and status.status == "SUCCESS"
    assert runs == ["5+6"]


def test_a_tool_that_raises_records_the_error_result_the_model_saw(engine: DurableEngine) -> None:
    @tool
    def broken() -> str:
        """Fails."""
        raise ValueError("no luck")

    model = TestModel([call("broken"), "sorry"])
    durable = DurableAgent(Agent(model, tools=[broken]), engine)
    engine.launch()
    assert durable.send("Try.", turn_id="raising").content == "sorry"
    record = engine.journal.entries("raising")["t1"].record
    assert record is not None and "no luck" in record
    assert "no luck" in model.requests[1].messages[-1].content


def recorded_start(
    engine: DurableEngine, turn_id: str, *, model: str, tools: dict[str, str]
) -> None:
    start = TurnStart("agent", model, tools, ())
    engine.journal.done(turn_id, "start", start_record(start))


def test_recovery_under_another_tool_set_fails_closed_naming_the_difference(
    engine: DurableEngine,
) -> None:
    model = TestModel(["unused"])
    durable = DurableAgent(Agent(model, tools=[adder([])]), engine)
    engine.launch()
    recorded_start(engine, "changed", model="test/test", tools={"subtract": "x"})
    with pytest.raises(ReplayMismatchError) as raised:
        durable.send("Add.", turn_id="changed")
    assert raised.value.difference == "the tool set (gone: subtract; new: add)"
    assert model.requests == []  # nothing was sent under the wrong code


def test_recovery_under_another_model_fails_closed_naming_it(engine: DurableEngine) -> None:
    model = TestModel(["unused"])
    agent = Agent(model)
    durable = DurableAgent(agent, engine)
    engine.launch()
    recorded_start(engine, "other-model", model="openai/gpt-x", tools={})
    with pytest.raises(ReplayMismatchError, match="the model") as raised:
        durable.send("Hi.", turn_id="other-model")
    assert "gpt-x" in raised.value.difference and raised.value.turn_id == "other-model"


def test_a_replayed_request_that_differs_from_the_recorded_one_fails_closed(
    engine: DurableEngine,
) -> None:
    first = TestModel(["hello"])
    agent = Agent(first)
    durable = DurableAgent(agent, engine)
    engine.launch()
    durable.send("Hi.", turn_id="digest")
    entries = engine.journal.entries("digest")
    reply = entries["m1"].record
    assert reply is not None
    engine.journal.done("digest-2", "m1", reply)  # the reply, recorded for another request
    with pytest.raises(ReplayMismatchError, match="model request m1 differs"):
        durable.send("Something else.", turn_id="digest-2")


def test_an_unreachable_database_is_a_clear_error_at_start(tmp_path: Path) -> None:
    with pytest.raises(DurableStateError, match="cannot reach the durable database"):
        DurableEngine(tmp_path / "missing" / "folder" / "turns.sqlite")
    with socket.socket() as closed:  # a loopback port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with pytest.raises(DurableStateError, match="cannot reach the durable database"):
        DurableEngine(f"postgresql://nobody@127.0.0.1:{port}/turns")


def test_an_agent_with_a_session_is_refused(engine: DurableEngine, tmp_path: Path) -> None:
    session = SqliteSession(tmp_path / "s.sqlite", "c1")
    with pytest.raises(ConfigError, match="session"):
        DurableAgent(Agent(TestModel([]), session=session), engine)
