"""Interop over stdio with the npm reference server @modelcontextprotocol/server-everything."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from agent_smith import McpClient, McpError, McpEvent, Notification, ServerConfig, UserMessage
from tests.integration.servers import EVERYTHING, require_npm_peer

pytestmark = pytest.mark.usefixtures("no_thread_leak")


def everything(alias: str = "everything") -> ServerConfig:
    require_npm_peer(EVERYTHING)
    return ServerConfig(alias=alias, command=(str(EVERYTHING), "stdio"))


@pytest.fixture(scope="module")
def plain() -> Iterator[McpClient]:
    """A client with no handlers for server requests (the safe defaults answer)."""
    with McpClient.connect(everything()) as client:
        yield client


def test_lists_tools_resources_and_prompts(plain: McpClient) -> None:
    assert plain.server_info.name.startswith("mcp-servers/everything")
    assert {"echo", "get-sum", "get-tiny-image"} <= {t.name for t in plain.tools}
    assert plain.resources and all(r.uri for r in plain.resources)
    assert {"simple-prompt", "args-prompt"} <= {p.name for p in plain.prompts}


def test_calls_its_tools(plain: McpClient) -> None:
    assert plain.call_tool("echo", {"message": "hi"}).content == "Echo: hi"
    assert "3" in plain.call_tool("get-sum", {"a": 1, "b": 2}).content
    image = plain.call_tool("get-tiny-image", {}).content
    assert "[image: image/png," in image
    structured = plain.call_tool("get-structured-content", {"location": "Chicago"})
    assert structured.structured is not None and "temperature" in structured.structured


def test_reads_a_resource_and_gets_prompts(plain: McpClient) -> None:
    text = plain.read_resource(plain.resources[0].uri)
    assert text.strip()
    assert plain.get_prompt("simple-prompt") == [
        UserMessage("This is a simple prompt without arguments.")
    ]
    rendered = plain.get_prompt("args-prompt", {"city": "Paris"})
    assert "Paris" in rendered[0].content
    with pytest.raises(McpError, match="resource content"):
        plain.get_prompt("resource-prompt", {"resourceType": "Text", "resourceId": "1"})


def test_progress_notifications_reach_the_hook_during_a_long_call() -> None:
    progress: list[dict[str, Any]] = []
    done = threading.Event()

    def hook(event: McpEvent) -> None:
        if isinstance(event, Notification) and event.method == "notifications/progress":
            progress.append(event.params)
            if len(progress) == 2:
                done.set()

    with McpClient.connect(everything(), hook=hook) as client:
        result = client.call_tool(
            "trigger-long-running-operation", {"duration": 0.2, "steps": 2}, progress_token="tok"
        )
        assert "completed" in result.content
        assert done.wait(10)
    assert [p["progressToken"] for p in progress] == ["tok", "tok"]


def test_survives_its_server_requests_with_and_without_handlers() -> None:
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
        elicited = client.call_tool("trigger-elicitation-request", {}, timeout=20)
        assert "Ann" in elicited.content
        roots = client.call_tool("get-roots-list", {}, timeout=20)
        assert "file:///work" in roots.content


def test_keeps_working_while_it_streams_log_notifications() -> None:
    logs = threading.Event()

    def hook(event: McpEvent) -> None:
        if isinstance(event, Notification) and event.method == "notifications/message":
            logs.set()

    with McpClient.connect(everything("chatty"), hook=hook) as client:
        client.call_tool("toggle-simulated-logging", {})
        assert logs.wait(30)
        assert client.call_tool("echo", {"message": "still"}).content == "Echo: still"
