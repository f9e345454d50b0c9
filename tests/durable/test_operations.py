"""Operating durable turns: list, inspect, cancel from elsewhere, resume."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

import pytest

pytest.importorskip("dbos")

from agent_smith import Agent, TestModel, ToolContext, tool
from agent_smith.durable import DurableAgent, DurableEngine, DurableTurns
from agent_smith.llm.testing import call
from agent_smith.tools.function import FunctionTool
from tests.durable.conftest import WAIT, wait_until


def waits(started: threading.Event, *, requires_approval: bool = False) -> FunctionTool:
    """A tool that sets ``started`` and waits until cancelled, the first time it runs."""

    @tool(idempotent=True, requires_approval=requires_approval)
    def wait_for_it(ctx: ToolContext) -> str:
        """Waits until cancelled (the first time)."""
        if not started.is_set():
            started.set()
            ctx.cancel.wait(WAIT)
            return "cancelled while waiting"
        return "done waiting"

    return wait_for_it


@pytest.fixture
def operator(engine: DurableEngine) -> Iterator[Callable[[], DurableTurns]]:
    """Opens an operator's view of the same database (a DBOS client, as another process has),
    once the engine launched (and so made DBOS's tables)."""
    with contextlib.ExitStack() as stack:
        yield lambda: stack.enter_context(DurableTurns(engine.url))


def test_finished_turns_are_listed_newest_first_and_inspected_step_by_step(
    engine: DurableEngine, operator: Callable[[], DurableTurns]
) -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    model = TestModel([call("add", a=1, b=2), "3", "hello"])
    durable = DurableAgent(Agent(model, tools=[add], name="calc"), engine)
    engine.launch()
    durable.send("Add 1 and 2.", turn_id="first")
    durable.send("Hi.", turn_id="second")
    turns = operator()
    assert [(t.turn_id, t.agent, t.message, t.status) for t in turns.recent()] == [
        ("second", "calc", "Hi.", "SUCCESS"),
        ("first", "calc", "Add 1 and 2.", "SUCCESS"),
    ]
    info = turns.inspect("first")
    assert info is not None
    assert [key for key, _ in info.steps] == ["start", "m1", "t1", "m2", "answer"]
    assert all(entry.state == "done" for _, entry in info.steps)
    assert turns.inspect("nope") is None
    assert [t.turn_id for t in turns.recent(status="ERROR")] == []


def test_a_turn_cancelled_from_elsewhere_stops_its_running_tool_and_resumes_later(
    engine: DurableEngine, operator: Callable[[], DurableTurns]
) -> None:
    started = threading.Event()
    model = TestModel([call("wait_for_it"), "finished"])
    durable = DurableAgent(Agent(model, tools=[waits(started)], name="waiter"), engine)
    engine.launch()
    failures: list[BaseException] = []

    def run() -> None:
        try:
            durable.send("Wait.", turn_id="long")
        except BaseException as err:  # the cancelled turn's error, whatever DBOS makes of it
            failures.append(err)

    turns = operator()
    thread = threading.Thread(target=run, name="durable-turn")
    thread.start()
    assert started.wait(WAIT)
    turns.cancel("long")
    thread.join(WAIT)
    assert not thread.is_alive() and failures
    assert [t.status for t in turns.recent()] == ["CANCELLED"]
    turns.resume("long")
    assert durable.result("long").content == "finished"
    assert [t.status for t in turns.recent()] == ["SUCCESS"]


def test_a_turn_cancelled_in_its_run_after_a_decision_stops_there_and_resumes_later(
    engine: DurableEngine, operator: Callable[[], DurableTurns]
) -> None:
    started = threading.Event()
    model = TestModel([call("wait_for_it"), "finished"])
    wire = waits(started, requires_approval=True)
    durable = DurableAgent(Agent(model, tools=[wire], name="wirer"), engine)
    engine.launch()
    turns = operator()
    durable.start("Wire it.", turn_id="wire")
    durable.decide("wire", str(wait_until(lambda: durable.waiting("wire"))[0]["call_id"]))
    assert started.wait(WAIT)  # the run after the decision runs the call
    turns.cancel("wire")
    wait_until(lambda: [t for t in turns.recent() if t.status == "CANCELLED"])
    turns.resume("wire")
    assert durable.result("wire", timeout=WAIT).content == "finished"
    assert [t.status for t in turns.recent()] == ["SUCCESS"]
    assert len(model.requests) == 2  # the first request was replayed, not sent again
