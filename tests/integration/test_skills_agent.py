"""Skills on a real Agent against the scripted LLM server (and real MCP servers).

Pins what the server receives: the tool names in registry order (base,
``<skill>__<tool>``, ``mcp_<alias>__<tool>``), the composed system prompt, and
the collision rule (last wins with a warning; a shadowed tool comes back when
the shadowing skill is deactivated).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_smith import Agent, Skill, SkillError, compose_system_prompt, load_skill, tool
from agent_smith.agent.config import AgentConfig
from agent_smith.llm.client import LlmClient
from agent_smith.mcp.config import ServerConfig
from agent_smith.messages import ToolMessage
from agent_smith.runtime import Runtime
from tests.support.llm_server import Calls, ScriptedLlmServer, Text

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "skills"


@pytest.fixture
def runtime(no_thread_leak: None) -> Iterator[Runtime]:
    with Runtime(max_workers=4) as rt:
        yield rt


@pytest.fixture
def llm(llm_server: ScriptedLlmServer, runtime: Runtime) -> LlmClient:
    return LlmClient(llm_server.url, "test", runtime=runtime, max_retries=0)


def tool_names(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools") or []]


def system_text(request: dict[str, Any]) -> str:
    first = request["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


def tool_results(agent: Agent) -> list[tuple[str, str]]:
    return [(m.name, m.content) for m in agent.history if isinstance(m, ToolMessage)]


@tool
def base_lookup(word: str) -> str:
    """Look a word up in the base dictionary."""
    return f"base:{word}"


@tool(name="web_search__query")
def base_query(q: str) -> str:
    """The agent's own tool that happens to have a skill-like name."""
    return f"base:{q}"


def skill_query(q: str) -> str:
    """Search the web."""
    return f"skill:{q}"


