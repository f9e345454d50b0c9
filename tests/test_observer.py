"""The observer seam: LLM, tool and MCP calls are reported to whatever observer is installed.

An observer written against :mod:`agent_smith.observer` alone (no tracing)
sees each unit of work begin and end, with the facts a span would need, on
a real scripted LLM server and a real MCP HTTP server.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from agent_smith import (
    Agent,
    AgentRequest,
    Finished,
    LlmClient,
    McpClient,
    Runtime,
    ServerConfig,
    tool,
)
from agent_smith.base.observer_fanout import FanOut
from agent_smith.messages import ToolCall
from agent_smith.observer import (
    NO_CHAT,
    NO_MCP,
    NO_TOOL,
    ChatClientFacts,
    ChatObservation,
    ChatRequestFacts,
    JsonObject,
    McpObservation,
    McpServerFacts,
    Observer,
    ToolFacts,
    ToolObservation,
    add_observer,
    get_observer,
    remove_observer,
    set_observer,
)
from agent_smith.tracing.observer import OTEL_OBSERVER
from tests.support.fake_mcp_http import FakeMcpServer
from tests.support.llm_server import Calls, ScriptedLlmServer, Text


class _Recorder(Observer):
    """Writes down what it is told, as ``(kind, fact...)`` tuples (from any thread)."""

    def __init__(self) -> None:
        self.seen: list[tuple[Any, ...]] = []
        self._lock = threading.Lock()

    def note(self, *entry: Any) -> None:
        with self._lock:
            self.seen.append(entry)

    def on_chat_start(
        self, client: ChatClientFacts, request: ChatRequestFacts, body: Mapping[str, Any]
    ) -> ChatObservation:
        self.note("chat", client.model, len(request.messages), body.get("stream"))
        return _Chat(self)

    def on_tool_start(self, call: ToolCall, tool: ToolFacts, runtime: Runtime) -> ToolObservation:
        self.note("tool", call.name, tool.schema.description)
        return _Tool(self)

    def on_tool_rejected(self, call: ToolCall, problem: str, runtime: Runtime) -> None:
        self.note("rejected", call.name)

    def on_mcp_request(
        self, server: McpServerFacts, method: str, params: JsonObject | None
    ) -> McpObservation:
        self.note("mcp", server.alias, method)
        return _Mcp(self)

    def inject(self, headers: dict[str, str]) -> None:
        headers["x-observed"] = "1"


class _Chat(ChatObservation):
    def __init__(self, recorder: _Recorder) -> None:
        self.recorder = recorder

    def inject(self, headers: dict[str, str]) -> None:
        headers["x-observed"] = "chat"

    def watch(self, events: Iterator[Any]) -> Iterator[Any]:
        for event in events:
            if isinstance(event, Finished):  # a streamed call's reply comes this way
                self.finish(event.response)
            yield event

    def finish(self, response: Any) -> Any:
        self.recorder.note("chat finished", response.finish_reason)
        return response


class _Tool(ToolObservation):
    def __init__(self, recorder: _Recorder) -> None:
        self.recorder = recorder

    def finish(self, result: Any) -> Any:
        self.recorder.note("tool finished", result.content, result.is_error)
        return result


class _Mcp(McpObservation):
    def __init__(self, recorder: _Recorder) -> None:
        self.recorder = recorder

    def sent(self, request_id: int, protocol_version: str) -> None:
        self.recorder.note("mcp sent", bool(protocol_version) or request_id >= 0)

    def finish(self, result: JsonObject) -> JsonObject:
        self.recorder.note("mcp finished")
        return result


@pytest.fixture
def recorder() -> Iterator[_Recorder]:
    recorder = _Recorder()
    previous = set_observer(recorder)
    try:
        yield recorder
    finally:
        set_observer(previous)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_importing_the_package_installs_the_tracing_observer() -> None:
    assert get_observer() is OTEL_OBSERVER


def test_the_base_observer_hands_out_shared_observations_that_do_nothing() -> None:
    observer = Observer()
    call = ToolCall("c", "add", {})
    assert observer.on_tool_start(call, add, Runtime.__new__(Runtime)) is NO_TOOL
    assert observer.on_mcp_request(ServerConfig(alias="a", url="http://h/"), "ping", None) is NO_MCP
    with NO_CHAT as chat:
        assert chat.finish("reply") == "reply"
        events = iter([1, 2])
        assert chat.watch(events) is events
    assert NO_MCP.propagate({"a": 1}) == {"a": 1}


def test_an_agent_turn_reports_its_chat_calls_and_tool_calls(
    recorder: _Recorder, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    with Agent(LlmClient(llm_server.url, "m", runtime=runtime), tools=[add]) as agent:
        for stream in (False, True):
            llm_server.script(Calls(("add", {"a": 1, "b": 2})), Text("3"))
            assert agent.send(AgentRequest("add", stream=stream)).content == "3"
            assert recorder.seen == [
                ("chat", "m", 1 + 4 * stream, stream),
                ("chat finished", "tool_calls"),
                ("tool", "add", "Add two numbers."),
                ("tool finished", "3", False),
                ("chat", "m", 3 + 4 * stream, stream),
                ("chat finished", "stop"),
            ]
            recorder.seen.clear()
    assert [h.get("x-observed") for h in llm_server.headers] == ["chat"] * 4


def test_a_call_refused_before_it_runs_is_reported_as_rejected(
    recorder: _Recorder, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Calls(("no_such_tool", {})), Text("sorry"))
    with Agent(LlmClient(llm_server.url, "m", runtime=runtime), tools=[add]) as agent:
        agent.send("go")

    assert ("rejected", "no_such_tool") in recorder.seen
    assert not [entry for entry in recorder.seen if entry[0] == "tool"]


def test_mcp_requests_are_reported_and_their_posts_carry_the_observers_headers(
    recorder: _Recorder, runtime: Runtime
) -> None:
    with FakeMcpServer() as server:
        config = ServerConfig(alias="web", url=server.url)
        with McpClient.connect(config, runtime=runtime) as client:
            assert client.call_tool("echo", {"text": "hi"}).content == "hi"
        calls = [seen for seen in server.state.seen if seen.rpc_method == "tools/call"]

    assert ("mcp", "web", "tools/call") in recorder.seen
    assert recorder.seen.count(("mcp finished",)) >= 2  # tools/list while connecting, the call
    assert [seen.headers.get("x-observed") for seen in calls] == ["1"]


def test_added_observers_are_told_too_until_removed(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    first, second = _Recorder(), _Recorder()
    previous = set_observer(first)
    try:
        add_observer(second)
        assert isinstance(get_observer(), FanOut)
        llm_server.script(Calls(("add", {"a": 1, "b": 2})), Text("3"))
        with Agent(LlmClient(llm_server.url, "m", runtime=runtime), tools=[add]) as agent:
            agent.send("add")
        assert first.seen == second.seen
        assert ("tool finished", "3", False) in second.seen
        remove_observer(second)
        assert get_observer() is first
    finally:
        set_observer(previous)
