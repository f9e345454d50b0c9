"""Durable web turns on many gunicorn workers: kill the worker that runs a reply, get it whole.

Real gunicorn masters with two sync workers, each with a durable engine of
its own (an executor id per process) on one database, SQLite and then
PostgreSQL; the conversations in a session store on the same kind of
database. The worker running a turn is killed with SIGKILL while the model
request is in flight; the client reconnects with ``Last-Event-ID``; a
follower notices the dead executor and recovers the turn, which sends the
model request again and completes. The client gets every frame once, the
reply once, and the conversation holds the turn once. The same with the
protocols' own clients (the AI SDK's chat client and AG-UI's HttpAgent, npm),
whose connection drops after the first frame.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests

pytest.importorskip("gunicorn")
pytest.importorskip("dbos")

from tests.integration.peers import require_npm_bin, require_npm_package
from tests.integration.test_web_npm import run_node
from tests.support.llm_server import ScriptedLlmServer, Text
from tests.support.resume import (
    agui_resumed_once,
    gated_text,
    get,
    kinds,
    model_requested,
    post,
    running_worker,
    sse_events,
    text_of,
)
from tests.support.web import chat_body
from tests.support.wsgi_servers import gunicorn


@pytest.fixture(params=["sqlite", "postgres"])
def databases(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """The sessions' and the durable turns' databases: SQLite files, or PostgreSQL."""
    if request.param == "postgres":
        server = request.getfixturevalue("postgres_server")
        return server.new_database(), server.new_database()
    return str(tmp_path / "c.db"), str(tmp_path / "turns.sqlite")


@pytest.fixture
def served(
    databases: tuple[str, str], llm_server: ScriptedLlmServer, tmp_path: Path
) -> Iterator[str]:
    sessions, durable = databases
    with gunicorn(
        llm_url=llm_server.url, sessions=sessions, durable=durable, log=tmp_path / "gunicorn.log"
    ) as url:
        yield url


def said(conversation: requests.Response) -> list[tuple[str, str]]:
    """A stored conversation's messages as (role, text)."""
    messages = conversation.json()["messages"]
    return [
        (m["role"], "".join(p.get("text", "") for p in m["parts"] if p["type"] == "text"))
        for m in messages
    ]


def test_a_reply_whose_worker_was_killed_completes_on_reconnect_once(
    served: str, llm_server: ScriptedLlmServer
) -> None:
    gate = threading.Event()
    llm_server.script(gated_text("Lost with its worker.", gate), Text("The whole reply, once."))
    response = post(f"{served}/api/chat", chat_body("c1", "Say it"))
    runner = response.headers["X-Worker-Pid"]
    first = sse_events(response, stop_after=1)  # the start frame: the turn runs
    assert kinds(first) == ["start"]
    model_requested(llm_server, 1)  # the model request is in flight
    os.kill(int(runner), signal.SIGKILL)
    gate.set()  # the first request's connection is gone with its worker
    rest = sse_events(get(f"{served}/api/chat/c1/stream", **{"Last-Event-ID": first[-1][0] or ""}))
    whole = first + rest
    ids = [i for i, _ in whole if i]
    assert len(ids) == len(whole) == len(set(ids))  # every frame has an id, once
    assert kinds(whole) == [
        "start",
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
        "[DONE]",
    ]
    assert text_of(whole) == "The whole reply, once."
    assert len(llm_server.requests) == 2  # sent again once, by the turn recovered elsewhere
    history = said(get(f"{served}/api/conversations/c1"))
    assert history == [("user", "Say it"), ("assistant", "The whole reply, once.")]


