"""McpClient over HTTP when the server forgets the session or talks on the GET stream.

Uses the scriptable server of tests/support/fake_mcp_http.py on 127.0.0.1.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from agent_smith import McpClient, McpEvent, Notification, ServerConfig, TransportError
from tests.support.fake_mcp_http import FakeMcpServer

pytestmark = pytest.mark.usefixtures("no_thread_leak")


@pytest.fixture
def fake() -> Iterator[FakeMcpServer]:
    with FakeMcpServer() as server:
        yield server


def _initializes(server: FakeMcpServer) -> int:
    return sum(s.rpc_method == "initialize" for s in server.seen())


def test_forgotten_session_is_reinitialised_once_and_the_request_succeeds(
    fake: FakeMcpServer,
) -> None:
    with McpClient.connect(ServerConfig(alias="web", url=fake.url)) as client:
        assert _initializes(fake) == 1
        fake.forget_sessions()
        assert client.read_resource("test://x") == "hi"
        assert _initializes(fake) == 2
        reads = [s for s in fake.seen() if s.rpc_method == "resources/read"]
        assert len(reads) == 2  # refused once, sent again on the new session
        assert client.call_tool("echo", {"text": "new session"}).content == "new session"


def test_tools_call_that_met_a_forgotten_session_is_not_replayed(fake: FakeMcpServer) -> None:
    with McpClient.connect(ServerConfig(alias="web", url=fake.url)) as client:
        fake.forget_sessions()
        with pytest.raises(TransportError, match="session"):
            client.call_tool("echo", {"text": "once"})
        calls = [s for s in fake.seen() if s.rpc_method == "tools/call"]
        assert len(calls) == 1  # the call was not sent again on the new session
        assert _initializes(fake) == 2
        assert client.call_tool("echo", {"text": "next"}).content == "next"


def test_notification_on_the_get_stream_reaches_the_hook(fake: FakeMcpServer) -> None:
    told = threading.Event()

    def hook(event: McpEvent) -> None:
        if isinstance(event, Notification) and event.method == "notifications/tools/list_changed":
            told.set()

    with McpClient.connect(ServerConfig(alias="web", url=fake.url), hook=hook):
        fake.wait_for(lambda seen: fake.get_streams_open() == 1)
        fake.push({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        assert told.wait(10)


def test_server_request_on_the_get_stream_is_answered(fake: FakeMcpServer) -> None:
    with McpClient.connect(ServerConfig(alias="web", url=fake.url)):
        fake.wait_for(lambda seen: fake.get_streams_open() == 1)
        fake.push({"jsonrpc": "2.0", "id": 0, "method": "ping"})
        answers = fake.wait_for(
            lambda seen: any(s.body and s.body.get("id") == 0 and "result" in s.body for s in seen)
        )
        answer = next(
            s.body for s in answers if s.body and s.body.get("id") == 0 and "result" in s.body
        )
        assert answer == {"jsonrpc": "2.0", "id": 0, "result": {}}


def test_close_deletes_the_session_and_stops_the_get_stream(fake: FakeMcpServer) -> None:
    with McpClient.connect(ServerConfig(alias="web", url=fake.url)):
        fake.wait_for(lambda seen: fake.get_streams_open() == 1)
    deletes = [s for s in fake.seen() if s.method == "DELETE"]
    assert [d.headers["mcp-session-id"] for d in deletes] == ["s1"]
    assert not [t for t in threading.enumerate() if t.name.startswith("agent_smith-mcp-")]
