"""W3C trace context reaches the LLM server and HTTP MCP servers, through the user's propagator."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry import propagate
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from agent_smith import (
    Agent,
    LlmClient,
    LlmRequest,
    McpClient,
    Runtime,
    ServerConfig,
    UserMessage,
)
from tests.support.fake_legacy_sse import FakeLegacySseServer
from tests.support.fake_mcp_http import FakeMcpServer
from tests.support.llm_server import Calls, ScriptedLlmServer, Text
from tests.tracing.conftest import Spans


@pytest.fixture(autouse=True)
def _no_leaks(no_thread_leak: None) -> None:
    """Every test here leaves no agent_smith thread behind."""


@pytest.fixture
def w3c() -> Iterator[None]:
    """The application's propagator: W3C trace context (restored afterwards)."""
    before = propagate.get_global_textmap()
    propagate.set_global_textmap(TraceContextTextMapPropagator())
    try:
        yield
    finally:
        propagate.set_global_textmap(before)


def _traceparent(span: ReadableSpan) -> str:
    assert span.context is not None
    ids = span.context
    return f"00-{ids.trace_id:032x}-{ids.span_id:016x}-{int(ids.trace_flags):02x}"


def test_each_llm_request_carries_its_chat_spans_traceparent(
    spans: Spans, w3c: None, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Calls(("now", {})), Text("It is now."))
    with Agent(LlmClient(llm_server.url, "m", runtime=runtime), tools=[_now]) as agent:
        agent.send("What time is it?")

    chats = sorted(spans.named("chat m"), key=lambda s: s.start_time or 0)
    sent = [headers.get("traceparent") for headers in llm_server.headers]
    assert sent == [_traceparent(chat) for chat in chats]


def test_no_propagator_means_no_trace_header(
    spans: Spans, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    before = propagate.get_global_textmap()
    propagate.set_global_textmap(CompositePropagator([]))  # OTEL_PROPAGATORS=none
    try:
        request = LlmRequest((UserMessage("hi"),))
        LlmClient(llm_server.url, runtime=runtime).complete_stream(request, lambda _: None)
    finally:
        propagate.set_global_textmap(before)
    assert spans.one("chat")  # traced, but nothing told the server
    assert "traceparent" not in llm_server.headers[0]


def test_http_mcp_requests_carry_their_spans_context_in_headers_and_meta(
    spans: Spans, w3c: None, runtime: Runtime
) -> None:
    with FakeMcpServer() as server:
        config = ServerConfig(alias="web", url=server.url)
        with McpClient.connect(config, runtime=runtime) as client:
            assert client.call_tool("echo", {"text": "hi"}).content == "hi"
            calls = [s for s in server.seen() if s.rpc_method == "tools/call"]

    span = spans.one("tools/call echo")
    (call,) = calls
    assert call.headers["traceparent"] == _traceparent(span)
    assert call.body["params"]["_meta"] == {"traceparent": _traceparent(span)}
    assert call.body["params"]["arguments"] == {"text": "hi"}
    listed = spans.one("tools/list")
    (list_call,) = [s for s in server.seen() if s.rpc_method == "tools/list"]
    assert list_call.headers["traceparent"] == _traceparent(listed)


def test_an_agents_mcp_tool_call_is_a_client_span_under_its_execute_tool_span(
    spans: Spans, w3c: None, llm_server: ScriptedLlmServer, runtime: Runtime
) -> None:
    llm_server.script(Calls(("mcp_web__echo", {"text": "hi"})), Text("Said hi."))
    with FakeMcpServer() as server, Agent(LlmClient(llm_server.url, runtime=runtime)) as agent:
        agent.connect_mcp(ServerConfig(alias="web", url=server.url))
        agent.send("Say hi.")
        (call,) = [s for s in server.seen() if s.rpc_method == "tools/call"]

    executed = spans.one("execute_tool mcp_web__echo")
    assert (executed.attributes or {})["gen_ai.tool.type"] == "extension"
    request = spans.one("tools/call echo")
    assert spans.parent_of(request) is executed
    assert call.headers["traceparent"] == _traceparent(request)


def _now() -> str:
    """The time."""
    return "noon"


def test_legacy_sse_posts_carry_their_spans_traceparent(
    spans: Spans, w3c: None, runtime: Runtime
) -> None:
    with FakeLegacySseServer() as server:
        config = ServerConfig(alias="old", url=server.url, transport="sse")
        with McpClient.connect(config, runtime=runtime) as client:
            assert client.call_tool("echo", {"text": "hi"}).content == "hi"
        (index,) = [i for i, body in enumerate(server.posts) if body.get("method") == "tools/call"]
        headers = server.post_headers[index]

    span = spans.one("tools/call echo")
    assert (span.attributes or {})["agent_smith.mcp.transport"] == "sse"
    assert headers["traceparent"] == _traceparent(span)
