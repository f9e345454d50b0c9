"""The legacy HTTP+SSE transport (MCP 2024-11-05) against the official Python SDK's SSE server.

The SDK server serves its SSE stream at ``/sse`` and takes messages at the
``/messages/?session_id=...`` endpoint its first event names. What every HTTP
transport must do (tools, resources, prompts, concurrency, server requests,
notifications, cancellation) runs against it in test_mcp_http.py; here: its
reader thread, and ``transport="auto"``, which must find it too (Streamable
HTTP's ``initialize`` POST to ``/sse`` gets a 405, so the client falls back
to the GET stream).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

import pytest

from agent_smith import (
    McpClient,
    ServerConfig,
)
from tests.integration.peers import serve
from tests.integration.servers import SDK_SERVER
from tests.support.ports import free_port

pytestmark = pytest.mark.usefixtures("no_thread_leak")


@pytest.fixture(scope="module")
def sse_url() -> Iterator[str]:
    port = free_port()
    argv = [sys.executable, str(SDK_SERVER), "--sse", "--port", str(port)]
    with serve(argv, ready="Uvicorn running"):
        yield f"http://127.0.0.1:{port}/sse"


def config(url: str, **fields: object) -> ServerConfig:
    return ServerConfig(alias="legacy", url=url, transport="sse", **fields)  # type: ignore[arg-type]


def test_one_named_reader_thread_carries_the_stream_and_is_joined(sse_url: str) -> None:
    with McpClient.connect(config(sse_url)) as client:
        assert client.call_tool("echo", {"text": "x"}).content == "x"
        readers = [
            t.name for t in threading.enumerate() if t.name.startswith("agent_smith-mcp-sse")
        ]
    assert readers == ["agent_smith-mcp-sse-legacy"]  # and no_thread_leak: joined on close


def test_auto_falls_back_to_sse_for_an_sse_server(sse_url: str) -> None:
    auto = ServerConfig(alias="legacy", url=sse_url, transport="auto")
    with McpClient.connect(auto) as client:
        assert client.call_tool("echo", {"text": "x"}).content == "x"
        assert any(t.name == "agent_smith-mcp-sse-legacy" for t in threading.enumerate())


def test_auto_stays_on_streamable_http_for_a_streamable_server() -> None:
    port = free_port()
    argv = [sys.executable, str(SDK_SERVER), "--http", "--port", str(port)]
    with serve(argv, ready="Uvicorn running"):
        auto = ServerConfig(
            alias="modern",
            url=f"http://127.0.0.1:{port}/mcp",
            transport="auto",
            protocol="legacy",  # the GET listening stream is the handshake generation's
        )
        with McpClient.connect(auto) as client:
            assert client.call_tool("echo", {"text": "x"}).content == "x"
            names = {t.name for t in threading.enumerate()}
    assert "agent_smith-mcp-sse-modern" not in names
    assert "agent_smith-mcp-listen-modern" in names
