"""Stop conditions and loop guards, each ending the turn with its named condition."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from agent_smith import Agent
from agent_smith.agent.config import AgentConfig
from agent_smith.agent.guards import STEERING_NOTE
from agent_smith.agent.text_tool_calls import CUT_OFF_NOTE
from agent_smith.errors import AgentStopped, ConfigError
from agent_smith.llm.client import LlmClient
from agent_smith.llm.events import TokenDelta
from agent_smith.messages import AssistantMessage, Message, ToolMessage, UserMessage
from agent_smith.runtime import Runtime
from agent_smith.tools.base import ToolContext
from agent_smith.tools.function import tool
from tests.agent.conftest import WAIT
from tests.support.llm_server import Calls, ScriptedLlmServer, Text


@tool
def noop(n: int = 0) -> str:
    """Do nothing."""
    return f"ok {n}"


def counting_calls(name: str = "noop") -> Any:
    """A responder that calls ``name`` forever with a fresh argument each time."""
    counter = iter(range(1_000_000))

    def respond(body: dict[str, Any]) -> Calls:
        return Calls((name, {"n": next(counter)}))

    return respond


def assert_consistent(history: list[Message]) -> None:
    """Every assistant tool-call turn is followed by exactly its results, in order."""
    i = 0
    while i < len(history):
        message = history[i]
        if isinstance(message, AssistantMessage) and message.tool_calls:
            ids = [c.id for c in message.tool_calls]
            results = history[i + 1 : i + 1 + len(ids)]
            assert [r.tool_call_id for r in results if isinstance(r, ToolMessage)] == ids
            i += len(ids)
        i += 1


def test_config_rejects_nonsense_values() -> None:
    with pytest.raises(ConfigError):
        AgentConfig(max_iterations=0)
    with pytest.raises(ConfigError):
        AgentConfig(deadline=-1)
    with pytest.raises(ConfigError):
        AgentConfig(steer_after_failed_rounds=4, stop_after_failed_rounds=3)


def test_max_iterations_stops_the_loop(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.responder = counting_calls()
    config = AgentConfig(max_iterations=3)
    agent = Agent(llm, tools=[noop], config=config, runtime=runtime)

    with pytest.raises(AgentStopped) as info:
        agent.send("go on forever")

    assert info.value.condition == "max_iterations"
    assert len(llm_server.requests) == 3
    assert_consistent(agent.history)
    assert isinstance(agent.history[-1], ToolMessage)


def test_token_cap_from_server_usage_stops_the_loop(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(
        Calls(("noop", {"n": 1}), usage=(10, 5)),
        Calls(("noop", {"n": 2}), usage=(10, 5)),
        Text("never sent"),
    )
    agent = Agent(llm, tools=[noop], config=AgentConfig(max_total_tokens=20), runtime=runtime)

    with pytest.raises(AgentStopped) as info:
        agent.send("spend tokens")

    assert info.value.condition == "max_total_tokens"
    assert len(llm_server.requests) == 2  # 15 tokens allowed a second call, 30 did not
    assert agent.usage.total == 30


def test_answer_within_the_token_cap_is_returned(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(Calls(("noop", {})), Text("fine"))
    agent = Agent(llm, tools=[noop], config=AgentConfig(max_total_tokens=15), runtime=runtime)
    assert agent.send("cheap").content == "fine"


def test_deadline_stops_a_slow_tool(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    started = threading.Event()

    @tool
    def slow(ctx: ToolContext) -> str:
        """Wait until cancelled."""
        started.set()
        ctx.cancel.wait(WAIT)
        return "too late"

    llm_server.script(Calls(("slow", {})), Text("never sent"))
    agent = Agent(llm, tools=[slow], config=AgentConfig(deadline=0.3), runtime=runtime)

    with pytest.raises(AgentStopped) as info:
        agent.send("take your time")

    assert info.value.condition == "deadline"
    assert started.is_set()
    assert len(llm_server.requests) == 1
    assert_consistent(agent.history)
    assert agent.history[-1].is_error  # type: ignore[union-attr]


def test_deadline_checked_before_each_round(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    release = threading.Event()

    @tool
    def stubborn() -> str:
        """Ignore cancellation, return late."""
        release.wait(WAIT)
        return "done"

    # The deadline fires while the tool holds on; its result is recorded as
    # cancelled and no further LLM call is made.
    llm_server.script(Calls(("stubborn", {})), Text("never sent"))
    agent = Agent(llm, tools=[stubborn], config=AgentConfig(deadline=0.2), runtime=runtime)
    try:
        with pytest.raises(AgentStopped) as info:
            agent.send("go")
    finally:
        release.set()
    assert info.value.condition == "deadline"
    assert len(llm_server.requests) == 1


def test_shared_tree_cap_stops_parent_and_child(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    child_errors: list[str] = []
    holder: dict[str, Agent] = {}

    @tool
    def delegate(task: str) -> str:
        """Hand the task to a sub-agent."""
        child = holder["root"].spawn_child(name="helper", tools=[noop])
        try:
            return child.send(task).content
        except AgentStopped as err:
            child_errors.append(err.condition)
            raise

    llm_server.script(Calls(("delegate", {"task": "work"})))
    llm_server.responder = counting_calls()  # the child (then the root) loop on noop
    config = AgentConfig(tree_max_iterations=4, max_iterations=10)
    root = Agent(llm, tools=[delegate], config=config, runtime=runtime)
    holder["root"] = root

    with pytest.raises(AgentStopped) as info:
        root.send("delegate it")

    assert info.value.condition == "tree_iterations"
    assert child_errors == ["tree_iterations"]
    # 1 root call + 3 child calls used the tree's 4 iterations.
    assert len(llm_server.requests) == 4
    assert_consistent(root.history)


def test_three_identical_tool_call_rounds_stop_as_a_loop(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    runs: list[int] = []

    @tool
    def same(n: int) -> str:
        """Always the same."""
        runs.append(n)
        return "same"

    llm_server.responder = lambda body: Calls(("same", {"n": 1}))
    agent = Agent(llm, tools=[same], runtime=runtime)

    with pytest.raises(AgentStopped) as info:
        agent.send("repeat")

    assert info.value.condition == "loop_detected"
    assert runs == [1, 1]  # the third identical round never ran
    assert len(llm_server.requests) == 3
    assert_consistent(agent.history)


def test_loop_guard_can_be_switched_off(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.responder = lambda body: Calls(("noop", {"n": 1}))
    config = AgentConfig(loop_guard=False, max_iterations=5)
    agent = Agent(llm, tools=[noop], config=config, runtime=runtime)

    with pytest.raises(AgentStopped) as info:
        agent.send("repeat")

    assert info.value.condition == "max_iterations"


def test_failing_tool_rounds_get_one_steering_note_then_stop(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    @tool
    def broken(n: int) -> str:
        """Always fails."""
        raise ValueError(f"broken {n}")

    llm_server.responder = counting_calls("broken")
    agent = Agent(llm, tools=[broken], runtime=runtime)

    with pytest.raises(AgentStopped) as info:
        agent.send("try")

    assert info.value.condition == "tool_failures"
    history = agent.history
    notes = [i for i, m in enumerate(history) if m == UserMessage(STEERING_NOTE.format(rounds=3))]
    assert len(notes) == 1
    # The note follows the third failed round's result and reached the model.
    tool_results = [i for i, m in enumerate(history) if isinstance(m, ToolMessage)]
    assert notes[0] == tool_results[2] + 1
    assert any("Note from the agent framework" in (m["content"] or "")
               for m in llm_server.requests[3]["messages"])  # fmt: skip
    assert len(llm_server.requests) == 6
    assert all(json.loads(history[i].content)["error"] for i in tool_results)
    assert_consistent([m for m in history if not isinstance(m, UserMessage)])


def test_a_successful_round_resets_the_failure_count(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    @tool
    def flaky(n: int) -> str:
        """Fails on odd numbers."""
        if n % 3:
            raise ValueError("odd")
        return "ok"

    llm_server.responder = counting_calls("flaky")  # n = 0, 1, 2, 3, ...: two fails, one ok
    config = AgentConfig(max_iterations=9)
    agent = Agent(llm, tools=[flaky], config=config, runtime=runtime)

    with pytest.raises(AgentStopped) as info:
        agent.send("try")

    assert info.value.condition == "max_iterations"
    assert not any(isinstance(m, UserMessage) and "Note" in m.content for m in agent.history)


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "not streamed"])
def test_an_answer_cut_off_by_the_token_cap_ends_with_a_note_the_user_sees(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, stream: bool
) -> None:
    llm_server.script(
        Calls(("noop", {})), Text("shelf 1: a box\nshelf 2: a", finish_reason="length")
    )
    agent = Agent(llm, tools=[noop], config=AgentConfig(stream=stream), runtime=runtime)
    shown = [e.text for e in agent.stream("What is on the shelves?") if isinstance(e, TokenDelta)]
    answer = agent.history[-1]
    assert isinstance(answer, AssistantMessage)
    assert answer.content == "shelf 1: a box\nshelf 2: a" + CUT_OFF_NOTE
    assert CUT_OFF_NOTE.startswith("\n\n(") and "token cap" in CUT_OFF_NOTE
    if stream:
        assert "".join(shown) == answer.content  # the note is shown as it is kept


def test_a_finished_answer_gets_no_cut_off_note(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(Text("All done."))
    assert Agent(llm, runtime=runtime).send("Done?").content == "All done."