def test_example_skills_on_an_agent_send_prefixed_tools_and_the_composed_prompt(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    notes = load_skill(EXAMPLES / "release-notes")
    with load_skill(EXAMPLES / "time-keeper", runtime=runtime) as clock:
        words = Skill(name="Word Tools", system_prompt="Count words.", tools=(skill_query,))
        llm_server.script(
            Calls(("mcp_example__echo", {"text": "tick"})),
            Calls(("word_tools__skill_query", {"q": "cats"})),
            Text("It is now."),
        )
        with Agent(llm, "Base prompt.", [base_lookup], runtime=runtime) as agent:
            for skill in (notes, clock, words):
                agent.activate(skill)
            assert agent.send("What time is it?").content == "It is now."

        expected_prompt = compose_system_prompt("Base prompt.", [notes, clock, words])
        first = llm_server.requests[0]
        assert system_text(first) == expected_prompt
        assert expected_prompt.startswith(
            "Base prompt.\n\n# Skill: release-notes\n# Writing release notes\n"
        )
        context = json.dumps(clock.context_data, ensure_ascii=False, separators=(",", ":"))
        assert (
            "under a minute.\n\n# Skill: time-keeper\nYou keep time for the user."
        ) in expected_prompt
        assert expected_prompt.endswith(
            f"# Skill Context: time-keeper\n{context}\n\n# Skill: Word Tools\nCount words."
        )
        names = tool_names(first)
        assert names == [
            "base_lookup",
            "word_tools__skill_query",
            "mcp_example__echo",
            "mcp_example__now",
            "mcp_example__read_resource",
        ]
        assert [tool_names(r) for r in llm_server.requests] == [names] * 3
        assert tool_results(agent) == [
            ("mcp_example__echo", "tick"),
            ("word_tools__skill_query", "skill:cats"),
        ]


def test_skill_tool_shadows_a_base_tool_until_the_skill_is_deactivated(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    caplog: pytest.LogCaptureFixture,
) -> None:
    web = Skill(name="web-search", system_prompt="Search first.", tools=(skill_query,))
    shadowing = Skill(name="web-search", tools=(tool(name="query")(skill_query),))
    agent = Agent(llm, "Base.", [base_query], runtime=runtime)
    with agent:
        agent.activate(web)
        assert agent.tools == ["web_search__query", "web_search__skill_query"]
        with caplog.at_level(logging.WARNING, logger="agent_smith.skill"):
            agent.activate(shadowing)  # same name: replaces `web`
            names = agent.tools
        assert names == ["web_search__query"]
        assert "'web_search__query'" in caplog.text and "replaces" in caplog.text

        llm_server.script(Calls(("web_search__query", {"q": "x"})), Text("ok"))
        agent.send("search")
        assert tool_results(agent)[-1] == ("web_search__query", "skill:x")
        assert "# Skill: web-search" not in system_text(llm_server.requests[-1])

        agent.deactivate("Web Search")  # any spelling with the same prefix
        assert agent.tools == ["web_search__query"]
        llm_server.script(Calls(("web_search__query", {"q": "y"})), Text("ok"))
        agent.send("search again")
        assert tool_results(agent)[-1] == ("web_search__query", "base:y")
        assert system_text(llm_server.requests[-1]) == "Base."


def test_mcp_tool_wins_over_a_skill_tool_of_the_same_name_and_yields_when_removed(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    def now() -> str:
        """A fake clock."""
        return "fake"

    impostor = Skill(name="mcp_example", tools=(now,))
    with (
        load_skill(EXAMPLES / "time-keeper", runtime=runtime) as clock,
        Agent(llm, runtime=runtime) as agent,
    ):
        agent.activate(impostor)
        assert agent.tools == ["mcp_example__now"]
        agent.activate(clock)
        assert agent.tools.count("mcp_example__now") == 1
        llm_server.script(Calls(("mcp_example__now", {})), Text("ok"))
        agent.send("time?")
        assert tool_results(agent)[-1][1] != "fake"  # the real server answered

        agent.deactivate("time-keeper")
        assert agent.tools == ["mcp_example__now"]
        llm_server.script(Calls(("mcp_example__now", {})), Text("ok"))
        agent.send("time?")
        assert tool_results(agent)[-1] == ("mcp_example__now", "fake")


def test_activation_refuses_a_context_over_the_limit_without_changing_the_agent(
    llm: LlmClient, runtime: Runtime
) -> None:
    config = AgentConfig(skill_context_max_bytes=16)
    fits = Skill(name="fits", context_data={"k": "12345678"})  # exactly 16 bytes
    too_big = Skill(name="big", system_prompt="p", tools=(skill_query,), context_data="x" * 15)
    with Agent(llm, "Base.", config=config, runtime=runtime) as agent:
        agent.activate(fits)
        before = (agent.tools, agent.effective_system_prompt())
        with pytest.raises(SkillError) as info:
            agent.activate(too_big)
        assert info.value.skill_name == "big"
        assert "17 bytes" in str(info.value)
        assert (agent.tools, agent.effective_system_prompt()) == before
        assert [s.name for s in agent.skills] == ["fits"]


def test_activation_refuses_a_name_that_cannot_be_normalised(
    llm: LlmClient, runtime: Runtime
) -> None:
    with Agent(llm, runtime=runtime) as agent:
        with pytest.raises(SkillError) as info:
            agent.activate(Skill(name="c++", tools=(skill_query,)))
        assert info.value.skill_name == "c++"
        assert agent.tools == [] and agent.skills == []


def test_the_active_skills_tools_are_named_their_mcp_servers_too_not_the_agents_own(
    llm: LlmClient, runtime: Runtime
) -> None:
    def count(text: str) -> str:
        """Count words."""
        return str(len(text.split()))

    with (
        load_skill(EXAMPLES / "time-keeper", runtime=runtime) as clock,
        Agent(llm, runtime=runtime) as agent,
    ):
        server = (sys.executable, str(ROOT / "examples" / "mcp_server_example.py"))
        agent.connect_mcp(ServerConfig(alias="own", command=server))
        assert agent._tools.skill_tool_names() == frozenset()
        agent.activate(clock)
        agent.activate(Skill(name="words", tools=(count,)))
        expected = {"words__count", *(t for t in agent.tools if t.startswith("mcp_example__"))}
        assert "mcp_example__now" in expected and "mcp_own__now" in agent.tools
        assert agent._tools.skill_tool_names() == expected
        agent.deactivate("time-keeper")
        assert agent._tools.skill_tool_names() == {"words__count"}
