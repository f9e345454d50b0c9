from __future__ import annotations

import threading
from typing import Any

import pytest

from agent_smith import AgentTimeoutError, CancelledError, McpError, TransportError
from agent_smith.mcp.jsonrpc import JsonRpcPeer
from agent_smith.mcp.transport import Frame


class Wire:
    """Records frames the peer sends; answers nothing by itself."""

    def __init__(self) -> None:
        self.frames: list[Frame] = []
        self.sent = threading.Condition()

    def send(self, frame: Frame, *, timeout: float | None = None) -> None:
        with self.sent:
            self.frames.append(frame)
            self.sent.notify_all()

    def wait_for(self, count: int) -> list[Frame]:
        with self.sent:
            assert self.sent.wait_for(lambda: len(self.frames) >= count, timeout=5)
            return list(self.frames)


def make_peer(**kwargs: Any) -> tuple[JsonRpcPeer, Wire, list[tuple[str, dict[str, Any]]]]:
    wire = Wire()
    notes: list[tuple[str, dict[str, Any]]] = []
    peer = JsonRpcPeer(
        "srv", wire.send, on_notification=lambda m, p: notes.append((m, p)), **kwargs
    )
    return peer, wire, notes


def test_first_request_has_id_zero_and_its_answer_is_routed() -> None:
    peer, wire, _ = make_peer()
    pending = peer.start("tools/list", {})
    assert wire.frames[0] == {"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {}}
    peer.handle_frame({"jsonrpc": "2.0", "id": 0, "result": {"tools": []}})
    assert peer.wait(pending, 5) == {"tools": []}


def test_answers_are_routed_by_id_whatever_their_order() -> None:
    peer, _, _ = make_peer()
    first, second = peer.start("a"), peer.start("b")
    peer.handle_frame({"jsonrpc": "2.0", "id": second.id, "result": {"who": "b"}})
    peer.handle_frame({"jsonrpc": "2.0", "id": first.id, "result": {"who": "a"}})
    assert peer.wait(first, 5) == {"who": "a"}
    assert peer.wait(second, 5) == {"who": "b"}


def test_error_answer_raises_mcp_error_with_rpc_code() -> None:
    peer, _, _ = make_peer()
    pending = peer.start("tools/call")
    peer.handle_frame(
        {"jsonrpc": "2.0", "id": pending.id, "error": {"code": -32602, "message": "bad"}}
    )
    with pytest.raises(McpError) as info:
        peer.wait(pending, 5)
    assert info.value.rpc_code == -32602
    assert info.value.server == "srv"


def test_timeout_sends_cancelled_and_drops_the_late_answer() -> None:
    peer, wire, notes = make_peer()
    pending = peer.start("tools/call", {"name": "slow"})
    with pytest.raises(AgentTimeoutError):
        peer.wait(pending, 0.01)
    cancelled = wire.frames[-1]
    assert cancelled["method"] == "notifications/cancelled"
    assert cancelled["params"]["requestId"] == pending.id
    assert "timed out" in cancelled["params"]["reason"]
    peer.handle_frame({"jsonrpc": "2.0", "id": pending.id, "result": {"late": True}})
    assert notes == []  # the late answer went nowhere


def test_cancel_wakes_the_waiter_with_cancelled_error() -> None:
    peer, wire, _ = make_peer()
    pending = peer.start("tools/call")
    peer.cancel(pending, "user gave up")
    with pytest.raises(CancelledError):
        peer.wait(pending, 5)
    assert wire.frames[-1]["params"] == {"requestId": pending.id, "reason": "user gave up"}


def test_fail_all_fails_pending_and_later_requests() -> None:
    peer, _, _ = make_peer()
    pending = peer.start("x")
    error = TransportError("gone", operation="read", endpoint_or_server="srv")
    peer.fail_all(error)
    with pytest.raises(TransportError):
        peer.wait(pending, 5)
    with pytest.raises(TransportError):
        peer.start("y")


def test_server_ping_with_id_zero_is_answered_with_empty_result() -> None:
    peer, wire, _ = make_peer()
    peer.handle_frame({"jsonrpc": "2.0", "id": 0, "method": "ping"})
    assert wire.frames == [{"jsonrpc": "2.0", "id": 0, "result": {}}]


def test_unknown_server_request_gets_method_not_found() -> None:
    peer, wire, _ = make_peer()
    peer.handle_frame({"jsonrpc": "2.0", "id": "r1", "method": "sampling/createMessage"})
    assert wire.frames[0]["id"] == "r1"
    assert wire.frames[0]["error"]["code"] == -32601


def test_registered_handler_answers_and_its_failure_becomes_an_error_answer() -> None:
    def roots(params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": [{"uri": "file:///w"}]}

    def broken(params: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("nope")

    peer, wire, _ = make_peer(handlers={"roots/list": roots, "sampling/createMessage": broken})
    peer.handle_frame({"jsonrpc": "2.0", "id": 3, "method": "roots/list"})
    peer.handle_frame({"jsonrpc": "2.0", "id": 4, "method": "sampling/createMessage"})
    assert wire.frames[0] == {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {"roots": [{"uri": "file:///w"}]},
    }
    assert wire.frames[1]["error"]["code"] == -32603


@pytest.mark.parametrize(
    ("result", "problem"),
    [
        ({"roots": {"file:///w"}}, "JSON cannot carry"),  # a set
        ({"temperature": float("nan")}, "JSON cannot carry"),
        ({"text": "\ud800"}, "JSON cannot carry"),  # a lone surrogate
        ([{"uri": "file:///w"}], "returned list, not an object"),
        (None, "returned NoneType, not an object"),
    ],
)
def test_handler_result_json_cannot_carry_gets_the_server_an_internal_error(
    result: Any, problem: str
) -> None:
    peer, wire, _ = make_peer(handlers={"roots/list": lambda params: result})
    peer.handle_frame({"jsonrpc": "2.0", "id": 7, "method": "roots/list"})
    [answer] = wire.wait_for(1)
    assert answer["id"] == 7
    assert "result" not in answer
    assert answer["error"]["code"] == -32603
    assert "roots/list" in answer["error"]["message"]
    assert problem in answer["error"]["message"]


def test_handler_that_raises_on_a_dispatch_thread_still_gets_the_server_an_answer() -> None:
    def broken(params: dict[str, Any]) -> dict[str, Any]:
        raise ValueError("no sampling here")

    threads: list[threading.Thread] = []

    def on_thread(job: Any) -> None:
        thread = threading.Thread(target=job, name="test-handler")
        threads.append(thread)
        thread.start()

    peer, wire, _ = make_peer(handlers={"sampling/createMessage": broken}, dispatch=on_thread)
    peer.handle_frame({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage"})
    [answer] = wire.wait_for(1)
    for thread in threads:
        thread.join(5)
    assert answer == {
        "jsonrpc": "2.0",
        "id": "s1",
        "error": {"code": -32603, "message": "ValueError: no sampling here"},
    }


def test_notifications_go_to_the_callback_and_junk_is_skipped() -> None:
    peer, wire, notes = make_peer()
    peer.handle_frame({"jsonrpc": "2.0", "method": "notifications/message", "params": {"x": 1}})
    peer.handle_frame({"jsonrpc": "2.0", "something": "else"})
    peer.handle_frame("not an object")  # type: ignore[arg-type]
    assert notes == [("notifications/message", {"x": 1})]
    assert wire.frames == []


def test_many_threads_each_get_their_own_answer() -> None:
    peer, wire, _ = make_peer()
    results: dict[int, Any] = {}
    barrier = threading.Barrier(10)

    def worker(n: int) -> None:
        barrier.wait(5)
        pending = peer.start("echo", {"n": n})
        results[n] = peer.wait(pending, 5)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(10)]
    for t in threads:
        t.start()
    frames = wire.wait_for(10)
    for frame in reversed(frames):  # answer in the opposite order
        peer.handle_frame({"jsonrpc": "2.0", "id": frame["id"], "result": frame["params"]})
    for t in threads:
        t.join(5)
    assert results == {n: {"n": n} for n in range(10)}
