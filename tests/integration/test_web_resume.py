"""Resumable web streams on a real server: drop the connection, come back, miss nothing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from agent_smith import LlmClient, Runtime, SqliteEventLog
from agent_smith.web.app import WebApp
from agent_smith.web.serve import WebServer
from tests.integration.peers import require_npm_bin, require_npm_package
from tests.integration.test_web_npm import run_node
from tests.support.llm_server import Calls, ScriptedLlmServer, Text
from tests.support.resume import (
    TIMEOUT,
    agui_resumed_once,
    gated_text,
    get,
    kinds,
    post,
    sse_events,
)
from tests.support.web import chat_body, factory


@pytest.fixture
def served(
    no_thread_leak: None, llm_server: ScriptedLlmServer, tmp_path: Path, runtime: Runtime
) -> Iterator[str]:
    llm = LlmClient(llm_server.url, "test", runtime=runtime)

    def user(environ: dict[str, Any]) -> str | None:
        return environ.get("HTTP_X_USER") or None

    with (
        SqliteEventLog(tmp_path / "events.db") as log,
        WebApp(factory(llm), sessions=tmp_path / "c.db", authenticate=user, streams=log) as app,
        WebServer(app).start() as server,
    ):
        yield server.url


def test_a_client_that_drops_mid_reply_gets_the_rest_once_after_its_last_event_id(
    served: str, llm_server: ScriptedLlmServer
) -> None:
    gate = threading.Event()
    llm_server.script(
        Calls(("get_weather", {"city": "Paris"})), gated_text("Sunny in Paris.", gate)
    )
    first = sse_events(post(f"{served}/api/chat", chat_body("c1", "Weather?")), stop_after=9)
    assert kinds(first)[-1] == "text-delta"  # the first word arrived, then the client went away
    gate.set()
    last_id = first[-1][0]
    assert last_id is not None
    rest = sse_events(get(f"{served}/api/chat/c1/stream", **{"Last-Event-ID": last_id}))
    whole = first + rest
    ids = [event_id for event_id, _ in whole]
    assert len(set(ids)) == len(ids)  # nothing twice
    assert [int(i.rpartition(":")[2]) for i in ids[:-1] if i] == list(range(1, len(ids)))
    text = "".join(d["delta"] for _, d in whole if not isinstance(d, str) and "delta" in d)
    assert text == "Sunny in Paris."  # nothing lost
    assert kinds(whole)[-3:] == ["finish-step", "finish", "[DONE]"]


def test_a_resume_without_an_id_replays_the_running_turn_and_none_once_it_ended(
    served: str, llm_server: ScriptedLlmServer
) -> None:
    gate = threading.Event()
    llm_server.script(gated_text("All good here.", gate))
    first = sse_events(post(f"{served}/api/chat", chat_body("c2", "Hi")), stop_after=3)
    replay = get(f"{served}/api/chat/c2/stream")  # what the AI SDK's resumeStream asks
    assert replay.status_code == 200
    gate.set()
    again = sse_events(replay)
    assert again[: len(first)] == first  # from the very start
    assert kinds(again)[-1] == "[DONE]"
    assert get(f"{served}/api/chat/c2/stream").status_code == 204  # no turn runs now


def test_another_users_or_a_made_up_stream_is_refused(
    served: str, llm_server: ScriptedLlmServer
) -> None:
    gate = threading.Event()
    llm_server.script(gated_text("Secret plans.", gate))
    first = sse_events(post(f"{served}/api/chat", chat_body("c3", "Plans?")), stop_after=3)
    stolen_id = first[-1][0]
    assert stolen_id is not None
    try:
        assert get(f"{served}/api/chat/c3/stream", user="mallory").status_code == 204
        other = get(f"{served}/api/chat/c3/stream", user="mallory", **{"Last-Event-ID": stolen_id})
        assert other.status_code == 404
        forged = get(f"{served}/api/chat/c3/stream", **{"Last-Event-ID": "not-a-turn:1"})
        assert forged.status_code == 404
        malformed = get(f"{served}/api/chat/c3/stream", **{"Last-Event-ID": "x#y"})
        assert malformed.status_code == 400
        cancel = requests.delete(
            f"{served}/api/chat/c3/stream", headers={"X-User": "mallory"}, timeout=TIMEOUT
        )
        assert cancel.status_code == 204  # nothing of mallory's runs: nothing stopped
    finally:
        gate.set()
    rest = sse_events(get(f"{served}/api/chat/c3/stream", **{"Last-Event-ID": stolen_id}))
    assert kinds(rest)[-1] == "[DONE]"


def test_stopping_a_stream_cancels_its_turn_from_any_request(
    served: str, llm_server: ScriptedLlmServer
) -> None:
    gate = threading.Event()
    llm_server.script(gated_text("This never ends.", gate), Text("Fresh start."))
    response = post(f"{served}/api/chat", chat_body("c4", "Go"))
    first = sse_events(response, stop_after=3)
    stop = requests.delete(f"{served}/api/chat/c4/stream", headers={"X-User": "alice"}, timeout=5)
    assert stop.status_code == 204
    gate.set()
    rest = sse_events(get(f"{served}/api/chat/c4/stream", **{"Last-Event-ID": first[-1][0] or ""}))
    assert "the turn was cancelled" in [d.get("errorText") for _, d in rest if isinstance(d, dict)]
    assert kinds(rest)[-1] == "[DONE]"
    again = sse_events(post(f"{served}/api/chat", chat_body("c4", "Again")))
    assert kinds(again)[-1] == "[DONE]"  # the conversation is free for the next turn


def test_an_agui_run_posted_again_follows_that_run_after_its_last_event_id(
    served: str, llm_server: ScriptedLlmServer
) -> None:
    gate = threading.Event()
    llm_server.script(gated_text("Run once only.", gate))
    run = {
        "threadId": "t1",
        "runId": "r1",
        "messages": [{"id": "u1", "role": "user", "content": "Go"}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    }
    first = sse_events(post(f"{served}/api/agui", run), stop_after=4)
    assert kinds(first)[-1] == "TEXT_MESSAGE_CONTENT"
    gate.set()
    rest = sse_events(post(f"{served}/api/agui", run, **{"Last-Event-ID": first[-1][0] or ""}))
    whole = kinds(first + rest)
    assert whole.count("RUN_STARTED") == 1 and whole[-1] == "RUN_FINISHED"
    text = "".join(d["delta"] for _, d in first + rest if d["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == "Run once only."
    assert len(llm_server.requests) == 1  # followed, not run again


# -- the protocols' own clients (npm), whose connection drops mid-reply ---------


@pytest.fixture
def npm_served(
    no_thread_leak: None, llm_server: ScriptedLlmServer, tmp_path: Path, runtime: Runtime
) -> Iterator[tuple[str, threading.Event]]:
    """The app behind a gate on the model's reply that opens once a client comes back."""
    require_npm_bin("node")
    require_npm_package("ai")
    require_npm_package("@ag-ui/client")
    llm = LlmClient(llm_server.url, "test", runtime=runtime)
    came_back = threading.Event()
    posts: list[str] = []

    with (
        SqliteEventLog(tmp_path / "events.db") as log,
        WebApp(factory(llm), sessions=tmp_path / "c.db", streams=log) as app,
    ):

        def watched(environ: dict[str, Any], start_response: Any) -> Any:
            path = environ.get("PATH_INFO", "")
            if path.endswith("/stream") or (path == "/api/agui" and posts):
                came_back.set()  # the client reconnected: let the reply go on
            if path == "/api/agui":
                posts.append(path)
            return app(environ, start_response)

        with WebServer(watched).start() as server:
            yield server.url, came_back


