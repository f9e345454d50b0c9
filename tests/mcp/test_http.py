"""StreamableHttpTransport alone: request shapes (responses) and wire behaviour (real server)."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import responses

from agent_smith.errors import McpError, McpProtocolError, TransportError
from agent_smith.logs import TRACE
from agent_smith.mcp.client import McpClient
from agent_smith.mcp.config import ServerConfig
from agent_smith.mcp.http import StreamableHttpTransport
from agent_smith.mcp.transport import Frame, StaleSession
from agent_smith.runtime import Runtime
from tests.support.fake_mcp_http import FakeMcpServer

URL = "http://127.0.0.1:9/mcp"
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
INIT_RESULT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "serverInfo": {"name": "s", "version": "1"},
}


class Frames:
    """Collects frames handed to on_frame; can answer server requests like a client."""

    def __init__(self) -> None:
        self.items: list[Frame] = []
        self.cond = threading.Condition()
        self.transport: StreamableHttpTransport | None = None

    def __call__(self, frame: Frame) -> None:
        with self.cond:
            self.items.append(frame)
            self.cond.notify_all()
        if "method" in frame and "id" in frame and self.transport is not None:
            # Answer from another thread, as the client's dispatcher would.
            answer = {"jsonrpc": "2.0", "id": frame["id"], "result": {}}
            threading.Thread(target=self._answer, args=(answer,), name="test-answer").start()

    def _answer(self, answer: Frame) -> None:
        assert self.transport is not None
        # The server may have what it needs (and the test may close) before our 202 is read.
        with contextlib.suppress(TransportError):
            self.transport.send(answer)

    def wait(self, predicate: Any, timeout: float = 10.0) -> list[Frame]:
        with self.cond:
            assert self.cond.wait_for(lambda: predicate(self.items), timeout), self.items
            return list(self.items)

    def answer(self, request_id: int, timeout: float = 10.0) -> Frame:
        """Wait for the frame with ``request_id`` (the answer, or an error answer) and return it."""
        got = self.wait(lambda items: any(f.get("id") == request_id for f in items), timeout)
        return next(f for f in got if f.get("id") == request_id)


def make(runtime: Runtime, url: str = URL, **kw: Any) -> tuple[StreamableHttpTransport, Frames]:
    config = ServerConfig(alias="web", url=url, **kw)
    transport = StreamableHttpTransport(config, runtime)
    frames = Frames()
    transport.start(frames, lambda err: None)
    return transport, frames


def init_response(session: str | None = "abc") -> dict[str, Any]:
    headers = {"Mcp-Session-Id": session} if session else {}
    return {"json": {"jsonrpc": "2.0", "id": 0, "result": INIT_RESULT}, "headers": headers}


# -- request shapes -------------------------------------------------------------


@responses.activate
def test_post_sends_accept_content_type_auth_and_extra_headers(runtime: Runtime) -> None:
    responses.post(URL, **init_response())
    transport, frames = make(runtime, bearer_token="tok-123", headers={"X-Team": "blue"})
    transport.send(INIT)
    sent = responses.calls[0].request
    assert sent.headers["Accept"] == "application/json, text/event-stream"
    assert sent.headers["Content-Type"] == "application/json"
    assert sent.headers["Authorization"] == "Bearer tok-123"
    assert sent.headers["X-Team"] == "blue"
    assert "MCP-Protocol-Version" not in sent.headers
    assert "Mcp-Session-Id" not in sent.headers
    assert json.loads(sent.body) == INIT
    assert frames.items == [{"jsonrpc": "2.0", "id": 0, "result": INIT_RESULT}]


@responses.activate
def test_session_id_and_negotiated_version_sent_after_initialize(runtime: Runtime) -> None:
    responses.post(URL, **init_response("sess-1"))
    responses.post(URL, status=202)
    responses.get(URL, status=405)
    responses.delete(URL, status=200)
    transport, _ = make(runtime)
    transport.send(INIT)
    transport.negotiated("2025-06-18")
    transport.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    transport.close()
    posted = [c.request for c in responses.calls if c.request.method == "POST"][1]
    assert posted.headers["Mcp-Session-Id"] == "sess-1"
    assert posted.headers["MCP-Protocol-Version"] == "2025-06-18"
    get = next(c.request for c in responses.calls if c.request.method == "GET")
    assert get.headers["Accept"] == "text/event-stream"
    assert get.headers["Mcp-Session-Id"] == "sess-1"
    delete = next(c.request for c in responses.calls if c.request.method == "DELETE")
    assert delete.headers["Mcp-Session-Id"] == "sess-1"


@responses.activate
def test_202_body_is_not_parsed(runtime: Runtime) -> None:
    responses.post(URL, status=202, body="not json at all", content_type="application/json")
    transport, frames = make(runtime)
    transport.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert frames.items == []


@responses.activate
def test_json_batch_body_delivers_every_frame(runtime: Runtime) -> None:
    batch = [
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": "x"},
        },
        {"jsonrpc": "2.0", "id": 7, "result": {}},
    ]
    responses.post(URL, json=batch)
    transport, frames = make(runtime)
    transport.send({"jsonrpc": "2.0", "id": 7, "method": "ping"})
    assert frames.wait(lambda items: len(items) == 2) == batch
    transport.close()


@responses.activate
def test_unparseable_json_answer_fails_the_request_with_an_error_answer(runtime: Runtime) -> None:
    responses.post(URL, body="{nope", content_type="application/json")
    transport, frames = make(runtime)
    transport.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    got = frames.wait(lambda items: bool(items))
    assert got[0]["id"] == 1
    assert "does not parse" in got[0]["error"]["message"]
    transport.close()


@responses.activate
def test_unparseable_json_answer_to_initialize_is_a_protocol_error(runtime: Runtime) -> None:
    responses.post(URL, body="{nope", content_type="application/json")
    transport, _ = make(runtime)
    with pytest.raises(McpProtocolError):
        transport.send(INIT)


@responses.activate
def test_404_with_a_session_is_stale_and_the_stale_id_is_not_resent(runtime: Runtime) -> None:
    responses.post(URL, **init_response("old"))
    responses.post(URL, status=404, body="session not found")
    responses.post(URL, **init_response("new"))
    transport, _ = make(runtime)
    transport.send(INIT)
    with pytest.raises(StaleSession):
        transport.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    transport.send(INIT)
    assert "Mcp-Session-Id" not in responses.calls[2].request.headers


@responses.activate
def test_400_naming_the_session_is_stale(runtime: Runtime) -> None:
    responses.post(URL, **init_response("old"))
    responses.post(
        URL,
        status=400,
        json={
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"},
        },
    )
    transport, _ = make(runtime)
    transport.send(INIT)
    with pytest.raises(StaleSession):
        transport.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})


@responses.activate
def test_404_without_a_session_is_a_transport_error(runtime: Runtime) -> None:
    responses.post(URL, status=404, body="no such endpoint")
    transport, _ = make(runtime)
    with pytest.raises(TransportError, match="404"):
        transport.send(INIT)


@responses.activate
def test_http_error_carries_status_and_a_redacted_bounded_excerpt(runtime: Runtime) -> None:
    body = json.dumps({"error": "boom", "api_key": "sk-secret", "pad": "x" * 5000})
    responses.post(URL, status=500, body=body, content_type="application/json")
    transport, _ = make(runtime)
    with pytest.raises(TransportError) as caught:
        transport.send(INIT)
    message = str(caught.value)
    assert "500" in message and "boom" in message
    assert "sk-secret" not in message
    assert len(message) < 1000
    assert "\n" not in message
    assert caught.value.endpoint_or_server == "web"


def test_connection_refused_is_a_transport_error(runtime: Runtime) -> None:
    transport, _ = make(runtime, url="http://127.0.0.1:1/mcp")
    with pytest.raises(TransportError):
        transport.send(INIT)


@responses.activate
def test_bearer_token_is_redacted_in_logs(
    runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    responses.post(URL, **init_response())
    transport, _ = make(runtime, bearer_token="tok-very-secret")
    with caplog.at_level(TRACE, logger="agent_smith.mcp"):
        transport.send(INIT)
    assert "POST" in caplog.text
    assert "tok-very-secret" not in caplog.text


@responses.activate
def test_delete_405_on_close_is_ignored(runtime: Runtime, no_thread_leak: None) -> None:
    responses.post(URL, **init_response())
    responses.get(URL, status=405)
    responses.delete(URL, status=405)
    transport, _ = make(runtime)
    transport.send(INIT)
    transport.negotiated("2025-06-18")
    transport.close()
    assert [c.request.method for c in responses.calls][-1] == "DELETE"


@responses.activate
def test_send_after_close_fails(runtime: Runtime) -> None:
    transport, _ = make(runtime)
    transport.close()
    with pytest.raises(TransportError, match="closed"):
        transport.send(INIT)


# -- behaviour against a real server ---------------------------------------------


@pytest.fixture
def fake() -> Iterator[FakeMcpServer]:
    with FakeMcpServer() as server:
        yield server


def connect(runtime: Runtime, server: FakeMcpServer) -> tuple[StreamableHttpTransport, Frames]:
    transport, frames = make(runtime, url=server.url)
    frames.transport = transport
    transport.send(INIT)
    transport.negotiated("2025-06-18")
    return transport, frames


def call(n: int, name: str, **args: Any) -> Frame:
    return {
        "jsonrpc": "2.0",
        "id": n,
        "method": "tools/call",
        "params": {"name": name, "arguments": args},
    }


def test_sse_body_split_at_every_byte_decodes_utf8_and_skips_comments_and_empty_events(
    runtime: Runtime, fake: FakeMcpServer, no_thread_leak: None
) -> None:
    transport, frames = connect(runtime, fake)
    try:
        transport.send(call(5, "utf8"))
        frames.answer(5)
    finally:
        transport.close()
    got = [f for f in frames.items if f.get("id") == 5 or f.get("method")]
    assert got[0]["params"]["data"] == "ünïcödé"
    assert got[1]["result"]["content"][0]["text"] == "héllo wörld — 日本語 🙂"
    assert len(got) == 2  # the comment and the empty event produced nothing


def test_server_request_inside_an_unrelated_sse_answer_is_delivered_and_answered(
    runtime: Runtime, fake: FakeMcpServer, no_thread_leak: None
) -> None:
    transport, frames = connect(runtime, fake)
    try:
        transport.send(call(9, "asks_client"))
        answer = frames.answer(9)
    finally:
        transport.close()
    assert {"jsonrpc": "2.0", "id": 0, "method": "ping"} in frames.items
    assert "client answered" in answer["result"]["content"][0]["text"]


def test_json_mode_server_answers_are_delivered(runtime: Runtime, no_thread_leak: None) -> None:
    with FakeMcpServer(sse=False) as server:
        transport, frames = connect(runtime, server)
        try:
            transport.send(call(3, "echo", text="hi"))
            # send() returns once the status is in; the JSON body is read after that.
            frames.answer(3)
        finally:
            transport.close()
    assert frames.items[-1]["result"]["content"][0]["text"] == "hi"


def test_notification_pushed_on_the_get_stream_reaches_on_frame(
    runtime: Runtime, fake: FakeMcpServer, no_thread_leak: None
) -> None:
    transport, frames = connect(runtime, fake)
    try:
        fake.wait_for(lambda seen: any(s.method == "GET" for s in seen))
        fake.wait_for(lambda seen: fake.get_streams_open() == 1)
        fake.push({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        frames.wait(
            lambda items: any(f.get("method") == "notifications/tools/list_changed" for f in items)
        )
    finally:
        transport.close()


def test_dropped_get_stream_is_resumed_with_last_event_id(
    runtime: Runtime, fake: FakeMcpServer, no_thread_leak: None
) -> None:
    transport, frames = connect(runtime, fake)
    try:
        fake.wait_for(lambda seen: fake.get_streams_open() == 1)
        fake.push({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"})
        frames.wait(lambda items: len(items) >= 2)
        fake.drop_get_streams()
        gets = fake.wait_for(lambda seen: sum(s.method == "GET" for s in seen) >= 2)
        resumed = [s for s in gets if s.method == "GET"][1]
        assert resumed.headers["last-event-id"] == "g1"
        assert resumed.headers["mcp-session-id"]
    finally:
        transport.close()


def test_get_stream_not_offered_stops_quietly(runtime: Runtime, no_thread_leak: None) -> None:
    with FakeMcpServer(get_mode="405") as server:
        transport, _ = connect(runtime, server)
        server.wait_for(lambda seen: any(s.method == "GET" for s in seen))
        transport.close()
        assert sum(s.method == "GET" for s in server.seen()) == 1


def test_close_wakes_the_get_thread_and_deletes_the_session(
    runtime: Runtime, fake: FakeMcpServer, no_thread_leak: None
) -> None:
    transport, _ = connect(runtime, fake)
    fake.wait_for(lambda seen: fake.get_streams_open() == 1)
    transport.close()
    assert not [t for t in threading.enumerate() if t.name == "agent_smith-mcp-listen-web"]
    deletes = fake.wait_for(lambda seen: any(s.method == "DELETE" for s in seen))
    assert next(s for s in deletes if s.method == "DELETE").headers["mcp-session-id"] == "s1"


def test_stale_session_raises_on_a_real_server(runtime: Runtime, fake: FakeMcpServer) -> None:
    transport, _ = connect(runtime, fake)
    try:
        fake.forget_sessions()
        with pytest.raises(StaleSession):
            transport.send(call(4, "echo", text="x"))
    finally:
        transport.close()


def test_sse_answer_ending_early_is_resumed_with_get_and_last_event_id(
    runtime: Runtime, fake: FakeMcpServer, no_thread_leak: None
) -> None:
    transport, frames = connect(runtime, fake)
    try:
        transport.send(call(11, "drops"))
        answer = frames.answer(11)
        gets = [s for s in fake.seen() if s.method == "GET" and "last-event-id" in s.headers]
    finally:
        transport.close()
    assert answer["result"]["content"][0]["text"] == "resumed"
    assert [g.headers["last-event-id"] for g in gets] == ["p1"]


def test_sse_answer_ending_without_an_event_id_fails_the_request(
    runtime: Runtime, fake: FakeMcpServer, no_thread_leak: None
) -> None:
    transport, frames = connect(runtime, fake)
    try:
        transport.send(call(12, "drops_without_id"))
        error = frames.answer(12)["error"]
    finally:
        transport.close()
    assert "ended before the response" in error["message"]


def test_session_gone_after_send_returned_fails_the_call_and_the_next_send_is_stale(
    runtime: Runtime, fake: FakeMcpServer, no_thread_leak: None
) -> None:
    transport, frames = connect(runtime, fake)
    try:
        fake.forget_sessions()
        # A notification is synchronous; a request may be answered on its thread.
        with pytest.raises(StaleSession):
            transport.send(call(4, "echo", text="x"))
            frames.answer(4)
            transport.send(call(5, "echo", text="y"))
    finally:
        transport.close()


@responses.activate
def test_a_frame_json_cannot_carry_is_refused_before_anything_is_posted(runtime: Runtime) -> None:
    transport, frames = make(runtime)
    with pytest.raises(McpError, match="JSON"):
        transport.send(call(1, "echo", text=object()))
    assert len(responses.calls) == 0 and frames.items == []
    transport.close()


def test_a_json_body_cut_short_fails_the_request_with_a_transport_error_answer(
    runtime: Runtime, no_thread_leak: None
) -> None:
    with FakeMcpServer(sse=False) as server:
        transport, frames = connect(runtime, server)
        try:
            transport.send(call(6, "truncated"))
            error = frames.answer(6)["error"]
        finally:
            transport.close()
    assert "reading the answer failed" in error["message"]


def test_json_mode_call_may_outlast_the_request_timeout_when_its_own_timeout_allows(
    no_thread_leak: None,
) -> None:
    # The server holds its headers until the tool is done: the POST's read timeout
    # must follow the call's timeout, not the (shorter) request timeout.
    with FakeMcpServer(sse=False) as server:
        config = ServerConfig(alias="web", url=server.url, request_timeout=0.2)
        with McpClient.connect(config) as client:
            result = client.call_tool("slow", {"seconds": 1.0}, timeout=30)
    assert result.content == "slept"


def test_every_post_after_initialize_carries_the_protocol_version_initialized_included(
    fake: FakeMcpServer, no_thread_leak: None
) -> None:
    config = ServerConfig(
        alias="web", url=fake.url, protocol_version="2025-11-25", protocol="legacy"
    )
    with McpClient.connect(config) as client:
        client.call_tool("echo", {"text": "x"})
    posts = [s for s in fake.seen() if s.method == "POST"]
    assert [p.rpc_method for p in posts[:2]] == ["initialize", "notifications/initialized"]
    assert "mcp-protocol-version" not in posts[0].headers
    assert {p.headers.get("mcp-protocol-version") for p in posts[1:]} == {"2025-11-25"}


def test_connect_returns_once_the_get_stream_is_open_even_when_the_server_is_slow(
    no_thread_leak: None,
) -> None:
    # The GET stream's answer comes late; the first request after connect must
    # still find it open (a server may send there right after initialized).
    with (
        FakeMcpServer(get_delay=0.3) as server,
        McpClient.connect(ServerConfig(alias="web", url=server.url, protocol="legacy")),
    ):
        order = [s.method if s.method == "GET" else s.rpc_method for s in server.seen()]
        open_now = server.get_streams_open()
    assert order[:3] == ["initialize", "notifications/initialized", "GET"]
    assert open_now == 1
