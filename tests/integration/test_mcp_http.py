"""The MCP client over HTTP against the official Python SDK's server.

Streamable HTTP in both response modes: SSE (answers, server requests and
notifications stream back on the POST) and JSON (one JSON body per POST;
notifications not tied to a request, like ``list_changed``, travel on the GET
stream, and the server drops request-scoped ones); and the legacy 2024-11-05
HTTP+SSE transport (``legacy``: everything comes down the one GET stream).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from agent_smith import (
    AgentTimeoutError,
    McpClient,
    McpError,
    ServerConfig,
    UserMessage,
)
from tests.integration.mcp_helpers import Recorder, echo_from_threads
from tests.integration.peers import serve
from tests.integration.servers import SDK_SERVER
from tests.support.ports import free_port

pytestmark = pytest.mark.usefixtures("no_thread_leak")


@pytest.fixture(scope="module", params=["sse", "json", "legacy"])
def sdk_url(request: pytest.FixtureRequest) -> Iterator[str]:
    port = free_port()
    mode = {"sse": ["--http"], "json": ["--http", "--json"], "legacy": ["--sse"]}[request.param]
    argv = [sys.executable, str(SDK_SERVER), *mode, "--port", str(port)]
    path = "/sse" if request.param == "legacy" else "/mcp"
    with serve(argv, ready="Uvicorn running"):
        yield f"http://127.0.0.1:{port}{path}#{request.param}"


def config(url: str, **fields: object) -> ServerConfig:
    url, _, mode = url.partition("#")
    transport = "sse" if mode == "legacy" else "streamable-http"
    fields.setdefault("protocol", "legacy")  # the 2026-07-28 generation: test_mcp_modern.py
    return ServerConfig(alias="web", url=url, transport=transport, **fields)  # type: ignore[arg-type]


def test_connect_lists_tools_resources_and_prompts(sdk_url: str) -> None:
    with McpClient.connect(config(sdk_url)) as client:
        assert {"echo", "add", "slow", "chatty"} <= {t.name for t in client.tools}
        assert [r.uri for r in client.resources] == ["test://greeting"]
        assert [p.name for p in client.prompts] == ["greet"]
        assert client.server_info.name == "agent-smith-test-server"
        assert client.protocol_version == "2025-06-18"


def test_tools_resource_and_prompt_work(sdk_url: str) -> None:
    with McpClient.connect(config(sdk_url)) as client:
        assert client.call_tool("echo", {"text": "héllo 🙂"}).content == "héllo 🙂"
        added = client.call_tool("add", {"a": 2, "b": 3})
        assert added.content == "5" and added.structured == {"result": 5}
        assert client.call_tool("fail", {}).is_error
        assert client.read_resource("test://greeting") == "hello from the resource"
        prompt = client.get_prompt("greet", {"name": "Ann"})
        assert prompt == [UserMessage("Please greet Ann warmly.")]


def test_fifty_concurrent_calls_from_ten_threads_get_their_own_results(sdk_url: str) -> None:
    with McpClient.connect(config(sdk_url)) as client:
        results = echo_from_threads(client, argument="text")
    assert results == {(t, c): f"t{t}-c{c}" for t in range(10) for c in range(5)}


def test_server_requests_are_answered(sdk_url: str) -> None:
    with McpClient.connect(
        config(sdk_url),
        elicitation_handler=lambda p: {"action": "accept", "content": {"answer": "Ann"}},
    ) as client:
        assert client.call_tool("ping_client", {}).content == "client answered ping"
        if sdk_url.endswith("#json"):
            # The SDK server in JSON mode has no back-channel for elicitation or roots
            # inside a request; it says so in an error answer (its limit, not ours).
            with pytest.raises(McpError, match="back-channel"):
                client.call_tool("ask", {"question": "name?"})
            return
        assert client.call_tool("ask", {"question": "name?"}).content == "accept: Ann"
        assert "not found" in client.call_tool("roots", {}).content


def test_logging_progress_and_list_changed_reach_the_hook(sdk_url: str) -> None:
    events = Recorder()
    with McpClient.connect(config(sdk_url), hook=events) as client:
        assert client.call_tool("chatty", {}, progress_token="p1").content == "chatted"
        # JSON mode: list_changed comes on the GET stream.
        events.wait_until(lambda: "notifications/tools/list_changed" in events.methods())
        if sdk_url.endswith("#json"):
            return  # log and progress belong to the request, which has no stream here
        assert "notifications/message" in events.methods()
        assert events.progress() == [1, 2]


def test_timeout_sends_cancelled_and_the_server_sees_it(sdk_url: str) -> None:
    with McpClient.connect(config(sdk_url)) as client:
        with pytest.raises(AgentTimeoutError) as info:
            client.call_tool("slow", {"seconds": 30}, timeout=0.5)
        assert info.value.budget == 0.5
        seen = client.call_tool("cancellations", {"wait": 10})
        assert seen.structured is not None and len(seen.structured["result"]) >= 1
        assert client.call_tool("echo", {"text": "still here"}).content == "still here"
