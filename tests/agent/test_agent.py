"""The agent loop against the scripted server: answers, events, hooks, tool errors."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from typing import Any

import pytest

from agent_smith import Agent, AgentRequest
from agent_smith.agent.config import AgentConfig
from agent_smith.agent.events import (
    AgentHooks,
    FinalAnswer,
    ToolCallRequested,
    ToolResultReady,
)
from agent_smith.errors import AgentStopped, ConfigError
from agent_smith.llm.client import LlmClient
from agent_smith.llm.events import Finished, TokenDelta, ToolCallStarted
from agent_smith.llm.request import SamplingParams
from agent_smith.messages import (
    AssistantMessage,
    Message,
    TokenUsage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_smith.runtime import Runtime
from agent_smith.tools.base import ToolResult
from agent_smith.tools.function import tool
from tests.support.llm_server import Calls, Chunks, ScriptedLlmServer, Text, sse_frames


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _types(events: list[Any]) -> list[str]:
    return [type(e).__name__ for e in events]


@pytest.mark.parametrize("stream", [True, False])
def test_send_runs_tool_rounds_and_returns_final_answer_with_turn_usage(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, stream: bool
) -> None:
    llm_server.script(
        Calls(("add", {"a": 1, "b": 2}), usage=(10, 5)),
        Calls(("add", {"a": 3, "b": 4}), usage=(20, 5)),
        Text("The sums are 3 and 7.", usage=(30, 7)),
    )
    agent = Agent(llm, "Be brief.", [add], config=AgentConfig(stream=stream), runtime=runtime)

    final = agent.send("add things")

    assert final.content == "The sums are 3 and 7."
    assert final.usage == TokenUsage(60, 17, 77)
    assert agent.usage == TokenUsage(60, 17, 77)
    history = agent.history
    assert [m.role for m in history] == [
        "user", "assistant", "tool", "assistant", "tool", "assistant",
    ]  # fmt: skip
    assert [m.content for m in history if isinstance(m, ToolMessage)] == ["3", "7"]
    # The stored final message keeps its own usage; the returned one the turn's.
    assert history[-1].usage == TokenUsage(30, 7, 37)  # type: ignore[union-attr]
    last = llm_server.requests[-1]
    assert last["messages"][0] == {"role": "system", "content": "Be brief."}
    assert [t["function"]["name"] for t in last["tools"]] == ["add"]
    assert last["messages"][-1]["content"] == "7"
    assert bool(last.get("stream")) is stream


def test_stream_yields_llm_events_then_agent_events_in_order(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(Calls(("add", {"a": 1, "b": 1})), Text("two"))
    agent = Agent(llm, tools=[add], runtime=runtime)

    events = list(agent.stream("1+1?"))

    names = _types(events)
    first_turn = names[: names.index("ToolResultReady") + 1]
    assert first_turn[0] == "ToolCallStarted"
    assert first_turn[-5:] == [
        "ToolCallCompleted", "Finished", "AssistantTurn", "ToolCallRequested", "ToolResultReady",
    ]  # fmt: skip
    second_turn = names[len(first_turn) :]
    assert second_turn == ["TokenDelta", "Finished", "AssistantTurn", "FinalAnswer"]
    requested = next(e for e in events if isinstance(e, ToolCallRequested))
    assert requested.call.name == "add" and requested.call.arguments == {"a": 1, "b": 1}
    ready = next(e for e in events if isinstance(e, ToolResultReady))
    assert ready.message.content == "2"
    final = events[-1]
    assert isinstance(final, FinalAnswer) and final.message.content == "two"


def test_stream_delivers_tokens_while_the_server_is_still_streaming(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    frames = list(sse_frames(Text("hello there"), {}))
    gate = threading.Event()
    llm_server.script(Chunks(*frames[:2], gate, *frames[2:]))
    agent = Agent(llm, runtime=runtime)

    events = agent.stream("hi")
    first = next(events)
    while not isinstance(first, TokenDelta):
        first = next(events)
    # The server is held at the gate: this token arrived before the reply ended.
    assert first.text == "hello"
    assert not gate.is_set()
    gate.set()
    rest = list(events)
    assert isinstance(rest[-1], FinalAnswer)
    assert rest[-1].message.content == "hello there"


def test_non_streaming_request_yields_only_agent_events(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(Calls(("add", {"a": 2, "b": 2})), Text("four"))
    agent = Agent(llm, tools=[add], runtime=runtime)

    events = list(agent.stream(AgentRequest("2+2?", stream=False)))

    assert _types(events) == [
        "AssistantTurn", "ToolCallRequested", "ToolResultReady", "AssistantTurn", "FinalAnswer",
    ]  # fmt: skip
    assert "stream" not in llm_server.requests[0] or not llm_server.requests[0]["stream"]


def test_agent_request_carries_a_user_message_and_sampling(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(Text("ok"))
    agent = Agent(llm, runtime=runtime)

    agent.send(AgentRequest(UserMessage("hello"), sampling=SamplingParams(max_tokens=7)))

    body = llm_server.requests[0]
    assert body["max_tokens"] == 7
    assert body["messages"] == [{"role": "user", "content": "hello"}]
    assert "tools" not in body


def test_conversation_continues_across_sends(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(Text("first"), Text("second"))
    agent = Agent(llm, runtime=runtime)

    agent.send("one")
    agent.send("two")

    assert [m["content"] for m in llm_server.requests[1]["messages"]] == ["one", "first", "two"]
    assert agent.usage == TokenUsage(10, 5, 15)  # the last send only


def test_unknown_tool_and_bad_arguments_become_error_results_and_the_loop_continues(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(
        Calls(("nope", {}), ("add", {"a": "one", "b": 2})),
        Text("sorry"),
    )
    agent = Agent(llm, tools=[add], runtime=runtime)

    final = agent.send("go")

    assert final.content == "sorry"
    results = [m for m in agent.history if isinstance(m, ToolMessage)]
    assert [r.is_error for r in results] == [True, True]
    unknown, invalid = (json.loads(r.content) for r in results)
    assert unknown["error"] is True and "nope" in unknown["message"]
    assert invalid["error"] is True and "add" in invalid["message"]
    # The model saw both errors in tool_calls order.
    sent = [m for m in llm_server.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in sent] == ["call_0", "call_1"]


def test_tool_signalling_done_ends_the_turn_with_its_final_message(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    @tool
    def finish(summary: str) -> ToolResult:
        """Finish the task."""
        return ToolResult("ok", structured={"_done": True, "final_message": summary})

    llm_server.script(Calls(("finish", {"summary": "all done"}), usage=(8, 2)))
    agent = Agent(llm, tools=[finish], runtime=runtime)

    events = list(agent.stream("finish it"))

    final = events[-1]
    assert isinstance(final, FinalAnswer)
    assert final.message.content == "all done"
    assert final.message.usage == TokenUsage(8, 2, 10)
    assert len(llm_server.requests) == 1
    assert agent.history[-1] == AssistantMessage("all done")


def test_plain_functions_become_tools_and_can_be_removed(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    def shout(text: str) -> str:
        """Upper-case the text."""
        return text.upper()

    agent = Agent(llm, tools=[shout], runtime=runtime)
    agent.add_tool(add)
    assert agent.tools == ["shout", "add"]
    with pytest.raises(ConfigError):
        agent.add_tool(add)

    llm_server.script(Calls(("shout", {"text": "hey"})), Text("done"))
    agent.send("shout")
    assert agent.history[2].content == "HEY"

    agent.remove_tool("shout")
    assert agent.tools == ["add"]


def test_hooks_observe_messages_calls_results_and_stream_events(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    seen: dict[str, list[Any]] = {k: [] for k in ("message", "call", "result", "stream")}
    hooks = AgentHooks(
        on_message=seen["message"].append,
        on_tool_call=seen["call"].append,
        on_tool_result=seen["result"].append,
        on_stream_event=seen["stream"].append,
    )
    llm_server.script(Calls(("add", {"a": 1, "b": 2})), Text("three"))
    agent = Agent(llm, tools=[add], hooks=hooks, runtime=runtime)

    agent.send("1+2")

    assert seen["message"] == agent.history
    assert seen["call"] == [ToolCall("call_0", "add", {"a": 1, "b": 2})]
    assert [r.content for r in seen["result"]] == ["3"]
    assert any(isinstance(e, ToolCallStarted) for e in seen["stream"])
    assert sum(isinstance(e, Finished) for e in seen["stream"]) == 2


def test_a_raising_hook_is_logged_and_ignored(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def boom(_: object) -> None:
        raise RuntimeError("hook bug")

    hooks = AgentHooks(
        on_message=boom, on_tool_call=boom, on_tool_result=boom, on_stream_event=boom
    )
    llm_server.script(Calls(("add", {"a": 1, "b": 2})), Text("three"))
    agent = Agent(llm, tools=[add], hooks=hooks, runtime=runtime)

    with caplog.at_level(logging.WARNING, logger="agent_smith"):
        final = agent.send("1+2")

    assert final.content == "three"
    raised = {r.getMessage() for r in caplog.records if r.exc_info}
    assert raised >= {
        "on_message raised; ignored",
        "on_tool_call raised; ignored",
        "on_tool_result raised; ignored",
        "on_stream_event raised; ignored",
    }


def test_on_error_receives_the_error_that_ends_the_turn(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    errors: list[Exception] = []
    llm_server.script(Calls(("add", {"a": 1, "b": 1})))
    agent = Agent(
        llm,
        tools=[add],
        config=AgentConfig(max_iterations=1),
        hooks=AgentHooks(on_error=errors.append),
        runtime=runtime,
    )

    with pytest.raises(AgentStopped) as info:
        agent.send("loop")

    assert errors == [info.value]


def test_send_works_inside_a_running_asyncio_loop(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    """Jupyter runs cells inside an event loop; send() must not need or create one."""

    @tool
    async def lookup(key: str) -> str:
        """Look a key up."""
        await asyncio.sleep(0)
        return f"value of {key}"

    llm_server.script(Calls(("lookup", {"key": "k"})), Text("found it"))
    agent = Agent(llm, tools=[lookup], runtime=runtime)

    async def cell() -> AssistantMessage:
        return agent.send("look it up")

    final = asyncio.run(cell())

    assert final.content == "found it"
    assert agent.history[2].content == "value of k"


def test_history_messages_are_the_public_message_types(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    llm_server.script(Text("hi"))
    agent = Agent(llm, runtime=runtime)
    agent.send("hello")
    history: list[Message] = agent.history
    assert history == [UserMessage("hello"), AssistantMessage("hi", usage=TokenUsage(10, 5, 15))]


def test_agent_uses_its_clients_runtime_by_default(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm = LlmClient(llm_server.url, "test", runtime=runtime)
    assert Agent(llm).runtime is runtime
