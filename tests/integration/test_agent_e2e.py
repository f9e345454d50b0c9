"""End to end: an agent against the real scripted HTTP server and a real MCP server.

A multi-step, tool-using conversation (parallel calls, a follow-up round, a
second user turn) streamed and not; then an agent that connects an MCP server
(the official SDK's, over stdio), uses its tools, sees its events, and picks
up a tool the server adds at run time.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from agent_smith import Agent, AgentRequest
from agent_smith.agent.events import AgentHooks, FinalAnswer, ToolResultReady
from agent_smith.llm.client import LlmClient
from agent_smith.llm.events import TokenDelta
from agent_smith.mcp.events import LifecycleEvent, LifecycleKind, Notification
from agent_smith.messages import AssistantMessage, TokenUsage, ToolMessage, UserMessage
from agent_smith.runtime import Runtime
from agent_smith.tools.function import tool
from tests.integration.servers import sdk_stdio
from tests.support.llm_server import Calls, ScriptedLlmServer, Text

pytestmark = pytest.mark.usefixtures("no_thread_leak")

WAIT = 15.0

INVENTORY = {"apples": 12, "pears": 3}


@tool
def stock(item: str) -> dict[str, Any]:
    """How many of an item are in stock.

    Args:
        item: The item's name.
    """
    return {"item": item, "count": INVENTORY.get(item, 0)}


@tool
def order(item: str, count: int) -> str:
    """Order more of an item."""
    INVENTORY[item] = INVENTORY.get(item, 0) + count
    return f"ordered {count} {item}"


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    with Runtime(max_workers=4) as rt:
        yield rt


@pytest.fixture
def llm(llm_server: ScriptedLlmServer, runtime: Runtime) -> LlmClient:
    return LlmClient(llm_server.url, "test", runtime=runtime)


@pytest.mark.parametrize("stream", [True, False])
def test_multi_step_tool_conversation(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, stream: bool
) -> None:
    INVENTORY.update(apples=12, pears=3)
    llm_server.script(
        Calls(("stock", {"item": "apples"}), ("stock", {"item": "pears"})),
        Calls(("order", {"item": "pears", "count": 10})),
        Text("Apples: 12. Pears were low (3); I ordered 10 more."),
        Text("You now have 13 pears."),
    )
    seen: list[Any] = []
    agent = Agent(
        llm,
        "You manage a fruit shop.",
        [stock, order],
        hooks=AgentHooks(on_message=seen.append),
        runtime=runtime,
    )

    events = list(agent.stream(AgentRequest("Check stock and restock.", stream=stream)))
    final = events[-1]
    assert isinstance(final, FinalAnswer)
    assert final.message.content == "Apples: 12. Pears were low (3); I ordered 10 more."
    assert final.message.usage == TokenUsage(30, 15, 45)
    assert any(isinstance(e, TokenDelta) for e in events) is stream
    results = [e.message for e in events if isinstance(e, ToolResultReady)]
    assert [json.loads(r.content)["count"] for r in results[:2]] == [12, 3]
    assert results[2].content == "ordered 10 pears"

    second = agent.send(AgentRequest("How many pears now?", stream=stream))
    assert second.content == "You now have 13 pears."
    assert INVENTORY["pears"] == 13

    # The server saw the whole conversation, in wire form, on the last call.
    wire = llm_server.requests[-1]["messages"]
    assert [m["role"] for m in wire] == [
        "system", "user", "assistant", "tool", "tool", "assistant", "tool", "assistant",
        "user",
    ]  # fmt: skip
    assert [m["tool_call_id"] for m in wire if m["role"] == "tool"] == [
        "call_0", "call_1", "call_0",
    ]  # fmt: skip
    assert seen == agent.history
    assert agent.history[-2:] == [
        UserMessage("How many pears now?"),
        AssistantMessage("You now have 13 pears.", usage=TokenUsage(10, 5, 15)),
    ]


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_the_agents_mcp_handlers_answer_what_the_server_asks(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, protocol: str
) -> None:
    # auto: 2026-07-28, one input_required round; legacy: two server requests.
    llm_server.script(Calls(("mcp_sdk__ask_both", {"question": "name?"})), Text("done"))
    with Agent(llm, runtime=runtime) as agent:
        agent.connect_mcp(
            sdk_stdio(protocol=protocol),
            elicitation_handler=lambda p: {"action": "accept", "content": {"answer": "Ann"}},
            roots_handler=lambda p: {"roots": [{"uri": "file:///w"}]},
        )
        assert agent.send("ask").content == "done"
        results = [m.content for m in agent.history if isinstance(m, ToolMessage)]
    assert results == ["Ann in file:///w"]


def test_agent_uses_a_real_mcp_server_and_follows_its_tool_list(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    events: list[Any] = []
    changed = threading.Event()

    def on_mcp(event: Any) -> None:
        events.append(event)
        if isinstance(event, Notification) and event.method.endswith("tools/list_changed"):
            changed.set()

    llm_server.script(
        Calls(("mcp_sdk__add", {"a": 2, "b": 40}), ("mcp_sdk__echo", {"text": "hi"})),
        Calls(("mcp_sdk__add_tool", {})),
        Text("done"),
    )
    with Agent(llm, hooks=AgentHooks(on_mcp_event=on_mcp), runtime=runtime) as agent:
        agent.connect_mcp(sdk_stdio())
        assert "mcp_sdk__extra" not in agent.tools
        assert agent.send("use the server").content == "done"
        assert changed.wait(WAIT)

        results = [m.content for m in agent.history if isinstance(m, ToolMessage)]
        assert results[:2] == ["42", "hi"]
        assert "mcp_sdk__extra" in agent.tools

        # The refresh is asynchronous (the client lists tools again on its
        # event thread), so the next send is the first to offer the new tool.
        llm_server.script(Calls(("mcp_sdk__extra", {})), Text("used extra"))
        assert agent.send("use the new tool").content == "used extra"
        offered = [t["function"]["name"] for t in llm_server.requests[-2]["tools"]]
        assert "mcp_sdk__extra" in offered
        assert not agent.history[-2].is_error  # type: ignore[union-attr]
    assert any(isinstance(e, LifecycleEvent) and e.kind is LifecycleKind.CONNECTED for e in events)
