"""MCP client spans against real servers: the official SDK's over stdio, a fake one over HTTP."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from agent_smith import McpClient, McpError, Runtime, ServerConfig
from tests.support.fake_mcp_http import FakeMcpServer
from tests.tracing.conftest import Spans

SDK_SERVER = Path(__file__).resolve().parents[1] / "integration" / "servers" / "sdk_server.py"


@pytest.fixture(autouse=True)
def _no_leaks(no_thread_leak: None) -> None:
    """Every test here leaves no agent_smith thread behind."""


def test_stdio_requests_are_client_spans_with_the_mcp_attributes(spans: Spans) -> None:
    """Against the official SDK's server (starting it is most of this test's few seconds)."""
    config = ServerConfig(alias="sdk", command=(sys.executable, str(SDK_SERVER)))
    with McpClient.connect(config) as client:
        # The server accepts requests whose params carry the trace context in _meta.
        assert client.call_tool("echo", {"text": "hi"}).content == "hi"
        assert client.call_tool("fail", {"message": "no"}).is_error
        client.get_prompt("greet", {"name": "Ann"})
        client.read_resource("test://greeting")
        version = client.protocol_version

    echo = spans.one("tools/call echo")
    assert echo.kind is SpanKind.CLIENT
    attributes = dict(echo.attributes or {})
    assert attributes.pop("jsonrpc.request.id").isdigit()
    assert attributes == {
        "mcp.method.name": "tools/call",
        "agent_smith.mcp.server": "sdk",
        "agent_smith.mcp.transport": "stdio",
        "network.transport": "pipe",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "echo",
        "mcp.protocol.version": version,
    }
    assert echo.status.status_code is StatusCode.UNSET
    failed = spans.one("tools/call fail")
    assert failed.status.status_code is StatusCode.ERROR
    assert (failed.attributes or {})["error.type"] == "tool_error"
    prompt = spans.one("prompts/get greet")
    assert (prompt.attributes or {})["gen_ai.prompt.name"] == "greet"
    resource = spans.one("resources/read")
    assert (resource.attributes or {})["mcp.resource.uri"] == "test://greeting"
    assert spans.named("tools/list")  # listed while connecting


def test_a_json_rpc_error_gives_its_code(spans: Spans, runtime: Runtime) -> None:
    with FakeMcpServer() as server:
        url = server.url
        client = McpClient.connect(ServerConfig(alias="web", url=url), runtime=runtime)
        with client, pytest.raises(McpError):
            client.call_tool("no_such_tool", {})

    span = spans.one("tools/call no_such_tool")
    attributes = span.attributes or {}
    assert attributes["error.type"] == "-32602"
    assert attributes["rpc.response.status_code"] == "-32602"
    assert attributes["network.protocol.name"] == "http"
    assert attributes["agent_smith.mcp.transport"] == "streamable-http"
    assert attributes["server.address"] == "127.0.0.1"
    assert attributes["server.port"] == int(url.split(":")[2].split("/")[0])
    assert span.status.status_code is StatusCode.ERROR
    assert "unknown tool no_such_tool" in (span.status.description or "")
