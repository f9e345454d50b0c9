"""Durable web turns: frames a pure function of the durable stream's records, and the app's
routes to them, against a recorded stream (no DBOS; the real thing runs in
tests/integration/test_web_durable.py)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_smith import Agent, ConfigError, LlmClient, Session, SqliteEventLog, WebApp
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
    """A durable chat whose every turn writes ``records``: the turn ``alice/c1#t1`` ended,
    ``busy`` (if given) runs."""

    def __init__(self, records: list[JsonObject], *, busy: str | None = None) -> None:
        self.records = records
        self.busy = busy
        self.followed: list[str] = []
        self.started: list[tuple[str, str, UserMessage]] = []
        self.cancelled: list[str] = []
        self.turns = {"alice/c1#t1", busy}

    def start(self, turn_id: str, session_id: str, message: UserMessage) -> None:
        self.started.append((turn_id, session_id, message))
        self.turns.add(turn_id)

    def status(self, turn_id: str) -> str | None:
        return "SUCCESS" if turn_id in self.turns else None

    def running(self, prefix: str) -> str | None:
        return self.busy if self.busy and self.busy.startswith(prefix) else None

    def cancel(self, turn_id: str) -> None:
        self.cancelled.append(turn_id)

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


def app_on(chat: Recorded, tmp_path: Path) -> WebApp:
    def build(session: Session) -> Agent:
        raise AssertionError("a durable chat turn builds its agent in DurableChat")

    def user(environ: dict[str, Any]) -> str:
        return str(environ.get("HTTP_X_USER", "alice"))

    return WebApp(build, sessions=tmp_path / "c.db", authenticate=user, durable_chat=chat)


def call(
    app: WebApp, method: str, path: str, body: object = None, **headers: str
) -> tuple[str, str]:
    seen: dict[str, Any] = {}

    def start_response(status: str, _headers: list[tuple[str, str]]) -> None:
        seen["status"] = status

    data = json.dumps(body).encode() if body is not None else b""
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(data)),
        "wsgi.input": io.BytesIO(data),
        **{f"HTTP_{k.upper()}": v for k, v in headers.items()},
    }
    answer = app(environ, start_response)
    try:
        text = b"".join(answer).decode()
    finally:
        getattr(answer, "close", lambda: None)()
    return seen["status"], text


def chat_body(text: str) -> dict[str, Any]:
    message = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": text}]}
    return {"id": "c1", "messages": [message], "trigger": "submit-message"}


def test_a_message_starts_a_durable_turn_and_its_response_follows_the_turns_stream(
    tmp_path: Path,
) -> None:
    chat = Recorded([*RECORDS, FINAL])
    status, body = call(app_on(chat, tmp_path), "POST", "/api/chat", chat_body("Weather?"))
    assert status == "200 OK"
    ((turn_id, session_id, message),) = chat.started
    assert session_id == "alice/c1" and turn_id.startswith("alice/c1#")
    assert message == UserMessage("Weather?")
    assert chat.followed == [turn_id]
    turn = turn_id.partition("#")[2]
    assert f'id: {turn}:1\ndata: {{"type":"start","messageId":"{turn}"}}' in body
    assert "Sunny in Paris." in body and body.endswith("data: [DONE]\n\n")


def test_a_reconnect_follows_after_its_last_event_id_and_only_its_users_turn(
    tmp_path: Path,
) -> None:
    app = app_on(Recorded([*RECORDS, FINAL]), tmp_path)
    whole = read(Recorded([*RECORDS, FINAL]), 0)
    status, body = call(app, "GET", "/api/chat/c1/stream", LAST_EVENT_ID="t1:4")
    assert status == "200 OK"
    assert body.startswith(": t1 after 4\n\nid: t1:5\n")
    assert body.count("id: t1:") == len(whole) - 4
    refused, _ = call(app, "GET", "/api/chat/c1/stream", LAST_EVENT_ID="t1:4", X_USER="bob")
    assert refused.startswith("404")
    none, _ = call(app, "GET", "/api/chat/c1/stream")  # no Last-Event-ID, no turn runs
    assert none.startswith("204")


def test_a_message_while_the_conversations_turn_runs_is_refused_and_delete_cancels_it(
    tmp_path: Path,
) -> None:
    chat = Recorded([*RECORDS, FINAL], busy="alice/c1#t9")
    app = app_on(chat, tmp_path)
    status, body = call(app, "POST", "/api/chat", chat_body("Again?"))
    assert status.startswith("409") and "busy" in body
    assert chat.started == []
    status, body = call(app, "GET", "/api/chat/c1/stream")  # the running turn, from its start
    assert status == "200 OK" and body.startswith(": t9 after 0")
    assert call(app, "DELETE", "/api/chat/c1/stream")[0].startswith("204")
    assert chat.cancelled == ["alice/c1#t9"]


def test_durable_chat_and_an_event_log_are_refused_together(tmp_path: Path) -> None:
    with SqliteEventLog(tmp_path / "events.db") as log, pytest.raises(ConfigError):
        WebApp(
            lambda s: Agent(LlmClient("http://127.0.0.1:9", "t")),
            streams=log,
            durable_chat=Recorded([]),
        )