STORY = "Once upon a time a stream was cut and nothing was lost."


def test_the_ai_sdk_chat_client_resumes_a_dropped_stream_with_nothing_lost_or_twice(
    npm_served: tuple[str, threading.Event], llm_server: ScriptedLlmServer
) -> None:
    url, came_back = npm_served
    llm_server.script(gated_text(STORY, came_back))
    out = run_node("web_resume_client.mjs", url, "vercel", "story-1")
    assert out["afterDrop"]["status"] == "error"  # the client saw its connection drop
    user, answer = out["messages"]
    assert user["role"] == "user" and answer["role"] == "assistant"
    texts = [p["text"] for p in answer["parts"] if p["type"] == "text"]
    assert texts == [STORY]  # every word once, in one text part
    assert out["status"] == "ready"
    assert len(llm_server.requests) == 1  # resumed, not asked again


def test_the_ag_ui_client_follows_its_run_again_after_a_drop_with_nothing_lost_or_twice(
    npm_served: tuple[str, threading.Event], llm_server: ScriptedLlmServer
) -> None:
    url, came_back = npm_served
    llm_server.script(gated_text(STORY, came_back))
    out = run_node("web_resume_client.mjs", url, "agui", "story-2")
    agui_resumed_once(out, STORY)
    assert len(llm_server.requests) == 1
