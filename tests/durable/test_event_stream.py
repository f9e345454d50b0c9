"""A durable turn's events: a stream any process reads from any offset, then live."""

from __future__ import annotations

import threading

from agent_smith import Agent, TestModel, tool
from agent_smith.durable import DurableAgent, DurableEngine, DurableTurns
from agent_smith.llm.testing import call
from tests.durable.conftest import WAIT, wait_until


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


@tool(requires_approval=True)
def wire(amount: int) -> str:
    """Wire money."""
    return f"wired {amount}"


def test_a_finished_turns_events_are_read_from_any_offset(
    engine: DurableEngine,
) -> None:
    durable = DurableAgent(Agent(TestModel([call("add", a=1, b=2), "3"]), tools=[add]), engine)
    engine.launch()
    durable.send("Add.", turn_id="done")
    kinds = ["assistant", "tool_call", "tool_result", "assistant", "final"]
    assert [r["type"] for r in durable.events("done")] == kinds
    with DurableTurns(engine.url) as turns:
        records = list(turns.events("done", offset=2))
    assert [r["type"] for r in records] == kinds[2:]
    assert records[0]["message"]["content"] == "3"
    assert records[-1]["message"]["content"] == "3"


def test_a_reader_gets_what_it_missed_then_the_rest_live(
    engine: DurableEngine,
) -> None:
    durable = DurableAgent(Agent(TestModel([call("wire", amount=5), "sent"]), tools=[wire]), engine)
    engine.launch()
    thread = threading.Thread(
        target=lambda: durable.send("Wire 5.", turn_id="live"), name="durable-turn"
    )
    thread.start()
    with DurableTurns(engine.url) as turns:
        waiting = wait_until(lambda: turns.waiting("live"))  # the turn exists and waits
        records = turns.events("live")
        seen = [next(records)["type"] for _ in range(3)]  # written before the turn waited
        assert seen == ["assistant", "tool_call", "approval"]
        turns.decide("live", str(waiting[0]["call_id"]), True)
        rest = [r["type"] for r in records]  # live, until the turn ends
    thread.join(WAIT)
    assert rest == ["tool_result", "assistant", "final"]
