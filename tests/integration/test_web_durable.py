"""Durable web turns on many gunicorn workers: kill the worker that runs a reply, get it whole.

Real gunicorn masters with two sync workers, each with a durable engine of
its own (an executor id per process) on one database, SQLite and then
PostgreSQL; the conversations in a session store on the same kind of
database. The worker running a turn is killed with SIGKILL while the model
request is in flight; the client reconnects with ``Last-Event-ID``; a
follower notices the dead executor and recovers the turn, which sends the
model request again and completes. The client gets every frame once, the
reply once, and the conversation holds the turn once.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.support.llm_server import ScriptedLlmServer, Text
from tests.support.resume import gated_text, get, kinds, post, sse_events, text_of
from tests.support.web import chat_body
from tests.support.wsgi_servers import gunicorn

pytest.importorskip("gunicorn")
pytest.importorskip("dbos")

WAIT = 60.0


@pytest.fixture(params=["sqlite", "postgres"])
def served(
    request: pytest.FixtureRequest, llm_server: ScriptedLlmServer, tmp_path: Path
) -> Iterator[str]:
    if request.param == "postgres":
        server = request.getfixturevalue("postgres_server")
        sessions, durable = server.new_database(), server.new_database()
    else:
        sessions, durable = str(tmp_path / "c.db"), str(tmp_path / "turns.sqlite")
    with gunicorn(
        llm_url=llm_server.url,
        sessions=sessions,
        durable=durable,
        log=tmp_path / "gunicorn.log",
    ) as url:
        yield url


def requested(llm_server: ScriptedLlmServer, count: int) -> None:
    """Wait until the model got ``count`` requests."""
    pause = threading.Event()
    for _ in range(int(WAIT / 0.05)):
        if len(llm_server.requests) >= count:
            return
        pause.wait(0.05)
    raise AssertionError(f"the model got {len(llm_server.requests)} requests, not {count}")


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
    requested(llm_server, 1)  # the model request is in flight
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
    requested(llm_server, 1)
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
