"""MCP 2026-07-28 against the official Python SDK 2.x server, over stdio and Streamable HTTP.

The SDK server speaks both generations; ``protocol="auto"`` (the default)
finds the new one through ``server/discover``. The handshake generation is
covered by ``test_mcp_stdio.py`` and ``test_mcp_http.py``.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator

import pytest

from agent_smith import McpClient, ServerConfig
from tests.integration.mcp_helpers import Recorder
from tests.integration.peers import serve
from tests.integration.servers import SDK_SERVER, sdk_stdio
from tests.support.ports import free_port

pytestmark = pytest.mark.usefixtures("no_thread_leak")

MODERN = "2026-07-28"


@pytest.fixture(scope="module", params=["stdio", "http"])
def modern(request: pytest.FixtureRequest) -> Iterator[ServerConfig]:
    """A config reaching the SDK server (auto-negotiated), over stdio or Streamable HTTP."""
    if request.param == "stdio":
        yield sdk_stdio(alias="modern", protocol="auto")
        return
    port = free_port()
    argv = [sys.executable, str(SDK_SERVER), "--http", "--port", str(port)]
    with serve(argv, ready="Uvicorn running"):
        yield ServerConfig(alias="modern", url=f"http://127.0.0.1:{port}/mcp")


def test_auto_negotiates_2026_and_everything_works(modern: ServerConfig) -> None:
    with McpClient.connect(modern) as client:
        assert client.protocol_version == MODERN
        assert client.server_info.name == "agent-smith-test-server"
        assert {"echo", "add", "ask_both"} <= {t.name for t in client.tools}
        assert [r.uri for r in client.resources] == ["test://greeting"]
        assert client.call_tool("echo", {"text": "héllo 🙂"}).content == "héllo 🙂"
        added = client.call_tool("add", {"a": 2, "b": 3})
        assert added.content == "5" and added.structured == {"result": 5}
        assert client.call_tool("fail", {"message": "no"}).is_error
        assert client.read_resource("test://greeting") == "hello from the resource"
        assert "Ann" in client.get_prompt("greet", {"name": "Ann"})[0].content


def test_input_required_is_answered_by_the_handlers_in_one_round(modern: ServerConfig) -> None:
    asked: list[str] = []
    with McpClient.connect(
        modern,
        elicitation_handler=lambda p: (
            asked.append(p["message"]) or {"action": "accept", "content": {"answer": "Ann"}}
        ),
        roots_handler=lambda p: {"roots": [{"uri": "file:///work", "name": "work"}]},
    ) as client:
        assert client.protocol_version == MODERN
        result = client.call_tool("ask_both", {"question": "name?"})
    assert result.content == "Ann in file:///work" and asked == ["name?"]


def test_progress_reaches_the_hook(modern: ServerConfig) -> None:
    events = Recorder()
    with McpClient.connect(modern, hook=events) as client:
        client.call_tool("chatty", {}, progress_token="p1")
        events.wait_until(lambda: len(events.progress()) == 2)
    assert events.progress() == [1, 2]


def test_the_legacy_pin_asks_the_same_questions_as_server_requests(modern: ServerConfig) -> None:
    with McpClient.connect(
        dataclasses.replace(modern, protocol="legacy"),
        elicitation_handler=lambda p: {"action": "accept", "content": {"answer": "Bo"}},
        roots_handler=lambda p: {"roots": [{"uri": "file:///b"}]},
    ) as client:
        assert client.protocol_version == "2025-06-18"
        assert client.call_tool("ask_both", {"question": "q"}).content == "Bo in file:///b"
