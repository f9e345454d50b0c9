"""Sessions across real worker processes: turns that collide, and a worker killed mid-turn."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator

import pytest

from agent_smith import (
    Agent,
    AgentBusyError,
    AssistantMessage,
    LlmClient,
    ToolMessage,
    UserMessage,
    strip_orphans,
)
from tests.agent.test_stops import assert_consistent
from tests.sessions.conftest import WAIT, Blocker, Store, lease_row
from tests.support.background import Background
from tests.support.llm_server import Calls, ScriptedLlmServer, Text
from tests.support.session_child import Child

QUESTION = "weather in Paris?"


@pytest.fixture
def children() -> Iterator[list[Child]]:
    started: list[Child] = []
    yield started
    for child in started:
        child.close()


def test_a_worker_killed_mid_turn_leaves_a_history_that_loads_consistent_and_continues(
    llm: LlmClient,
    llm_server: ScriptedLlmServer,
    store: Store,
    children: list[Child],
) -> None:
    llm_server.script(Calls(("lookup", {"city": "Paris"})))
    child = Child("turn", llm_server.url, store.where, "conv", 3600.0, QUESTION)
    children.append(child)
    child.expect("TOOL_STARTED")
    # Between the assistant's tool-call message (stored) and its result (not yet).
    with store.open("conv") as peek:
        stored = peek.messages()
    assert [m.role for m in stored] == ["user", "assistant"]
    assert isinstance(stored[1], AssistantMessage) and stored[1].tool_calls
    assert child.kill() == -signal.SIGKILL

    with store.open("conv", lease_seconds=2.0) as session:
        agent = Agent(llm, session=session)
        assert agent.history == [UserMessage(QUESTION)]  # the call without a result is dropped
        lease = lease_row(store, "conv")
        assert lease is not None and lease[1] > time.time() + 3000  # an hour left on it
        # Its holder died: the lease is taken over now, not in an hour.
        llm_server.script(Text("Yes. It is sunny in Paris."))
        assert agent.send("are you there?").content == "Yes. It is sunny in Paris."
        stored = session.messages()
    assert [m.role for m in stored] == ["user", "assistant", "user", "assistant"]
    assert strip_orphans(stored) == agent.history
    assert [m["role"] for m in llm_server.requests[-1]["messages"]] == ["user", "user"]
    with store.open("conv") as reopened:  # and a third worker loads it consistent too
        assert Agent(llm, session=reopened).history == agent.history


def test_a_turn_in_another_process_fails_fast_while_one_runs_here(
    llm: LlmClient,
    llm_server: ScriptedLlmServer,
    store: Store,
    children: list[Child],
    blocker: Blocker,
) -> None:
    with store.open("conv") as session:
        agent = Agent(llm, tools=[blocker.tool], session=session)
        llm_server.script(Calls(("lookup", {"city": "Paris"})), Text("Sunny in Paris."))
        running = Background(lambda: agent.send(QUESTION))
        try:
            assert blocker.started.wait(WAIT)
            child = Child("turn", llm_server.url, store.where, "conv", 30.0, "me too")
            children.append(child)
            child.expect("BUSY")
            assert child.wait() == 3
        finally:
            blocker.release.set()
            assert running.join(WAIT)
        assert running.error is None
        stored = session.messages()
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert "me too" not in [m.content for m in stored]
    assert len(llm_server.requests) == 2  # the refused child never asked the model


def test_a_turn_here_fails_fast_while_another_process_runs_one(
    llm: LlmClient,
    llm_server: ScriptedLlmServer,
    store: Store,
    children: list[Child],
) -> None:
    llm_server.script(Calls(("lookup", {"city": "Paris"})), Text("Sunny in Paris."))
    child = Child("turn", llm_server.url, store.where, "conv", 30.0, QUESTION)
    children.append(child)
    child.expect("TOOL_STARTED")
    with store.open("conv") as session:
        agent = Agent(llm, session=session)
        begun = time.monotonic()
        with pytest.raises(AgentBusyError):
            agent.send("me too")
        assert time.monotonic() - begun < 2.0  # refused at once, not after the other turn
        child.send("go")
        assert child.expect("DONE") == "DONE Sunny in Paris."
        assert child.wait() == 0
        stored = session.messages()
        assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant"]
        assert_consistent(stored)
        assert isinstance(stored[2], ToolMessage) and stored[2].content == "Paris: sunny"
        llm_server.script(Text("You asked about Paris."))
        agent.send("what did I ask?")  # free now, and it catches up with the child's turn
    assert [m.content for m in agent.history][:1] == [QUESTION]
    assert len(agent.history) == 6
