"""Cancellation from other threads, early-closed streams, and the one-turn-at-a-time rule."""

from __future__ import annotations

import threading

import pytest

from agent_smith import Agent, AgentRequest
from agent_smith.agent.events import AgentHooks, ToolCallRequested, ToolResultReady
from agent_smith.errors import AgentBusyError
from agent_smith.llm.client import LlmClient
from agent_smith.llm.events import TokenDelta
from agent_smith.messages import AssistantMessage, ToolMessage, UserMessage
from agent_smith.runtime import Runtime
from agent_smith.tools.base import ToolContext
from agent_smith.tools.function import tool
from tests.agent.conftest import WAIT
from tests.agent.test_stops import assert_consistent
from tests.support.background import Background, cancel_during_send
from tests.support.llm_server import (
    Calls,
    Chunks,
    ScriptedLlmServer,
    Text,
    echo_tools_responder,
    sse_frames,
)


def stalled_text(gate: threading.Event) -> Chunks:
    frames = list(sse_frames(Text("first words then more"), {}))
    return Chunks(*frames[:2], gate, *frames[2:])


def test_cancel_from_another_thread_stops_a_streaming_send(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    gate = threading.Event()
    streaming = threading.Event()
    llm_server.script(stalled_text(gate))
    hooks = AgentHooks(on_stream_event=lambda e: streaming.set())
    agent = Agent(llm, hooks=hooks, runtime=runtime)
    cancel_during_send(agent, "talk", reached=streaming, release=gate)
    assert agent.history == [UserMessage("talk")]


def test_cancel_from_another_thread_stops_a_send_in_a_slow_tool(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    entered = threading.Event()
    release = threading.Event()

    @tool
    def slow() -> str:
        """Ignore cancellation and take long."""
        entered.set()
        release.wait(WAIT)
        return "late"

    llm_server.script(Calls(("slow", {})), Text("never sent"))
    agent = Agent(llm, tools=[slow], runtime=runtime)
    cancel_during_send(agent, "wait", reached=entered, release=release)
    history = agent.history
    assert_consistent(history)
    assert isinstance(history[-1], ToolMessage) and history[-1].is_error
    assert "cancelled" in history[-1].content
    assert len(llm_server.requests) == 1


def test_closing_the_stream_during_tokens_ends_the_turn_and_frees_the_agent(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    gate = threading.Event()
    llm_server.script(stalled_text(gate), Text("again"))
    agent = Agent(llm, runtime=runtime)
    try:
        for event in agent.stream("talk"):
            if isinstance(event, TokenDelta):
                break  # the server is still holding the rest of the reply
    finally:
        gate.set()
    assert agent.history == [UserMessage("talk")]
    assert agent.send("once more").content == "again"


def test_breaking_out_after_a_tool_call_records_cancelled_results(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    ran: list[str] = []

    @tool
    def act(what: str) -> str:
        """Do something."""
        ran.append(what)
        return "done"

    llm_server.script(Calls(("act", {"what": "a"}), ("act", {"what": "b"})), Text("next"))
    agent = Agent(llm, tools=[act], runtime=runtime)

    stream = agent.stream("act twice")
    for event in stream:
        if isinstance(event, ToolCallRequested):
            break
    stream.close()

    history = agent.history
    assert ran == []
    assert_consistent(history)
    assert [m.is_error for m in history if isinstance(m, ToolMessage)] == [True, True]
    assert agent.send("go on").content == "next"


def test_breaking_out_after_tool_results_keeps_them(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(Calls(("act", {})))

    @tool
    def act() -> str:
        """Do something."""
        return "done"

    agent = Agent(llm, tools=[act], runtime=runtime)
    stream = agent.stream("act")
    for event in stream:
        if isinstance(event, ToolResultReady):
            break
    stream.close()

    assert [type(m) for m in agent.history] == [UserMessage, AssistantMessage, ToolMessage]
    assert agent.history[-1].content == "done"
    assert len(llm_server.requests) == 1


def test_a_second_concurrent_send_gets_agent_busy_at_once(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    gate = threading.Event()
    streaming = threading.Event()
    llm_server.script(stalled_text(gate))
    agent = Agent(llm, hooks=AgentHooks(on_stream_event=lambda e: streaming.set()), runtime=runtime)
    try:
        first = Background(lambda: agent.send("first"))
        assert streaming.wait(WAIT)
        second = Background(lambda: agent.send("second"))
        assert second.join(WAIT)
        assert isinstance(second.error, AgentBusyError)
        assert not first.done.is_set()
    finally:
        gate.set()
        first.join(WAIT)
    assert first.error is None
    assert first.result.content == "first words then more"
    assert [m.content for m in agent.history] == ["first", "first words then more"]


def test_twenty_agents_on_one_runtime_from_twenty_threads(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    # Default retries, as a web app would use: twenty connects at once can
    # overflow the test server's small listen backlog and get reset.
    llm = LlmClient(llm_server.url, "test", runtime=runtime)
    llm_server.responder = echo_tools_responder  # call the first tool, then report its result
    start = threading.Barrier(20)

    def make(i: int) -> Agent:
        @tool
        def where(city: str) -> str:
            """Locate a city."""
            return f"{city} #{i}"

        return Agent(llm, tools=[where], runtime=runtime, name=f"agent-{i}")

    agents = [make(i) for i in range(20)]

    def drive(agent: Agent) -> str:
        start.wait(WAIT)
        return agent.send("where is it?").content

    jobs = [Background(lambda a=a: drive(a)) for a in agents]  # type: ignore[misc]
    assert all(job.join(60) for job in jobs)
    assert [job.error for job in jobs] == [None] * 20
    assert [job.result for job in jobs] == [f"Result: Paris #{i}" for i in range(20)]
    assert len(llm_server.requests) == 40


@pytest.mark.parametrize("stream", [True, False])
def test_cancel_before_any_turn_is_harmless(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, stream: bool
) -> None:
    llm_server.script(Text("fine"))
    agent = Agent(llm, runtime=runtime)
    agent.cancel()
    assert agent.send(AgentRequest("hi", stream=stream)).content == "fine"


def test_cancel_reaches_a_tool_through_its_token(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    entered = threading.Event()
    saw_cancel = threading.Event()

    @tool
    def polite(ctx: ToolContext) -> str:
        """Stop when asked."""
        entered.set()
        if ctx.cancel.wait(WAIT):
            saw_cancel.set()
        return "stopped"

    llm_server.script(Calls(("polite", {})))
    agent = Agent(llm, tools=[polite], runtime=runtime)
    cancel_during_send(agent, "go", reached=entered)
    assert saw_cancel.wait(WAIT)
