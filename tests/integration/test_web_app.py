"""The web app on a real loopback server (waitress) against the scripted LLM server."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from agent_smith import LlmClient, Runtime, SqliteSession
from agent_smith.web.app import WebApp
from agent_smith.web.serve import WebServer
from tests.support.llm_server import Calls, Chunks, Hold, ScriptedLlmServer, Text, sse_frames
from tests.support.web import (
    NOTES,
    chat_body,
    closing_watched,
    decision_body,
    factory,
    sse_data,
)

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 30


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "conversations.db"


@pytest.fixture
def served(
    no_thread_leak: None, llm_server: ScriptedLlmServer, store: Path, runtime: Runtime
) -> Iterator[str]:
    llm = LlmClient(llm_server.url, "test", runtime=runtime)
    with WebServer(WebApp(factory(llm), sessions=store)).start() as server:
        yield server.url


def post(url: str, body: Any, **kwargs: Any) -> requests.Response:
    return requests.post(url, json=body, timeout=TIMEOUT, **kwargs)


def types(chunks: list[Any]) -> list[str]:
    return [c if isinstance(c, str) else c["type"] for c in chunks]


def deltas(chunks: list[Any]) -> str:
    return "".join(c["delta"] for c in chunks[:-1] if c["type"] == "text-delta")


def test_chat_streams_a_turn_as_a_ui_message_stream(
    served: str, llm_server: ScriptedLlmServer, store: Path
) -> None:
    llm_server.script(
        Calls(("get_weather", {"city": "Paris"})), Text("Sunny today.", reasoning="hm")
    )
    response = post(f"{served}/api/chat", chat_body("c1", "Weather in Paris?"), stream=True)
    assert response.status_code == 200
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.headers["Content-Type"] == "text/event-stream"
    assert response.headers["X-Accel-Buffering"] == "no"
    chunks = sse_data(response)
    assert types(chunks) == [
        "start",
        "start-step",
        "tool-input-start",
        "tool-input-available",
        "tool-output-available",
        "finish-step",
        "start-step",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "text-start",
        "text-delta",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
        "[DONE]",
    ]
    assert chunks[4]["output"] == "Sunny in Paris"
    assert deltas(chunks) == "Sunny today."
    assert chunks[-2]["messageMetadata"]["usage"]["totalTokens"] == 30
    with SqliteSession(store, "local/c1") as session:  # the conversation is in the store
        assert [m.role for m in session.messages()] == ["user", "assistant", "tool", "assistant"]


def test_a_paused_turn_resumes_in_another_worker_process(
    served: str, llm_server: ScriptedLlmServer, store: Path
) -> None:
    NOTES.clear()
    llm_server.script(Calls(("save_note", {"text": "hello"})))
    paused = sse_data(post(f"{served}/api/chat", chat_body("c2", "Note hello"), stream=True))
    request = next(c for c in paused if c["type"] == "tool-approval-request")
    assert paused[-2]["messageMetadata"]["paused"] is True
    assert NOTES == []

    llm_server.script(Text("Saved it."))
    with _worker(llm_server.url, store) as other:  # another process on the same store
        resumed = sse_data(
            post(f"{other}/api/chat", decision_body("c2", request["toolCallId"], True), stream=True)
        )
    assert types(resumed)[:3] == ["start", "tool-approval-response", "tool-output-available"]
    assert "messageId" not in resumed[0]  # continues the client's assistant message
    assert resumed[2]["output"] == "saved: hello"
    assert NOTES == []  # the note was saved in the other process, not here
    with SqliteSession(store, "local/c2") as session:
        assert session.messages()[-1].content == "Saved it."
        assert session.load().paused_turn is None


def test_a_decision_for_an_unknown_or_decided_call_is_refused(
    served: str, llm_server: ScriptedLlmServer
) -> None:
    unknown = post(f"{served}/api/chat", decision_body("nothing", "call_0", True))
    assert unknown.status_code == 409
    assert "nothing waits for approval" in unknown.json()["error"]

    llm_server.script(Calls(("save_note", {"text": "x"})), Text("Done."))
    sse_data(post(f"{served}/api/chat", chat_body("c3", "Note x"), stream=True))
    wrong = post(f"{served}/api/chat", decision_body("c3", "call_9", True))
    assert wrong.status_code == 409
    assert "no call 'call_9' waits" in wrong.json()["error"]
    denied = sse_data(post(f"{served}/api/chat", decision_body("c3", "call_0", False), stream=True))
    assert types(denied)[1:3] == ["tool-approval-response", "tool-output-denied"]
    again = post(f"{served}/api/chat", decision_body("c3", "call_0", True))
    assert again.status_code == 409  # already decided


def test_conversations_are_listed_reloaded_and_deleted(
    served: str, llm_server: ScriptedLlmServer
) -> None:
    llm_server.script(Text("Hi."), Calls(("save_note", {"text": "x"})))
    sse_data(post(f"{served}/api/chat", chat_body("c-1", "First question"), stream=True))
    sse_data(post(f"{served}/api/chat", chat_body("c-2", "Second question"), stream=True))
    listed = requests.get(f"{served}/api/conversations", timeout=TIMEOUT).json()
    assert [(c["id"], c["title"], c["paused"]) for c in listed] == [
        ("c-2", "Second question", True),
        ("c-1", "First question", False),
    ]
    loaded = requests.get(f"{served}/api/conversations/c-2", timeout=TIMEOUT).json()
    assert loaded["waiting"] == ["call_0"]
    tool_part = loaded["messages"][1]["parts"][1]
    assert tool_part["state"] == "approval-requested"
    assert tool_part["approval"] == {"id": "call_0"}
    assert requests.delete(f"{served}/api/conversations/c-1", timeout=TIMEOUT).status_code == 204
    gone = requests.get(f"{served}/api/conversations/c-1", timeout=TIMEOUT)
    assert gone.status_code == 404
    assert gone.json()["error"]


def test_one_user_cannot_read_resume_or_delete_anothers_conversation(
    llm_server: ScriptedLlmServer, store: Path, runtime: Runtime
) -> None:
    llm = LlmClient(llm_server.url, "test", runtime=runtime)

    def authenticate(environ: dict[str, Any]) -> str | None:
        return environ.get("HTTP_X_USER")  # a stand-in for the application's login

    app = WebApp(factory(llm), sessions=store, authenticate=authenticate)
    alice, bob = {"X-User": "alice"}, {"X-User": "bob"}
    with WebServer(app).start() as server:
        url = server.url
        assert post(f"{url}/api/chat", chat_body("c", "hi")).status_code == 401
        llm_server.script(Calls(("save_note", {"text": "secret"})))
        sse_data(
            post(f"{url}/api/chat", chat_body("shared-id", "Alice's"), headers=alice, stream=True)
        )

        assert requests.get(f"{url}/api/conversations", headers=bob, timeout=TIMEOUT).json() == []
        read = requests.get(f"{url}/api/conversations/shared-id", headers=bob, timeout=TIMEOUT)
        assert read.status_code == 404
        resume = post(f"{url}/api/chat", decision_body("shared-id", "call_0", True), headers=bob)
        assert resume.status_code == 409
        requests.delete(f"{url}/api/conversations/shared-id", headers=bob, timeout=TIMEOUT)

        mine = requests.get(f"{url}/api/conversations/shared-id", headers=alice, timeout=TIMEOUT)
        assert mine.status_code == 200  # Bob's delete removed only his own (empty) one
        assert mine.json()["waiting"] == ["call_0"]


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"Origin": "https://evil.example"}, "Origin https://evil.example is not this site"),
        ({"Sec-Fetch-Site": "cross-site"}, "Sec-Fetch-Site: cross-site"),
    ],
)
def test_cross_site_posts_are_refused(served: str, headers: dict[str, str], reason: str) -> None:
    response = post(f"{served}/api/chat", chat_body("c", "hi"), headers=headers)
    assert response.status_code == 403
    assert reason in response.json()["error"]
    delete = requests.delete(f"{served}/api/conversations/c", headers=headers, timeout=TIMEOUT)
    assert delete.status_code == 403


def test_same_origin_posts_and_allowed_origins_pass(
    served: str, llm_server: ScriptedLlmServer
) -> None:
    llm_server.script(Text("ok"))
    host = served.removeprefix("http://")
    same = {"Origin": served, "Sec-Fetch-Site": "same-origin", "Host": host}
    assert post(f"{served}/api/chat", chat_body("c", "hi"), headers=same).status_code == 200


@pytest.mark.parametrize(
    ("body", "content_type", "status", "message"),
    [
        (b"{not json", "application/json", 400, "not valid JSON"),
        (b"[]", "application/json", 400, "must be a JSON object"),
        (b'{"id": "c", "messages": []}', "application/json", 400, "'messages' must be"),
        (
            b'{"id": "../x", "messages": [{"role": "user", "parts": [{"type": "text", "text": "a"}]}]}',  # noqa: E501
            "application/json",
            400,
            "conversation id",
        ),
        (
            b'{"id": "c", "messages": [{"role": "system", "parts": []}]}',
            "application/json",
            400,
            "must come from the user",
        ),
        (b"q=hi", "application/x-www-form-urlencoded", 415, "must be application/json"),
        (b"{}" + b" " * 20_000_001, "application/json", 413, "over 20000000 bytes"),
    ],
)
def test_malformed_input_gets_a_json_error(
    served: str, body: bytes, content_type: str, status: int, message: str
) -> None:
    response = requests.post(
        f"{served}/api/chat", data=body, headers={"Content-Type": content_type}, timeout=TIMEOUT
    )
    assert response.status_code == status
    assert response.headers["Content-Type"] == "application/json"
    assert message in response.json()["error"]


def test_agui_bad_input_and_unknown_routes(served: str) -> None:
    bad = post(f"{served}/api/agui", {"threadId": "t", "runId": "r", "messages": []})
    assert bad.status_code == 400
    assert "last message must be the user's" in bad.json()["error"]
    assert requests.get(f"{served}/api/nothing", timeout=TIMEOUT).status_code == 404
    wrong = requests.get(f"{served}/api/chat", timeout=TIMEOUT)
    assert wrong.status_code == 405
    assert wrong.headers["Allow"] == "POST"


def test_a_client_that_disconnects_mid_stream_cancels_its_turn(
    no_thread_leak: None, llm_server: ScriptedLlmServer, store: Path, runtime: Runtime
) -> None:
    closed = threading.Event()
    llm = LlmClient(llm_server.url, "test", runtime=runtime)
    app = WebApp(closing_watched(llm, closed), sessions=store)
    environs: list[dict[str, Any]] = []

    def recording(environ: dict[str, Any], start_response: Any) -> Any:
        environs.append(environ)
        return app(environ, start_response)

    resume, never = threading.Event(), threading.Event()
    frames = list(sse_frames(Text("word " * 400), {}))
    # A few words; the model waits for `resume`, then writes more to an app whose client
    # is gone, then waits for `never` (set only when the LLM server stops): only a
    # cancelled turn ends.
    llm_server.script(Chunks(*frames[:3], resume, *frames[3:50], never, *frames[50:]))
    with WebServer(recording).start() as server:
        host, port = server.url.removeprefix("http://").split(":")
        body = json.dumps(chat_body("gone", "hi")).encode()
        with socket.create_connection((host, int(port)), timeout=TIMEOUT) as sock:
            sock.sendall(
                b"POST /api/chat HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
            )
            received = b""
            while b"text-delta" not in received:
                received += sock.recv(65536)
        # waitress offers a flag, not an event: wait (bounded) until it saw the client go.
        disconnected = environs[0]["waitress.client_disconnected"]
        deadline = time.monotonic() + TIMEOUT
        while not disconnected():
            assert time.monotonic() < deadline, "waitress did not notice the client leave"
            resume.wait(0.01)
        resume.set()
        assert closed.wait(TIMEOUT), "the turn did not end after the client went away"
        assert not never.is_set()
        with SqliteSession(store, "local/gone") as session:
            said = session.messages()
            assert [m.role for m in said] == ["user"], len(said[-1].content)  # no reply recorded
        llm_server.script(Text("Still here."))
        again = sse_data(post(f"{server.url}/api/chat", chat_body("gone", "again"), stream=True))
        assert types(again)[-2:] == ["finish", "[DONE]"]  # the conversation is free again


class _worker:
    """A WebApp on ``store`` in a child process: another worker of the same application."""

    def __init__(self, llm_url: str, store: Path) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.web", llm_url, str(store)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    def __enter__(self) -> str:
        assert self._proc.stdout is not None
        ready, _, _ = select.select([self._proc.stdout], [], [], 60)
        assert ready, "the worker process did not start"
        line = self._proc.stdout.readline().decode().strip()
        assert line.startswith("URL "), line
        return line.removeprefix("URL ")

    def __exit__(self, *exc: object) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        try:
            self._proc.wait(30)
        finally:
            if self._proc.poll() is None:
                self._proc.kill()
                self._proc.wait()
            if self._proc.stdout is not None:
                self._proc.stdout.close()


def test_a_second_turn_on_a_busy_conversation_gets_an_error_not_a_mix(
    served: str, llm_server: ScriptedLlmServer
) -> None:
    gate = threading.Event()
    hold = Hold(gate, Text("First answer."))
    llm_server.script(hold)
    first: list[Any] = []
    thread = threading.Thread(
        target=lambda: first.extend(
            sse_data(post(f"{served}/api/chat", chat_body("b", "one"), stream=True))
        )
    )
    thread.start()
    try:
        assert hold.reached.wait(TIMEOUT)  # the first turn holds the conversation
        second = sse_data(post(f"{served}/api/chat", chat_body("b", "two"), stream=True))
    finally:
        gate.set()
        thread.join(TIMEOUT)
    assert types(second) == ["start", "error", "[DONE]"]
    assert "busy" in second[1]["errorText"]
    assert deltas(first) == "First answer."


def test_agui_refuses_an_answer_to_an_interrupt_that_does_not_wait(
    served: str, llm_server: ScriptedLlmServer
) -> None:
    resume = [{"interruptId": "call_0", "status": "resolved", "payload": {"approved": True}}]
    body = {"threadId": "t9", "runId": "r1", "messages": [], "resume": resume}
    refused = post(f"{served}/api/agui", body)
    assert refused.status_code == 409
    assert "nothing waits for approval" in refused.json()["error"]
