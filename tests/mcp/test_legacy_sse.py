"""LegacySseTransport's edge cases against a scriptable 2024-11-05 server on 127.0.0.1."""

from __future__ import annotations

import pytest
import responses

from agent_smith import McpClient, ServerConfig, TransportError
from tests.integration.mcp_helpers import Recorder
from tests.support.fake_legacy_sse import FakeLegacySseServer

pytestmark = pytest.mark.usefixtures("no_thread_leak")


def sse(url: str, **fields: object) -> ServerConfig:
    return ServerConfig(alias="old", url=url, transport="sse", **fields)  # type: ignore[arg-type]


def test_a_2024_11_05_server_is_accepted_and_messages_go_to_its_endpoint() -> None:
    with (
        FakeLegacySseServer() as server,
        McpClient.connect(sse(server.url, headers={"X-Team": "blue"})) as client,
    ):
        assert client.protocol_version == "2024-11-05"
        assert client.call_tool("echo", {"text": "hi"}).content == "hi"
        methods = [p.get("method") for p in server.posts]
        headers = server.post_headers
    assert methods[:3] == ["initialize", "notifications/initialized", "tools/list"]
    assert all(h["x-team"] == "blue" for h in headers)
    assert "mcp-protocol-version" not in headers[0]
    assert {h.get("mcp-protocol-version") for h in headers[1:]} == {"2024-11-05"}


def test_only_the_legacy_transport_accepts_the_legacy_revision() -> None:
    from agent_smith.mcp.http import StreamableHttpTransport
    from agent_smith.mcp.legacy_sse import LegacySseTransport

    assert "2024-11-05" in LegacySseTransport.protocol_versions
    assert "2024-11-05" not in StreamableHttpTransport.protocol_versions


def test_an_endpoint_on_another_origin_is_refused() -> None:
    with (
        FakeLegacySseServer(endpoint="http://attacker.example.com/messages") as server,
        pytest.raises(TransportError, match="no endpoint event"),
    ):
        McpClient.connect(sse(server.url, request_timeout=2.0))


def test_a_stream_without_an_endpoint_event_fails_after_the_request_timeout() -> None:
    with (
        FakeLegacySseServer(endpoint=None) as server,
        pytest.raises(TransportError, match="no endpoint event"),
    ):
        McpClient.connect(sse(server.url, request_timeout=0.3))


def test_a_refused_post_is_a_transport_error_with_its_status() -> None:
    with (
        FakeLegacySseServer(post_status=400) as server,
        pytest.raises(TransportError) as info,
    ):
        McpClient.connect(sse(server.url))
    assert info.value.http_status == 400


def test_a_get_that_is_not_a_stream_is_a_transport_error() -> None:
    with (
        FakeLegacySseServer() as server,
        pytest.raises(TransportError, match="HTTP 404") as info,
    ):
        McpClient.connect(sse(server.url.replace("/sse", "/nothing")))
    assert info.value.http_status == 404


def test_the_stream_ending_disconnects_and_the_next_call_reconnects() -> None:
    events = Recorder()
    with (
        FakeLegacySseServer() as server,
        McpClient.connect(sse(server.url), hook=events) as client,
    ):
        server.end_streams()
        events.wait_until(lambda: "DISCONNECTED" in events.kinds())
        assert client.call_tool("echo", {"text": "back"}).content == "back"
        events.wait_until(lambda: events.kinds()[-1] == "CONNECTED")
    assert events.kinds()[:4] == ["CONNECTED", "DISCONNECTED", "RECONNECTING", "CONNECTED"]


@responses.activate
def test_auto_reports_both_failures_when_neither_transport_answers() -> None:
    url = "http://127.0.0.1:9/mcp"
    responses.post(url, status=405)
    responses.get(url, status=404, body="no such stream")
    with pytest.raises(TransportError, match="neither transport answered") as info:
        McpClient.connect(ServerConfig(alias="gone", url=url, transport="auto"))
    assert "HTTP 405" in str(info.value) and "HTTP 404" in str(info.value)
    # server/discover, then initialize (both refused), then the HTTP+SSE stream.
    assert [c.request.method for c in responses.calls] == ["POST", "POST", "GET"]


@responses.activate
def test_auto_does_not_fall_back_on_401() -> None:
    url = "http://127.0.0.1:9/mcp"
    responses.post(url, status=401)
    with pytest.raises(TransportError) as info:
        McpClient.connect(ServerConfig(alias="locked", url=url, transport="auto"))
    assert info.value.http_status == 401
    assert [c.request.method for c in responses.calls] == ["POST"]
