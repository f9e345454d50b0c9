"""Content on spans: none by default; with trace_content=True the conventions' JSON, redacted."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from agent_smith import Agent, LlmClient, Runtime, ServerConfig, tool
from tests.support.fake_mcp_http import FakeMcpServer
from tests.support.llm_server import Calls, ScriptedLlmServer, Text
from tests.tracing.conftest import Spans

SECRETS = (
    "sk-CLIENT-KEY",  # the LLM client's API key
    "mcp-BEARER-TOKEN",  # the MCP server's bearer token
    "hunter2-PASSWORD",  # a password field in tool arguments
    "sk-ARG-KEY",  # an api_key field in an MCP tool's arguments
    "tok-ACCESS-TOKEN",  # an access_token field in a tool's result
    "sk-PROMPT-KEY",  # an api_key field in the user's (JSON) message
)
CONTENT_NAMES = (
    "gen_ai.system_instructions",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
)


@pytest.fixture(autouse=True)
def _no_leaks(no_thread_leak: None) -> None:
    """Every test here leaves no agent_smith thread behind."""


@tool
def lookup(user: str, password: str) -> dict[str, str]:
    """Log a user in."""
    return {"user": user, "access_token": "tok-ACCESS-TOKEN"}


def _turn(content: bool) -> Iterator[str]:
    """Run a turn that handles every kind of secret; yield the final answer."""
    with (
        Runtime(trace_content=content) as runtime,
        ScriptedLlmServer() as llm_server,
        FakeMcpServer() as mcp,
    ):
        llm_server.script(
            Calls(
                ("lookup", {"user": "bob", "password": "hunter2-PASSWORD"}),
                ("mcp_web__echo", {"text": "hi there", "api_key": "sk-ARG-KEY"}),
            ),
            Text("Done."),
        )
        llm = LlmClient(llm_server.url, "m", api_key="sk-CLIENT-KEY", runtime=runtime)
        with Agent(llm, "Be brief.", [lookup], name="secretive") as agent:
            agent.connect_mcp(
                ServerConfig(alias="web", url=mcp.url, bearer_token="mcp-BEARER-TOKEN")
            )
            question = json.dumps({"question": "log bob in", "api_key": "sk-PROMPT-KEY"})
            yield agent.send(question).content
        # The secrets did travel where they had to: the test would prove nothing otherwise.
        assert llm_server.headers[0].get("Authorization") == "Bearer sk-CLIENT-KEY"
        assert any(s.headers.get("authorization") == "Bearer mcp-BEARER-TOKEN" for s in mcp.seen())


@pytest.mark.parametrize("content", [False, True], ids=["default", "trace_content"])
def test_no_secret_appears_in_any_exported_span(spans: Spans, content: bool) -> None:
    assert list(_turn(content)) == ["Done."]

    text = spans.text()
    for secret in SECRETS:
        assert secret not in text, secret
    assert len(spans.ours()) >= 6  # invoke_agent, 2 chat, 2 execute_tool, MCP tools/call...
    if content:
        assert "<redacted>" in text and "bob" in text  # recorded, after redaction
    else:
        assert "bob" not in text and "hi there" not in text
        for span in spans.all():
            assert set(span.attributes or {}).isdisjoint(CONTENT_NAMES), span.name


def _json(span: Any, name: str) -> Any:
    return json.loads((span.attributes or {})[name])


def test_content_follows_the_conventions_message_shapes(spans: Spans) -> None:
    with Runtime(trace_content=True) as runtime, ScriptedLlmServer() as llm_server:
        llm_server.script(Calls(("lookup", {"user": "bob", "password": "pw"})), Text("Hi bob."))
        llm = LlmClient(llm_server.url, "m", runtime=runtime)
        with Agent(llm, "Be brief.", [lookup], name="shapes") as agent:
            agent.send("Log bob in.")

    turn = spans.one("invoke_agent shapes")
    assert _json(turn, "gen_ai.system_instructions") == [{"type": "text", "content": "Be brief."}]
    assert _json(turn, "gen_ai.input.messages") == [
        {"role": "user", "parts": [{"type": "text", "content": "Log bob in."}]}
    ]
    assert _json(turn, "gen_ai.output.messages") == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "Hi bob."}],
            "finish_reason": "stop",
        }
    ]
    first, second = sorted(spans.named("chat m"), key=lambda s: s.start_time or 0)
    assert _json(first, "gen_ai.system_instructions") == [{"type": "text", "content": "Be brief."}]
    call = {
        "type": "tool_call",
        "id": "call_0",
        "name": "lookup",
        "arguments": {"user": "bob", "password": "<redacted>"},
    }
    assert _json(first, "gen_ai.output.messages") == [
        {"role": "assistant", "parts": [call], "finish_reason": "tool_calls"}
    ]
    result = json.dumps({"user": "bob", "access_token": "<redacted>"})
    assert _json(second, "gen_ai.input.messages") == [
        {"role": "user", "parts": [{"type": "text", "content": "Log bob in."}]},
        {"role": "assistant", "parts": [call]},
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "call_0", "response": result}],
        },
    ]
    executed = spans.one("execute_tool lookup")
    assert _json(executed, "gen_ai.tool.call.arguments") == {
        "user": "bob",
        "password": "<redacted>",
    }
    assert _json(executed, "gen_ai.tool.call.result") == {
        "user": "bob",
        "access_token": "<redacted>",
    }
