"""The agent side of skills and MCP binding: the effective registry, prompt, events."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from agent_smith import Agent
from agent_smith.agent.config import AgentConfig
from agent_smith.agent.events import AgentHooks
from agent_smith.errors import SkillError
from agent_smith.llm.client import LlmClient
from agent_smith.mcp.config import ServerConfig
from agent_smith.mcp.events import LifecycleEvent, LifecycleKind, McpHook, Notification
from agent_smith.messages import ToolMessage
from agent_smith.runtime import Runtime
from agent_smith.skills import Skill, compose_system_prompt
from agent_smith.tools.base import ToolResult, ToolSchema
from agent_smith.tools.function import make_tool, tool
from tests.support.llm_server import Calls, ScriptedLlmServer, Text


class FakeMcpClient:
    """Just enough of McpClient for binding: alias, config, tools, resources, hook, call_tool."""

    def tool_info(self, name: str) -> None:
        return None  # no tool that must run as a task

    def __init__(self, alias: str, names: list[str]) -> None:
        self.alias = alias
        self.config = ServerConfig(alias=alias, url="http://127.0.0.1:9/mcp")
        self.tools = [ToolSchema(n, f"remote {n}") for n in names]
        self.resources: list[Any] = []
        self.hook: McpHook | None = None
        self.calls: list[str] = []

    def set_hook(self, hook: McpHook | None) -> None:
        self.hook = hook

    def call_tool(self, name: str, args: dict[str, Any], **_: Any) -> ToolResult:
        self.calls.append(name)
        return ToolResult(f"remote {name} ran")

    def emit(self, event: Any) -> None:
        assert self.hook is not None
        self.hook(event)


def named(name: str, result: str) -> Any:
    def fn() -> str:
        return result

    return make_tool(fn, name=name, schema=ToolSchema(name, "test tool"))


@tool
def search(query: str = "") -> str:
    """Search."""
    return "skill search"


def test_effective_tools_are_base_then_skill_tools_then_mcp_tools(
    llm: LlmClient, runtime: Runtime
) -> None:
    agent = Agent(llm, tools=[named("base_tool", "b")], runtime=runtime)
    client = FakeMcpClient("srv", ["echo"])
    agent.add_mcp_client(client)  # type: ignore[arg-type]
    agent.activate(Skill("Web Search", tools=(search,)))
    agent.activate(Skill("notes", tools=(named("read", "r"),)))

    assert agent.tools == [
        "base_tool",
        "web_search__search",
        "notes__read",
        "mcp_srv__echo",
        "mcp_srv__read_resource",
    ]
    assert [s.name for s in agent.skills] == ["Web Search", "notes"]

    agent.deactivate("web-search")  # same normalised name
    assert agent.tools == ["base_tool", "notes__read", "mcp_srv__echo", "mcp_srv__read_resource"]


def test_system_prompt_is_composed_from_active_skills_in_order(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    first = Skill("alpha", system_prompt="Use alpha.", context_data={"k": 1})
    second = Skill("beta", system_prompt="Use beta.")
    llm_server.script(Text("ok"), Text("ok"))
    agent = Agent(llm, "Base.", runtime=runtime)
    agent.activate(first)
    agent.activate(second)

    agent.send("hi")
    system = llm_server.requests[0]["messages"][0]
    assert system == {"role": "system", "content": compose_system_prompt("Base.", [first, second])}
    assert agent.effective_system_prompt() == system["content"]

    agent.deactivate("alpha")
    agent.send("again")
    assert llm_server.requests[1]["messages"][0]["content"] == "Base.\n\n# Skill: beta\nUse beta."


def test_a_skill_tool_shadows_a_base_tool_until_deactivated(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent = Agent(llm, tools=[named("web__search", "base search")], runtime=runtime)
    with caplog.at_level(logging.WARNING, logger="agent_smith"):
        agent.activate(Skill("web", tools=(search,)))
        assert agent.tools == ["web__search"]
    assert any("web__search" in r.getMessage() for r in caplog.records)

    llm_server.script(Calls(("web__search", {})), Text("done"), Calls(("web__search", {})))
    llm_server.script(Text("done"))
    agent.send("search")
    agent.deactivate("web")
    agent.send("search again")

    results = [m.content for m in agent.history if isinstance(m, ToolMessage)]
    assert results == ["skill search", "base search"]


def test_skill_context_over_the_cap_is_refused_without_side_effects(
    llm: LlmClient, runtime: Runtime
) -> None:
    agent = Agent(llm, config=AgentConfig(skill_context_max_bytes=10), runtime=runtime)
    big = Skill("big", tools=(search,), context_data={"text": "x" * 20})

    with pytest.raises(SkillError) as info:
        agent.activate(big)

    assert info.value.skill_name == "big"
    assert agent.tools == [] and agent.skills == []


def test_unusable_skill_names_and_unknown_deactivations_raise_skill_error(
    llm: LlmClient, runtime: Runtime
) -> None:
    agent = Agent(llm, runtime=runtime)
    with pytest.raises(SkillError):
        agent.activate(Skill("c++"))
    with pytest.raises(SkillError):
        agent.deactivate("never-active")


def test_activating_a_skill_again_replaces_it(llm: LlmClient, runtime: Runtime) -> None:
    agent = Agent(llm, runtime=runtime)
    agent.activate(Skill("tools", tools=(named("a", "a"),)))
    agent.activate(Skill("other", tools=(named("b", "b"),)))
    agent.activate(Skill("Tools", tools=(named("c", "c"),)))
    assert agent.tools == ["other__b", "tools__c"]


def test_mcp_events_of_bound_clients_reach_on_mcp_event(llm: LlmClient, runtime: Runtime) -> None:
    events: list[Any] = []
    agent = Agent(llm, hooks=AgentHooks(on_mcp_event=events.append), runtime=runtime)
    own = FakeMcpClient("own", ["a"])
    shared = FakeMcpClient("shared", ["b"])
    agent.add_mcp_client(own)  # type: ignore[arg-type]
    agent.activate(Skill("s", mcp_clients=(shared,)))  # type: ignore[arg-type]

    lost = LifecycleEvent(LifecycleKind.DISCONNECTED, "own", "gone")
    note = Notification("notifications/message", {"data": "hi"})
    own.emit(lost)
    shared.emit(note)
    assert events == [lost, note]

    agent.deactivate("s")
    assert shared.hook is None and own.hook is not None


def test_tools_list_changed_rebuilds_the_registry(llm: LlmClient, runtime: Runtime) -> None:
    events: list[Any] = []
    agent = Agent(llm, hooks=AgentHooks(on_mcp_event=events.append), runtime=runtime)
    client = FakeMcpClient("srv", ["one"])
    agent.add_mcp_client(client)  # type: ignore[arg-type]
    assert agent.tools == ["mcp_srv__one", "mcp_srv__read_resource"]

    client.tools = [ToolSchema("one"), ToolSchema("two")]  # the client refreshes first
    changed = Notification("notifications/tools/list_changed")
    client.emit(changed)

    assert agent.tools == ["mcp_srv__one", "mcp_srv__two", "mcp_srv__read_resource"]
    assert events == [changed]


def test_mcp_tool_calls_route_to_their_client(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    client = FakeMcpClient("srv", ["echo"])
    agent = Agent(llm, runtime=runtime)
    agent.add_mcp_client(client)  # type: ignore[arg-type]
    llm_server.script(Calls(("mcp_srv__echo", {})), Text("done"))

    agent.send("echo")

    assert client.calls == ["echo"]
    assert agent.history[2].content == "remote echo ran"
