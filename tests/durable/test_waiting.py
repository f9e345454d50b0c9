"""Durable approval waits: no thread waits; the decision comes from any thread or process."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from types import FrameType

import pytest

pytest.importorskip("dbos")

from agent_smith import Agent, AssistantMessage, DurableStateError, TestModel, tool
from agent_smith.durable import DurableAgent, DurableEngine, DurableTurns
from agent_smith.llm.request import LlmRequest
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


def test_twenty_waiting_turns_hold_no_thread_and_go_on_after_a_restart(tmp_path: Path) -> None:
    database = tmp_path / "turns.sqlite"
    sent: list[str] = []

    def reply(request: LlmRequest) -> object:
        last = request.messages[-1]
        return call("send_email", to=last.content) if last.role == "user" else f"ok {last.content}"

    def desk(engine: DurableEngine) -> DurableAgent:
        agent = Agent(TestModel(respond=reply), tools=[mailer(sent)], name="desk")  # type: ignore[list-item]
        return DurableAgent(agent, engine)

    turns = [f"mail-{n}" for n in range(20)]
    with DurableEngine(database) as engine:
        durable = desk(engine)
        engine.launch()
        before = threading.active_count()
        for turn in turns:  # each run ends when its turn waits
            durable.start(turn, turn_id=turn)
            waiting_call(durable, turn)
        # A thread held per waiting turn would be 20 more; DBOS's executor may start a few
        # of its own when the runs overlap (a loaded machine), and reuses them.
        assert threading.active_count() < before + len(turns) // 2
        assert running_turns() == []
    assert sent == []
    with DurableEngine(database) as engine:  # the process "starts again"
        durable = desk(engine)
        engine.launch()
        with DurableTurns(database) as operator:  # decisions from an operator's process
            for turn in turns:
                operator.decide(turn, str(operator.waiting(turn)[0]["call_id"]), True)
        answers = [durable.result(turn, timeout=WAIT).content for turn in turns]
    assert answers == [f"ok sent to {turn}" for turn in turns]
    assert sorted(sent) == sorted(turns)


def running_turns() -> list[str]:
    """The threads whose stack is inside a durable turn's run now."""
    body = DurableAgent.run_turn.__code__
    found = []
    for thread_id, frame in sys._current_frames().items():
        here: FrameType | None = frame
        while here is not None and here.f_code is not body:
            here = here.f_back
        if here is not None:
            found.append(str(thread_id))
    return found


def test_a_call_is_decided_once_and_only_a_call_that_waits(
    engine: DurableEngine, tmp_path: Path
) -> None:
    sent: list[str] = []
    model = TestModel([call("send_email", to="ann"), "ok"])
    durable = DurableAgent(Agent(model, tools=[mailer(sent)]), engine)  # type: ignore[list-item]
    engine.launch()
    durable.start("Mail Ann.", turn_id="once")
    call_id = waiting_call(durable, "once")
    with DurableTurns(engine.url) as turns:
        assert [t.status for t in turns.recent()] == ["WAITING"]
        assert [t.turn_id for t in turns.recent(status="WAITING")] == ["once"]
        assert turns.recent(status="SUCCESS") == []
    with pytest.raises(DurableStateError, match="no call 'nope' waits"):
        durable.decide("once", "nope", True)
    durable.decide("once", call_id, "not today")
    durable.decide("once", call_id, "not today")  # the same decision again: no harm
    with pytest.raises(DurableStateError, match="decided already"):
        durable.decide("once", call_id, True)
    assert durable.result("once", timeout=WAIT).content == "ok"
    assert sent == []
