"""Durable web turns' frames: a pure function of the durable stream's records (no DBOS)."""

from __future__ import annotations

import json
from collections.abc import Iterator

from agent_smith.base.history_json import message_to_dict, tool_call_to_dict
from agent_smith.base.json_fields import JsonObject
from agent_smith.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from agent_smith.web import durable_chat
from agent_smith.web.agui import AguiStream
from agent_smith.web.vercel import UiMessageStream

CALL = ToolCall("call-1", "get_weather", {"city": "Paris"})
RECORDS: list[JsonObject] = [
    {"type": "assistant", "message": message_to_dict(AssistantMessage(tool_calls=(CALL,)))},
    {"type": "tool_call", "call": tool_call_to_dict(CALL)},
    {
        "type": "tool_result",
        "message": message_to_dict(ToolMessage("call-1", "get_weather", "Sunny")),
    },
    {"type": "guardrail", "stage": "output", "guardrail": "g", "action": "allow"},
    {"type": "assistant", "message": message_to_dict(AssistantMessage("Sunny in Paris."))},
]
FINAL: JsonObject = {
    "type": "final",
    "message": message_to_dict(AssistantMessage("Sunny in Paris.")),
}


class Recorded:
    """A durable chat's stream, as written: the records of one turn."""

    def __init__(self, records: list[JsonObject]) -> None:
        self.records = records
        self.followed: list[str] = []

    def start(self, turn_id: str, session_id: str, message: UserMessage) -> None:
        raise AssertionError("not started here")

    def status(self, turn_id: str) -> str | None:
        return "SUCCESS"

    def running(self, prefix: str) -> str | None:
        return None

    def cancel(self, turn_id: str) -> None:
        raise AssertionError("not cancelled here")

    def follow(self, turn_id: str, offset: int = 0) -> Iterator[JsonObject]:
        self.followed.append(turn_id)
        yield from self.records[offset:]


def read(chat: Recorded, after: int, mapper: object = None) -> list[tuple[str, str]]:
    """The (id, data) of each frame of turn t1 after ``after``."""
    body = b"".join(
        durable_chat.follow(
            chat, "alice/c1", "t1", after, mapper or UiMessageStream(message_id="t1")
        )
    )
    events = []
    for block in body.decode().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        if lines:
            events.append((lines["id"], lines["data"]))
    return events


def test_every_read_of_a_turn_gives_the_same_frames_with_the_same_ids() -> None:
    chat = Recorded([*RECORDS, FINAL])
    whole = read(chat, 0)
    assert whole == read(chat, 0)
    assert [i for i, _ in whole] == [f"t1:{n}" for n in range(1, len(whole) + 1)]
    for after in range(len(whole) + 1):
        assert read(chat, after) == whole[after:]  # a resumed client: the rest, nothing twice
    assert chat.followed[0] == "alice/c1#t1"


def test_records_map_to_the_protocols_frames_with_the_reply_whole() -> None:
    kinds = [
        data if data == "[DONE]" else json.loads(data)["type"]
        for _, data in read(Recorded([*RECORDS, FINAL]), 0)
    ]
    assert kinds == [
        "start",
        "start-step",
        "tool-input-start",
        "tool-input-available",
        "tool-output-available",
        "finish-step",
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
        "[DONE]",
    ]
    agui = [
        json.loads(d)["type"]
        for _, d in read(Recorded([*RECORDS, FINAL]), 0, AguiStream(thread_id="c1", run_id="t1"))
    ]
    assert agui[0] == "RUN_STARTED" and agui[-1] == "RUN_FINISHED"
    assert "TEXT_MESSAGE_CONTENT" in agui


def test_a_turn_that_failed_ends_with_the_protocols_error() -> None:
    failed = {"type": "failed", "message": "the turn failed: the model is gone"}
    frames = [json.loads(d) for _, d in read(Recorded([RECORDS[0], failed]), 0) if d != "[DONE]"]
    assert frames[-1] == {"type": "error", "errorText": "the turn failed: the model is gone"}


def test_a_malformed_record_is_an_error_frame_not_a_crash() -> None:
    broken = {"type": "assistant", "message": {"role": "nobody"}}
    frames = [json.loads(d) for _, d in read(Recorded([broken]), 0) if d != "[DONE]"]
    assert frames[-1]["type"] == "error"
    assert "malformed" in frames[-1]["errorText"]
