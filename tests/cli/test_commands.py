"""The REPL's slash commands on a real agent: /help, /clear, /history, /tools, /stats."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest

from agent_smith import (
    Agent,
    AssistantMessage,
    LlmClient,
    MetricsCollector,
    Runtime,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_smith.cli.commands import COMMANDS, is_command, run_command
from agent_smith.cli.demo_tools import CalculatorTool
from tests.support.llm_server import Calls, ScriptedLlmServer, Text

pytestmark = pytest.mark.usefixtures("no_thread_leak")


@pytest.fixture
def agent() -> Iterator[Agent]:
    # No request is made: the commands only look at and change the agent's state.
    with Agent(LlmClient("http://127.0.0.1:9"), "sys", [CalculatorTool()]) as agent:
        for message in (
            UserMessage("What is 2+3?"),
            AssistantMessage("", tool_calls=(ToolCall("c1", "calculator", {"expression": "2+3"}),)),
            ToolMessage("c1", "calculator", "5"),
            AssistantMessage("It is 5.\nIndeed."),
        ):
            agent.memory.append(message)
        yield agent


def _run(text: str, agent: Agent, *, width: int = 160) -> str:
    out = io.StringIO()
    run_command(text, agent, out, width=width)
    return out.getvalue()


def test_a_command_is_one_slash_word() -> None:
    assert all(is_command(name) for name in COMMANDS)
    assert is_command("/Clear")
    assert not is_command("/etc/hosts")
    assert not is_command("/clear the history please")
    assert not is_command("what is /clear?")


def test_history_shows_one_line_per_message(agent: Agent) -> None:
    assert _run("/history", agent).splitlines() == [
        "user: What is 2+3?",
        'assistant: [calls calculator {"expression": "2+3"}]',
        "tool calculator: 5",
        "assistant: It is 5. Indeed.",
        "(4 message(s), 29 characters; /clear forgets them)",
    ]
    assert _run("/history", agent, width=12).splitlines()[0] == "user: What …"


def test_clear_forgets_the_conversation_but_keeps_the_tools(agent: Agent) -> None:
    assert _run("/clear", agent) == "conversation cleared (4 message(s) forgotten)\n"
    assert agent.history == []
    assert _run("/history", agent) == "(no conversation yet)\n"
    assert _run("/tools", agent) == "tools the model can call: calculator\n"


def test_stats_counts_this_sessions_turns_tokens_tool_calls_and_time(
    llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    metrics = MetricsCollector().install()
    try:
        llm_server.script(
            Calls(("calculator", {"expression": "2+3"}), usage=(100, 7)), Text("5", usage=(120, 3))
        )
        llm = LlmClient(llm_server.url, "m", runtime=runtime)
        with Agent(llm, "sys", [CalculatorTool()]) as agent:
            agent.send("What is 2+3?")
            out = io.StringIO()
            run_command("/stats", agent, out, width=160, metrics=metrics)
    finally:
        metrics.uninstall()
    lines = out.getvalue().splitlines()
    assert lines[:3] == [
        "turns: 1; model requests: 2 (0 retried, 0 failed)",
        "tokens: 220 in (0 cached), 10 out",
        "tool calls: 1",
    ]
    assert lines[3].startswith("time: ") and lines[3].endswith(" s in tools")


def test_stats_without_a_collector_says_so(agent: Agent) -> None:
    assert _run("/stats", agent) == "(no metrics collected)\n"
