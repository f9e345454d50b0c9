"""adapt_client_tools: names fit the OpenAI pattern, calls reach the original MCP names."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

import pytest

from agent_smith import AgentTimeoutError, McpClient, Runtime
from agent_smith.mcp import adapt_client_tools
from tests.mcp.scripted import ScriptedServer
from tests.support.tools import tool_context

Connect = Callable[..., McpClient]
OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def serving(*names: str) -> tuple[ScriptedServer, list[str]]:
    """A server listing ``names`` whose tools/call records the name it was asked for."""
    called: list[str] = []

    def call(params: dict[str, Any]) -> dict[str, Any]:
        called.append(params["name"])
        return {"content": [{"type": "text", "text": params["name"]}]}

    tools = [{"name": n, "inputSchema": {"type": "object"}} for n in names]
    server = ScriptedServer({"tools/list": lambda p: {"tools": tools}, "tools/call": call})
    return server, called


def test_plain_names_are_kept_as_they_are(scripted: Connect) -> None:
    server, _ = serving("echo", "get-time")
    names = [t.name for t in adapt_client_tools(scripted(server, alias="srv"))]
    assert names == ["mcp_srv__echo", "mcp_srv__get-time", "mcp_srv__read_resource"]


def test_invalid_characters_become_underscores_and_calls_use_the_original_name(
    scripted: Connect, runtime: Runtime
) -> None:
    server, called = serving("files.read", "a/b", "naïve tool")
    tools = {t.name: t for t in adapt_client_tools(scripted(server, alias="srv"))}
    assert set(tools) == {
        "mcp_srv__files_read",
        "mcp_srv__a_b",
        "mcp_srv__na_ve_tool",
        "mcp_srv__read_resource",
    }
    for name in ("mcp_srv__files_read", "mcp_srv__a_b", "mcp_srv__na_ve_tool"):
        tools[name].invoke({}, tool_context(runtime))
    assert called == ["files.read", "a/b", "naïve tool"]


def test_the_alias_part_is_sanitised_too(scripted: Connect) -> None:
    server, _ = serving("echo")
    names = [t.name for t in adapt_client_tools(scripted(server, alias="my.server/v2"))]
    assert names == ["mcp_my_server_v2__echo", "mcp_my_server_v2__read_resource"]


def test_long_names_are_cut_to_64_with_a_stable_hash_and_stay_distinct(
    scripted: Connect, runtime: Runtime
) -> None:
    long_a, long_b = "x" * 80 + "_a", "x" * 80 + "_b"
    server, called = serving(long_a, long_b)
    alias = "a-rather-long-server-alias-" * 3
    first = [t.name for t in adapt_client_tools(scripted(server, alias=alias))]
    again = [t.name for t in adapt_client_tools(scripted(serving(long_a, long_b)[0], alias=alias))]
    assert first == again  # the same server always gives the same names
    assert all(OPENAI_NAME.match(n) for n in first), first
    assert len(set(first)) == 3
    assert all(n.startswith("mcp_") for n in first)
    tools = {t.name: t for t in adapt_client_tools(scripted(server, alias=alias))}
    tools[first[1]].invoke({}, tool_context(runtime))
    assert called == [long_b]


def test_names_that_collide_after_sanitising_warn_and_both_stay_callable(
    scripted: Connect, runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    server, called = serving("a.b", "a_b", "a/b")
    with caplog.at_level(logging.WARNING, logger="agent_smith.mcp"):
        tools = adapt_client_tools(scripted(server, alias="srv"))
    names = [t.name for t in tools]
    assert names[0] == "mcp_srv__a_b"
    assert all(re.fullmatch(r"mcp_srv__a_b_[0-9a-f]{8}", n) for n in names[1:3]), names
    assert len(set(names)) == 4 and all(OPENAI_NAME.match(n) for n in names)
    assert "a_b" in caplog.text and "collide" in caplog.text
    for tool in tools[:3]:
        tool.invoke({}, tool_context(runtime))
    assert called == ["a.b", "a_b", "a/b"]


def test_a_server_tool_named_read_resource_does_not_shadow_the_resource_reader(
    scripted: Connect,
) -> None:
    server, _ = serving("read_resource")
    names = [t.name for t in adapt_client_tools(scripted(server, alias="srv"))]
    assert len(set(names)) == 2 and "mcp_srv__read_resource" in names


def task_server(finish: bool) -> tuple[ScriptedServer, list[str]]:
    """A server whose only tool must run as a task; it ends the task if ``finish``."""
    methods: list[str] = []

    def record(method: str, answer: dict[str, Any]) -> Callable[[dict[str, Any]], dict[str, Any]]:
        return lambda p: methods.append(method) or answer

    running = {"taskId": "t9", "status": "working", "pollInterval": 20}
    tool = {
        "name": "long",
        "inputSchema": {"type": "object"},
        "execution": {"taskSupport": "required"},
    }
    server = ScriptedServer(
        {
            "tools/list": lambda p: {"tools": [tool]},
            "tools/call": record("tools/call", {"task": running}),
            "tasks/get": record(
                "tasks/get", {**running, "status": "completed" if finish else "working"}
            ),
            "tasks/result": record(
                "tasks/result", {"content": [{"type": "text", "text": "long done"}]}
            ),
            "tasks/cancel": record("tasks/cancel", {**running, "status": "cancelled"}),
        }
    )
    return server, methods


def test_a_tool_that_must_run_as_a_task_is_waited_for_within_the_budget(
    scripted: Connect, runtime: Runtime
) -> None:
    server, methods = task_server(finish=True)
    (tool, _) = adapt_client_tools(scripted(server, alias="srv"))
    assert tool.invoke({}, tool_context(runtime)).content == "long done"
    assert methods[0] == "tools/call" and methods[-1] == "tasks/result"
    assert "tasks/cancel" not in methods


def test_a_task_that_outlives_the_budget_is_cancelled(scripted: Connect, runtime: Runtime) -> None:
    server, methods = task_server(finish=False)
    (tool, _) = adapt_client_tools(scripted(server, alias="srv"))
    with pytest.raises(AgentTimeoutError):
        tool.invoke({}, tool_context(runtime, budget=0.3))
    assert methods[-1] == "tasks/cancel"
