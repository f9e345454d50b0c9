"""Durable approval waits: the decision arrives as a DBOS message, from any thread or process."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("dbos")

from agent_smith import Agent, AssistantMessage, TestModel, tool
from agent_smith.durable import DurableAgent, DurableEngine, DurableTurns
from agent_smith.llm.testing import call
from tests.durable.conftest import WAIT, wait_until


def mailer(sent: list[str]) -> object:
    @tool(requires_approval=True)
    def send_email(to: str) -> str:
        """Send an email."""
        sent.append(to)
        return f"sent to {to}"

    return send_email


def start(durable: DurableAgent, turn_id: str) -> tuple[threading.Thread, list[AssistantMessage]]:
    answers: list[AssistantMessage] = []
    thread = threading.Thread(
        target=lambda: answers.append(durable.send("Mail Ann.", turn_id=turn_id)),
        name="durable-turn",
    )
    thread.start()
    return thread, answers


def waiting_call(durable: DurableAgent, turn_id: str) -> str:
    """The id of the call the turn waits on, once it waits."""
    return str(wait_until(lambda: durable.waiting(turn_id))[0]["call_id"])


@pytest.mark.parametrize(("decision", "ran"), [(True, ["ann"]), ("not today", [])])
def test_a_waiting_call_runs_or_is_denied_by_a_decision_sent_from_elsewhere(
    engine: DurableEngine, decision: bool | str, ran: list[str]
) -> None:
    sent: list[str] = []
    model = TestModel([call("send_email", to="ann"), "ok"])
    durable = DurableAgent(Agent(model, tools=[mailer(sent)]), engine)  # type: ignore[list-item]
    engine.launch()
    thread, answers = start(durable, "mail")
    call_id = waiting_call(durable, "mail")
    assert durable.waiting("mail") == [
        {"call_id": call_id, "tool": "send_email", "arguments": {"to": "ann"}}
    ]
    if decision is True:
        durable.decide("mail", call_id, decision)
    else:  # an operator's client, as another process would have
        with DurableTurns(engine.url) as turns:
            assert turns.waiting("mail")[0]["call_id"] == call_id
            turns.decide("mail", call_id, decision)
    thread.join(WAIT)
    assert answers[0].content == "ok"
    assert sent == ran
    result = model.requests[1].messages[-1].content
    assert ("sent to ann" in result) if decision is True else ("not today" in result)
    assert durable.waiting("mail") == []


def test_a_wait_past_its_deadline_denies_the_call(engine: DurableEngine) -> None:
    sent: list[str] = []
    model = TestModel([call("send_email", to="ann"), "nobody answered"])
    agent = Agent(model, tools=[mailer(sent)])  # type: ignore[list-item]
    durable = DurableAgent(agent, engine, approval_timeout=0.2)
    engine.launch()
    assert durable.send("Mail Ann.", turn_id="late").content == "nobody answered"
    assert sent == []
    assert "no decision before the deadline" in model.requests[1].messages[-1].content


def test_an_event_answered_by_the_caller_does_not_wait(engine: DurableEngine) -> None:
    sent: list[str] = []
    model = TestModel([call("send_email", to="ann"), "done"])
    durable = DurableAgent(Agent(model, tools=[mailer(sent)]), engine)  # type: ignore[list-item]
    engine.launch()

    def approve(event: object) -> None:
        if hasattr(event, "approve"):
            event.approve()

    durable.send("Mail Ann.", turn_id="answered", on_event=approve)
    assert sent == ["ann"]