def test_a_durable_turn_resumes_on_any_worker_and_the_next_turn_has_the_history(
    served: str, llm_server: ScriptedLlmServer
) -> None:
    gate = threading.Event()
    llm_server.script(gated_text("First answer.", gate), Text("Second answer."))
    response = post(f"{served}/api/chat", chat_body("c2", "One"))
    first = sse_events(response, stop_after=1)
    model_requested(llm_server, 1)
    gate.set()
    again = sse_events(get(f"{served}/api/chat/c2/stream", **{"Last-Event-ID": first[-1][0] or ""}))
    replay = sse_events(
        get(f"{served}/api/chat/c2/stream", **{"Last-Event-ID": first[-1][0] or ""})
    )
    assert again == replay  # the same frames, the same ids, on every read
    assert text_of(first + again) == "First answer."
    second = sse_events(post(f"{served}/api/chat", chat_body("c2", "Two")))
    assert text_of(second) == "Second answer."
    sent = [m.get("content") for m in llm_server.requests[1]["messages"]]
    assert sent[-3:] == ["One", "First answer.", "Two"]  # the session's history, given to the turn
    history = said(get(f"{served}/api/conversations/c2"))
    assert history == [
        ("user", "One"),
        ("assistant", "First answer."),
        ("user", "Two"),
        ("assistant", "Second answer."),
    ]
    assert get(f"{served}/api/chat/c2/stream").status_code == 204  # no turn runs
    other = get(f"{served}/api/chat/c2/stream", user="bob", **{"Last-Event-ID": first[0][0] or ""})
    assert other.status_code == 404  # another user's turn is not found


STORY = "Once upon a time a worker died and nothing was lost."


@contextmanager
def killing_the_runner(llm_server: ScriptedLlmServer, durable: str) -> Iterator[list[int]]:
    """Script a reply whose first model request hangs, kill the worker that sent it, then let
    the model answer the request sent again: the pid killed, once the block ends."""
    gate = threading.Event()
    llm_server.script(gated_text("Lost with its worker.", gate), Text(STORY))
    killed: list[int] = []

    def kill_the_runner() -> None:
        model_requested(llm_server, 1)  # the model request is in flight
        killed.append(running_worker(durable))
        os.kill(killed[0], signal.SIGKILL)
        gate.set()

    killer = threading.Thread(target=kill_the_runner, name="test-killer")
    killer.start()
    try:
        yield killed
    finally:
        gate.set()
        killer.join()


def test_the_ai_sdk_chat_client_gets_the_whole_reply_once_after_its_worker_was_killed(
    databases: tuple[str, str], served: str, llm_server: ScriptedLlmServer
) -> None:
    require_npm_bin("node")
    require_npm_package("ai")
    with killing_the_runner(llm_server, databases[1]) as killed:
        # The client's connection drops after the start frame; it resumes the stream.
        out = run_node("web_resume_client.mjs", served, "vercel", "story-1", '"type":"start"')
    assert killed
    user, answer = out["messages"]
    assert user["role"] == "user" and answer["role"] == "assistant"
    assert [p["text"] for p in answer["parts"] if p["type"] == "text"] == [STORY]  # once
    assert out["status"] == "ready"
    assert len(llm_server.requests) == 2  # asked again once, by the turn recovered elsewhere
    history = said(get(f"{served}/api/conversations/story-1", user="local"))
    assert history == [("user", "Tell me a story."), ("assistant", STORY)]


def test_the_ag_ui_client_gets_the_whole_reply_once_after_its_worker_was_killed(
    databases: tuple[str, str], served: str, llm_server: ScriptedLlmServer
) -> None:
    require_npm_bin("node")
    require_npm_package("@ag-ui/client")
    with killing_the_runner(llm_server, databases[1]) as killed:
        # The connection drops after RUN_STARTED; the client posts the same run again.
        out = run_node("web_resume_client.mjs", served, "agui", "story-2", "RUN_STARTED")
    assert killed
    agui_resumed_once(out, STORY)
    assert len(llm_server.requests) == 2
    history = said(get(f"{served}/api/conversations/story-2", user="local"))
    assert history == [("user", "Tell me a story."), ("assistant", STORY)]
