"""Interop with the npm reference server @modelcontextprotocol/server-everything.

Every test runs over both transports. Over stdio the client spawns the
server; over Streamable HTTP the server runs in its ``streamableHttp`` mode
on a free port (``PORT``): it answers with SSE streams, sends server requests
inside them and keeps a GET stream for its own notifications.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from agent_smith import McpClient, McpError, McpEvent, Notification, ServerConfig, UserMessage
from tests.integration.mcp_helpers import echo_from_threads
from tests.integration.peers import node_env, require_npm_bin, serve
from tests.support.ports import free_port

pytestmark = pytest.mark.usefixtures("no_thread_leak")

#: Makes the config of a client (named by its alias) of the running server.
Configure = Callable[[str], ServerConfig]


@pytest.fixture(scope="module", params=["stdio", "http"])
def everything(request: pytest.FixtureRequest) -> Iterator[Configure]:
    binary = require_npm_bin("mcp-server-everything")
    if request.param == "stdio":
        yield lambda alias: ServerConfig(alias=alias, command=(str(binary), "stdio"))
        return
    require_npm_bin("node")
    port = free_port()
    env = node_env()
    env["PORT"] = str(port)
    url = f"http://127.0.0.1:{port}/mcp"
    with serve([str(binary), "streamableHttp"], ready="listening on port", env=env):
        yield lambda alias: ServerConfig(alias=alias, url=url, request_timeout=20.0)


@pytest.fixture(scope="module")
def plain(everything: Configure) -> Iterator[McpClient]:
    """A client with no handlers for server requests (the safe defaults answer)."""
    with McpClient.connect(everything("everything")) as client:
        yield client


def test_lists_tools_resources_and_prompts(plain: McpClient) -> None:
    assert plain.server_info.name.startswith("mcp-servers/everything")
    assert {"echo", "get-sum", "get-tiny-image"} <= {t.name for t in plain.tools}
    assert plain.resources and all(r.uri for r in plain.resources)
    assert {"simple-prompt", "args-prompt"} <= {p.name for p in plain.prompts}


def test_calls_its_tools(plain: McpClient) -> None:
    assert plain.call_tool("echo", {"message": "héllo 🙂"}).content == "Echo: héllo 🙂"
    assert "3" in plain.call_tool("get-sum", {"a": 1, "b": 2}).content
    assert "[image: image/png," in plain.call_tool("get-tiny-image", {}).content
    structured = plain.call_tool("get-structured-content", {"location": "Chicago"})
    assert structured.structured is not None and "temperature" in structured.structured


def test_reads_a_resource_and_gets_prompts(plain: McpClient) -> None:
    assert plain.read_resource(plain.resources[0].uri).strip()
    assert plain.get_prompt("simple-prompt") == [
        UserMessage("This is a simple prompt without arguments.")
    ]
    assert "Paris" in plain.get_prompt("args-prompt", {"city": "Paris"})[0].content
    with pytest.raises(McpError, match="resource content"):
        plain.get_prompt("resource-prompt", {"resourceType": "Text", "resourceId": "1"})


def test_concurrent_calls_from_many_threads_get_their_own_results(plain: McpClient) -> None:
    results = echo_from_threads(plain, argument="message")
    assert results == {(t, c): f"Echo: t{t}-c{c}" for t in range(10) for c in range(5)}


def test_progress_notifications_reach_the_hook_during_a_long_call(everything: Configure) -> None:
    progress: list[dict[str, Any]] = []
    done = threading.Event()

    def hook(event: McpEvent) -> None:
        if isinstance(event, Notification) and event.method == "notifications/progress":
            progress.append(event.params)
            if len(progress) == 2:
                done.set()

    with McpClient.connect(everything("everything"), hook=hook) as client:
        result = client.call_tool(
            "trigger-long-running-operation", {"duration": 0.2, "steps": 2}, progress_token="tok"
        )
        assert "completed" in result.content
        assert done.wait(10)
    assert [p["progressToken"] for p in progress] == ["tok", "tok"]


def test_survives_its_server_requests_with_and_without_handlers(
    everything: Configure, plain: McpClient
) -> None:
    # Without handlers: sampling is refused, elicitation declined; the client carries on.
    refused = plain.call_tool("trigger-sampling-request", {"prompt": "hi"}, timeout=20)
    assert refused.is_error or "not" in refused.content.lower()
    assert plain.call_tool("echo", {"message": "after"}).content == "Echo: after"

    sampled: list[dict[str, Any]] = []

    def sample(params: dict[str, Any]) -> dict[str, Any]:
        sampled.append(params)
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "sampled text"},
            "model": "test-model",
            "stopReason": "endTurn",
        }

    with McpClient.connect(
        everything("handled"),
        sampling_handler=sample,
        elicitation_handler=lambda p: {"action": "accept", "content": {"name": "Ann"}},
        roots_handler=lambda p: {"roots": [{"uri": "file:///work", "name": "work"}]},
    ) as client:
        names = {t.name for t in client.tools}
        assert {"trigger-sampling-request", "trigger-elicitation-request"} <= names
        sampling = client.call_tool("trigger-sampling-request", {"prompt": "hi"}, timeout=20)
        assert "sampled text" in sampling.content and sampled
        assert "Ann" in client.call_tool("trigger-elicitation-request", {}, timeout=20).content
        assert "file:///work" in client.call_tool("get-roots-list", {}, timeout=20).content


def test_keeps_working_while_it_streams_log_notifications(everything: Configure) -> None:
    logs = threading.Event()

    def hook(event: McpEvent) -> None:
        if isinstance(event, Notification) and event.method == "notifications/message":
            logs.set()

    with McpClient.connect(everything("chatty"), hook=hook) as client:
        client.call_tool("toggle-simulated-logging", {})
        assert logs.wait(30)
        assert client.call_tool("echo", {"message": "still"}).content == "Echo: still"


def test_a_long_tool_runs_as_a_task_and_its_result_is_fetched(plain: McpClient) -> None:
    # simulate-research-query needs a task (taskSupport "required"); it takes ~4 s.
    handle = plain.call_tool("simulate-research-query", {"topic": "tides"}, task=True)
    assert handle.status.status == "working" and handle.task_id
    assert handle.wait(timeout=30).status == "completed"
    assert "# Research Report: tides" in handle.result().content
