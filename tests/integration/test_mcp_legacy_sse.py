"""The legacy HTTP+SSE transport (MCP 2024-11-05) against the official Python SDK's SSE server.

The SDK server serves its SSE stream at ``/sse`` and takes messages at the
``/messages/?session_id=...`` endpoint its first event names. ``transport="auto"``
must find it too: Streamable HTTP's ``initialize`` POST to ``/sse`` gets a 405,
so the client falls back to the GET stream.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

import pytest

from agent_smith import (
    AgentTimeoutError,
    McpClient,
    Notification,
    ServerConfig,
    UserMessage,
)
from tests.integration.mcp_helpers import Recorder, echo_from_threads
from tests.integration.peers import free_port, serve
from tests.integration.servers import SDK_SERVER

pytestmark = pytest.mark.usefixtures("no_thread_leak")


@pytest.fixture(scope="module")
def sse_url() -> Iterator[str]:
    port = free_port()
    argv = [sys.executable, str(SDK_SERVER), "--sse", "--port", str(port)]
    with serve(argv, ready="Uvicorn running"):
        yield f"http://127.0.0.1:{port}/sse"


def config(url: str, **fields: object) -> ServerConfig:
    return ServerConfig(alias="legacy", url=url, transport="sse", **fields)  # type: ignore[arg-type]


def test_connect_lists_everything_over_the_sse_stream(sse_url: str) -> None:
    with McpClient.connect(config(sse_url)) as client:
        assert {"echo", "add", "slow", "chatty"} <= {t.name for t in client.tools}
        assert [r.uri for r in client.resources] == ["test://greeting"]
        assert [p.name for p in client.prompts] == ["greet"]
        assert client.server_info.name == "agent-smith-test-server"
        readers = [
            t.name for t in threading.enumerate() if t.name.startswith("agent_smith-mcp-sse")
        ]
    assert readers == ["agent_smith-mcp-sse-legacy"]  # and no_thread_leak: joined on close


def test_tools_resources_and_prompts_work(sse_url: str) -> None:
    with McpClient.connect(config(sse_url)) as client:
        assert client.call_tool("echo", {"text": "héllo 🙂"}).content == "héllo 🙂"
        added = client.call_tool("add", {"a": 2, "b": 3})
        assert added.content == "5" and added.structured == {"result": 5}
        assert client.call_tool("fail", {}).is_error
        assert client.read_resource("test://greeting") == "hello from the resource"
        assert client.get_prompt("greet", {"name": "Ann"}) == [
            UserMessage("Please greet Ann warmly.")
        ]


def test_fifty_concurrent_calls_from_ten_threads_get_their_own_results(sse_url: str) -> None:
    with McpClient.connect(config(sse_url)) as client:
        results = echo_from_threads(client, argument="text")
    assert results == {(t, c): f"t{t}-c{c}" for t in range(10) for c in range(5)}


def test_server_requests_and_notifications_come_down_the_stream(sse_url: str) -> None:
    events = Recorder()
    with McpClient.connect(
        config(sse_url),
        hook=events,
        elicitation_handler=lambda p: {"action": "accept", "content": {"answer": "Ann"}},
    ) as client:
        assert client.call_tool("ping_client", {}).content == "client answered ping"
        assert client.call_tool("ask", {"question": "name?"}).content == "accept: Ann"
        assert client.call_tool("chatty", {}, progress_token="p1").content == "chatted"
        events.wait_until(lambda: "notifications/tools/list_changed" in events.methods())
    assert "notifications/message" in events.methods()
    progress = [
        e.params["progress"]
        for e in events.events
        if isinstance(e, Notification) and e.method == "notifications/progress"
    ]
    assert progress == [1, 2]


def test_a_timed_out_call_is_cancelled_on_the_server(sse_url: str) -> None:
    with McpClient.connect(config(sse_url)) as client:
        with pytest.raises(AgentTimeoutError):
            client.call_tool("slow", {"seconds": 30}, timeout=0.5)
        seen = client.call_tool("cancellations", {"wait": 10})
        assert seen.structured is not None and len(seen.structured["result"]) >= 1
        assert client.call_tool("echo", {"text": "still here"}).content == "still here"


def test_auto_falls_back_to_sse_for_an_sse_server(sse_url: str) -> None:
    auto = ServerConfig(alias="legacy", url=sse_url, transport="auto")
    with McpClient.connect(auto) as client:
        assert client.call_tool("echo", {"text": "x"}).content == "x"
        assert any(t.name == "agent_smith-mcp-sse-legacy" for t in threading.enumerate())


def test_auto_stays_on_streamable_http_for_a_streamable_server() -> None:
    port = free_port()
    argv = [sys.executable, str(SDK_SERVER), "--http", "--port", str(port)]
    with serve(argv, ready="Uvicorn running"):
        auto = ServerConfig(alias="modern", url=f"http://127.0.0.1:{port}/mcp", transport="auto")
        with McpClient.connect(auto) as client:
            assert client.call_tool("echo", {"text": "x"}).content == "x"
            names = {t.name for t in threading.enumerate()}
    assert "agent_smith-mcp-sse-modern" not in names
    assert "agent_smith-mcp-listen-modern" in names
