"""A2AClient against our served agent (both bindings) and against servers that misbehave."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agent_smith import A2AClient, A2AError, A2AProtocolError, ConfigError, TransportError
from agent_smith.a2a.card import agent_card
from agent_smith.a2a.wire import ArtifactUpdate, StatusUpdate, TaskView, text_message
from agent_smith.base.cancellation import CancellationSource
from agent_smith.errors import CancelledError
from tests.a2a.conftest import HOLDING, NOTES, TIMEOUT

BINDINGS = ["JSONRPC", "HTTP+JSON"]


@pytest.mark.parametrize("binding", BINDINGS)
def test_send_get_and_history_length(served: str, binding: str) -> None:
    client = A2AClient(served, binding=binding)
    assert client.card().binding == binding
    task = client.send(text_message("hello"))
    assert isinstance(task, TaskView)
    assert (task.state, task.text) == ("TASK_STATE_COMPLETED", "You said: hello")
    again = client.get_task(task.id, history_length=1)
    assert again.state == task.state and len(again.history) == 1
    assert again.history[0]["role"] == "ROLE_AGENT"


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_stream_gives_status_and_the_answer_token_by_token(served: str, binding: str) -> None:
    items = list(A2AClient(served, binding=binding).stream(text_message("a b c")))
    chunks = [i.text for i in items if isinstance(i, ArtifactUpdate)]
    assert len(chunks) > 3 and "".join(chunks) == "You said: a b c"
    states = [i.state for i in items if isinstance(i, StatusUpdate)]
    assert states[0] == "TASK_STATE_WORKING" and states[-1] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize("binding", BINDINGS)
def test_input_required_then_the_answer_continues_the_task(served: str, binding: str) -> None:
    client = A2AClient(served, binding=binding)
    task = client.send(text_message("save bread"))
    assert isinstance(task, TaskView) and task.state == "TASK_STATE_INPUT_REQUIRED"
    done = client.send(text_message("yes", task_id=task.id, context_id=task.context_id))
    assert isinstance(done, TaskView)
    assert (done.state, done.text) == ("TASK_STATE_COMPLETED", "Done: saved: bread")
    assert NOTES == ["bread"]


@pytest.mark.parametrize("binding", BINDINGS)
def test_cancelling_a_running_task_stops_its_turn(served: str, binding: str) -> None:
    client = A2AClient(served, binding=binding)
    seen: list[Any] = []
    failure: list[BaseException] = []
    first = threading.Event()

    def read() -> None:
        try:
            for item in client.stream(text_message("wait")):
                seen.append(item)
                first.set()
        except BaseException as err:  # the test reports it
            failure.append(err)

    reader = threading.Thread(target=read, name="test-a2a-reader")
    reader.start()
    assert HOLDING.wait(TIMEOUT) and first.wait(TIMEOUT)
    task_id = seen[0].id
    assert client.cancel_task(task_id).state == "TASK_STATE_CANCELED"
    reader.join(TIMEOUT)
    assert not failure and seen[-1].state == "TASK_STATE_CANCELED"
    with pytest.raises(A2AError) as caught:
        client.cancel_task(task_id)
    assert caught.value.rpc_code == -32002  # not cancelable: already final


@pytest.mark.parametrize("binding", BINDINGS)
def test_an_unknown_task_is_a2a_error_with_its_code(served: str, binding: str) -> None:
    with pytest.raises(A2AError) as caught:
        A2AClient(served, binding=binding).get_task("nope")
    assert caught.value.rpc_code == -32001 and not isinstance(caught.value, A2AProtocolError)


def test_a_cancelled_stream_stops_reading(served: str) -> None:
    source = CancellationSource()
    stream = A2AClient(served).stream(text_message("wait"), cancel=source.token)
    first = next(stream)
    assert HOLDING.wait(TIMEOUT)
    source.cancel()
    with pytest.raises(CancelledError):
        list(stream)
    A2AClient(served).cancel_task(first.id)  # type: ignore[union-attr]


def test_options_are_checked() -> None:
    with pytest.raises(ConfigError):
        A2AClient("ftp://x")
    with pytest.raises(ConfigError):
        A2AClient("http://x", binding="GRPC")


# -- servers that misbehave ------------------------------------------------------


class Misbehaving(BaseHTTPRequestHandler):
    """A card, then what ``self.server.mode`` says for every POST."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        host = f"http://127.0.0.1:{self.server.server_port}"  # type: ignore[attr-defined]
        card: Any = agent_card(name="bad", description="d", url=host + "/rpc")
        if self.server.mode == "bad card":  # type: ignore[attr-defined]
            card = {"name": "bad"}
        self._send(200, "application/json", json.dumps(card).encode())

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        mode = self.server.mode  # type: ignore[attr-defined]
        if mode == "rpc error":
            body = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "boom"}}
            self._send(200, "application/json", json.dumps(body).encode())
        elif mode == "cut stream":
            status = {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}
            event = {"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": status}}
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(b"data: " + json.dumps(event).encode() + b'\n\ndata: {"jsonrpc')
            self.wfile.flush()
            self.close_connection = True
        else:  # not JSON at all
            self._send(200, "application/json", b"<html>")

    def _send(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def misbehaving() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Misbehaving)
    server.mode = ""  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, name="test-a2a-misbehaving")
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(TIMEOUT)


def _client(server: ThreadingHTTPServer, mode: str) -> A2AClient:
    server.mode = mode  # type: ignore[attr-defined]
    return A2AClient(f"http://127.0.0.1:{server.server_address[1]}")


def test_an_invalid_card_is_a_protocol_error(misbehaving: ThreadingHTTPServer) -> None:
    with pytest.raises(A2AProtocolError, match="lacks required field"):
        _client(misbehaving, "bad card").send(text_message("hi"))


def test_a_json_rpc_error_is_an_a2a_error(misbehaving: ThreadingHTTPServer) -> None:
    with pytest.raises(A2AError, match="boom") as caught:
        _client(misbehaving, "rpc error").get_task("t")
    assert caught.value.rpc_code == -32603


def test_an_answer_that_is_not_json_is_a_protocol_error(misbehaving: ThreadingHTTPServer) -> None:
    with pytest.raises(A2AProtocolError, match="not JSON"):
        _client(misbehaving, "garbage").get_task("t")


def test_a_stream_cut_mid_way_is_a_protocol_error(misbehaving: ThreadingHTTPServer) -> None:
    seen = []
    with pytest.raises(A2AProtocolError, match="ended before the task finished"):
        for item in _client(misbehaving, "cut stream").stream(text_message("hi")):
            seen.append(item)
    assert [type(i).__name__ for i in seen] == ["StatusUpdate"]


def test_an_agent_that_is_not_there_is_a_transport_error() -> None:
    with pytest.raises(TransportError):
        A2AClient("http://127.0.0.1:9").card()
