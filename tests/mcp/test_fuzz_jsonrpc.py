"""Fuzzing JSON-RPC framing: whatever a server sends, the peer routes it or says what is wrong."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from agent_smith import McpError, McpProtocolError
from agent_smith.mcp.jsonrpc import JsonRpcPeer
from agent_smith.mcp.sse_streams import event_frames
from tests.support.fuzz import QUICK, TOO_DEEP, json_objects_with, json_values

_FRAME_KEYS = ["jsonrpc", "id", "method", "params", "result", "error"]
_frames = json_objects_with(_FRAME_KEYS) | st.lists(json_objects_with(_FRAME_KEYS), max_size=3)


def peer(sent: list[Any]) -> JsonRpcPeer:
    return JsonRpcPeer(
        "fuzz", lambda frame, timeout=None: sent.append(frame), on_notification=lambda m, p: None
    )


@QUICK
@given(st.lists(_frames | json_values, max_size=5))
def test_the_peer_routes_arbitrary_frames_without_raising(frames: list[Any]) -> None:
    sent: list[Any] = []
    rpc = peer(sent)
    pending = rpc.start("tools/list")
    for frame in frames:
        rpc.handle_frame(frame)
    for answer in sent[1:]:  # what it answered the server's requests with is valid JSON-RPC
        assert answer["jsonrpc"] == "2.0" and ("result" in answer or "error" in answer)
        json.dumps(answer)
    rpc.cancel(pending, "fuzz over")


@QUICK
@given(json_objects_with(["result", "error"]))
def test_an_arbitrary_answer_is_a_result_or_a_typed_error(answer: dict[str, Any]) -> None:
    sent: list[Any] = []
    rpc = peer(sent)
    pending = rpc.start("tools/list")
    rpc.handle_frame({**answer, "jsonrpc": "2.0", "id": pending.id, "result": answer.get("result")})
    with contextlib.suppress(McpError, McpProtocolError):
        assert isinstance(rpc.wait(pending, 5.0), dict)


@QUICK
@given(st.text(max_size=300))
@example(TOO_DEEP)
def test_sse_event_data_of_arbitrary_text_gives_frames_or_none(data: str) -> None:
    assert isinstance(event_frames(data, "fuzz"), list)
