"""A task's updates as SSE frames (agent_smith.web.a2a_stream): the bytes of each update whole."""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path

import pytest

from agent_smith.a2a.wire import JsonObject
from agent_smith.sessions.sqlite import SqliteSession
from agent_smith.web.a2a_stream import Frames, rpc_result
from agent_smith.web.a2a_tasks import TaskRecord, run_task
from agent_smith.web.stream import sse, turn_events
from tests.a2a.conftest import build


def groups_of_a_turn(tmp_path: Path, task_id: str, text: str) -> list[list[JsonObject]]:
    record = TaskRecord(task_id, "ctx-1", "local")
    stack = ExitStack()
    session = stack.enter_context(SqliteSession(tmp_path / "a2a.db", task_id))
    agent = stack.enter_context(build(session))
    return list(run_task(record, stack, agent, lambda: turn_events(lambda: agent.stream(text))))


def whole(group: list[JsonObject], *, request_id: object | None) -> bytes:
    """The frames with every update encoded whole (JSON-RPC when ``request_id`` is given)."""
    wrap = (lambda u: rpc_result(request_id, u)) if request_id is not None else (lambda u: u)
    return b"".join(sse(wrap(update)) for update in group)


@pytest.mark.parametrize("request_id", [7, "req-1", "\0text\0", None])
def test_frames_are_the_bytes_of_each_update_encoded_whole(
    tmp_path: Path, request_id: object | None
) -> None:
    # Two tasks through one Frames: the second's middle chunks carry its own ids.
    text = 'a "quoted", é🌍 \\ reply\nwith lines'
    groups = groups_of_a_turn(tmp_path, "t1", text) + groups_of_a_turn(tmp_path, "t2", "hi")
    frames = Frames(rpc=request_id is not None, request_id=request_id)
    written = [frames(group) for group in groups]
    assert written == [whole(group, request_id=request_id) for group in groups]
    middle = [
        json.loads(line[6:])
        for chunk in written
        for line in chunk.split(b"\n\n")
        if b'"append":true,"lastChunk":false' in line
    ]
    assert len(middle) > 4
    results = [m["result"] if request_id is not None else m for m in middle]
    assert {r["artifactUpdate"]["taskId"] for r in results} == {"t1", "t2"}


def test_a_middle_chunk_of_another_shape_is_encoded_whole() -> None:
    update: JsonObject = {
        "artifactUpdate": {
            "taskId": "t1",
            "contextId": "c1",
            "artifact": {"artifactId": "a", "parts": [{"text": "x"}, {"data": {"k": 1}}]},
            "append": True,
            "lastChunk": False,
        }
    }
    frames = Frames(rpc=True, request_id=3)
    assert frames([update]) == sse(rpc_result(3, update))
