"""Policy modes: read runs only read-only tools, write asks as marked, yolo asks nothing."""

from __future__ import annotations

import pytest

from agent_smith import Agent, AgentConfig, ApprovalRequested, Tool, ToolMessage
from agent_smith.agent.approval_gate import READ_MODE
from agent_smith.errors import ConfigError
from agent_smith.llm.client import LlmClient
from tests.support.approvals import Ledger
from tests.support.llm_server import Calls, ScriptedLlmServer, Text


def test_read_mode_denies_a_tool_that_may_write_in_band(
    llm: LlmClient, llm_server: ScriptedLlmServer, tools: list[Tool], ledger: Ledger
) -> None:
    llm_server.script(Calls(("look", {"path": "x"})), Text("ok"))
    agent = Agent(llm, tools=tools, config=AgentConfig(mode="read"))
    events = list(agent.stream("go"))
    assert not any(isinstance(e, ApprovalRequested) for e in events)  # nobody is asked
    (result,) = [m for m in agent.history if isinstance(m, ToolMessage)]
    assert READ_MODE in result.content and ledger.ran == []


def test_yolo_mode_runs_a_marked_call_without_asking(
    llm: LlmClient, llm_server: ScriptedLlmServer, tools: list[Tool], ledger: Ledger
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a"})), Text("ok"))
    agent = Agent(llm, tools=tools, config=AgentConfig(mode="yolo"))
    events = list(agent.stream("go"))
    assert not any(isinstance(e, ApprovalRequested) for e in events)
    assert ledger.ran == ["delete a"]


def test_write_mode_asks_as_before(
    llm: LlmClient, llm_server: ScriptedLlmServer, tools: list[Tool]
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a"})), Text("ok"))
    events = list(Agent(llm, tools=tools).stream("go"))
    assert any(isinstance(e, ApprovalRequested) for e in events)


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ConfigError, match="mode"):
        AgentConfig(mode="admin")  # type: ignore[arg-type]


def test_read_mode_runs_a_tool_declared_read_only(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    from agent_smith import tool

    @tool(read_only=True)
    def peek(path: str) -> str:
        """Read a file."""
        return f"content of {path}"

    llm_server.script(Calls(("peek", {"path": "a"})), Text("ok"))
    agent = Agent(llm, tools=[peek], config=AgentConfig(mode="read"))
    agent.send("go")
    (result,) = [m for m in agent.history if isinstance(m, ToolMessage)]
    assert result.content == "content of a"
