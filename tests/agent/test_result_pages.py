"""Large tool results: the model gets the head and a handle, read_tool_result the rest."""

from __future__ import annotations

import json

import pytest

from agent_smith import Agent, AgentConfig, ToolMessage, tool
from agent_smith.agent.result_pages import READ_TOOL_RESULT, ResultPages
from agent_smith.errors import ToolError
from agent_smith.llm.client import LlmClient
from tests.support.llm_server import Calls, ScriptedLlmServer, Text

BIG = "".join(f"line {n:04d}\n" for n in range(2000))  # 20,000 characters


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return BIG


def test_a_long_result_is_paged_and_read_back_whole(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    llm_server.script(
        Calls(("read_file", {"path": "a"})),
        Calls((READ_TOOL_RESULT, {"handle": "result-1", "offset": 1000, "length": 19_000})),
        Text("done"),
    )
    agent = Agent(llm, tools=[read_file], config=AgentConfig(tool_result_page_chars=1000))
    agent.send("read it")
    first, second = [m for m in agent.history if isinstance(m, ToolMessage)]
    assert first.content.startswith(BIG[:1000])
    assert 'read_tool_result(handle="result-1", offset=1000' in first.content
    assert "of 20000 characters" in first.content
    assert second.content.startswith(BIG[1000:])
    assert "end of the result" in second.content
    tools = [t["function"]["name"] for t in llm_server.requests[0]["tools"]]
    assert tools == ["read_file", READ_TOOL_RESULT]


def test_a_result_cut_to_the_byte_cap_is_paged_from_the_whole_text(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    llm_server.script(Calls(("read_file", {"path": "a"})), Text("done"))
    config = AgentConfig(tool_result_page_chars=50_000, tool_result_max_bytes=5000)
    agent = Agent(llm, tools=[read_file], config=config)
    agent.send("read it")
    (result,) = [m for m in agent.history if isinstance(m, ToolMessage)]
    assert result.content.startswith(BIG[:5000]) and "first 5000 of 20000" in result.content
    assert agent._result_pages is not None
    assert agent._result_pages.read("result-1", 19_990, 100).startswith(BIG[19_990:])


def test_short_results_and_unconfigured_agents_are_untouched(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    llm_server.script(Calls(("read_file", {"path": "a"})), Text("done"))
    agent = Agent(llm, tools=[read_file])
    agent.send("read it")
    assert [t["function"]["name"] for t in llm_server.requests[0]["tools"]] == ["read_file"]
    pages = ResultPages(100)
    message = ToolMessage("c", "t", "short")
    assert pages.page(message, "short") is message


def test_reading_an_unknown_handle_or_a_bad_range_is_an_error() -> None:
    pages = ResultPages(10, max_chars=30)
    pages.page(ToolMessage("a", "t", "x"), "a" * 20)
    pages.page(ToolMessage("b", "t", "x"), "b" * 20)  # over max_chars: the first goes
    with pytest.raises(ToolError):
        pages.read("result-1")
    with pytest.raises(ToolError):
        pages.read("result-2", -1, 5)
    assert pages.read("result-2", 5, 5).startswith("bbbbb\n")
    result = pages.tool().invoke({"handle": "zzz"}, None)  # type: ignore[arg-type]
    assert result.is_error and "zzz" in json.dumps(result.content)


def test_a_result_cut_to_fit_the_window_names_its_handle(
    llm: LlmClient, llm_server: ScriptedLlmServer
) -> None:
    llm_server.script(Calls(("read_file", {"path": "a"})), Text("done"))
    config = AgentConfig(tool_result_page_chars=50_000, context_window=2000)
    agent = Agent(llm, tools=[read_file], config=config)
    agent.send("read it")
    (result,) = [m for m in agent.history if isinstance(m, ToolMessage)]
    assert len(result.content) < 8000 and 'handle="result-1"' in result.content
    assert agent._result_pages is not None
    assert agent._result_pages.read("result-1", 0, 20_000).startswith(BIG)
