"""Client features on a scripted server: progress, output schemas, icons, completion, logs."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from agent_smith import McpClient
from agent_smith.errors import McpError
from tests.mcp.scripted import ScriptedServer

Connect = Callable[..., McpClient]

TOOL = {
    "name": "weather",
    "title": "Weather",
    "icons": [{"src": "https://example.com/sun.png", "mimeType": "image/png", "sizes": ["48x48"]}],
    "inputSchema": {"type": "object"},
    "outputSchema": {
        "type": "object",
        "properties": {"celsius": {"type": "number"}},
        "required": ["celsius"],
    },
    "annotations": {"readOnlyHint": True},
}


def weather_server(structured: Any) -> ScriptedServer:
    def call(params: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = {"content": [{"type": "text", "text": "sunny"}]}
        if structured is not None:
            result["structuredContent"] = structured
        return result

    return ScriptedServer({"tools/list": lambda p: {"tools": [TOOL]}, "tools/call": call})


def test_structured_results_are_checked_against_the_output_schema(scripted: Connect) -> None:
    ok = scripted(weather_server({"celsius": 21.5}))
    assert ok.call_tool("weather", {}).structured == {"celsius": 21.5}
    for wrong in ({"celsius": "warm"}, None):
        client = scripted(weather_server(wrong))
        with pytest.raises(McpError, match="outputSchema"):
            client.call_tool("weather", {})


def test_tool_info_surfaces_title_icons_output_schema_and_annotations(scripted: Connect) -> None:
    client = scripted(weather_server({"celsius": 1}))
    info = client.tool_info("weather")
    assert info is not None and info.title == "Weather"
    assert info.icons[0]["src"] == "https://example.com/sun.png"
    assert info.output_schema == TOOL["outputSchema"] and info.annotations["readOnlyHint"]
    assert client.tool_info("missing") is None


def test_progress_reaches_the_calls_callback(scripted: Connect) -> None:
    heard: list[tuple[float, float | None, str | None]] = []
    done = threading.Event()
    server = ScriptedServer()

    def call(params: dict[str, Any]) -> dict[str, Any]:
        token = params["_meta"]["progressToken"]
        for step in (1, 2):
            server.push(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": step, "total": 2},
                }
            )
        server.push(  # another call's progress: not ours
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": "other", "progress": 9},
            }
        )
        return {"content": []}

    server.handlers["tools/call"] = call

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append((progress, total, message))
        if len(heard) == 2:
            done.set()

    client = scripted(server)
    client.call_tool("echo", {}, on_progress=on_progress)
    assert done.wait(5)
    assert heard == [(1.0, 2.0, None), (2.0, 2.0, None)]


def test_completion_asks_the_server(scripted: Connect) -> None:
    asked: list[dict[str, Any]] = []
    server = ScriptedServer(
        {
            "completion/complete": lambda p: (
                asked.append(p) or {"completion": {"values": ["Ann", "Anna"], "hasMore": False}}
            )
        }
    )
    client = scripted(server)
    ref = {"type": "ref/prompt", "name": "greet"}
    assert client.complete(ref, "name", "An", context={"lang": "en"}) == ["Ann", "Anna"]
    assert asked == [
        {
            "ref": ref,
            "argument": {"name": "name", "value": "An"},
            "context": {"arguments": {"lang": "en"}},
        }
    ]


def test_the_log_level_is_set_per_session_or_sent_in_every_requests_meta(
    scripted: Connect,
) -> None:
    old = ScriptedServer(
        {"logging/setLevel": lambda p: {}}, capabilities={"tools": {}, "logging": {}}
    )
    scripted(old, log_level="warning", protocol="legacy")
    (set_level,) = [f for f in old.sent if f.get("method") == "logging/setLevel"]
    assert set_level["params"] == {"level": "warning"}

    modern = ScriptedServer(
        {
            "server/discover": lambda p: {
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}, "logging": {}},
                "resultType": "complete",
            }
        }
    )
    scripted(modern, log_level="info")
    assert all(
        f["params"]["_meta"]["io.modelcontextprotocol/logLevel"] == "info"
        for f in modern.sent
        if "id" in f and f.get("method") != "server/discover"
    )
    assert "logging/setLevel" not in modern.methods()
