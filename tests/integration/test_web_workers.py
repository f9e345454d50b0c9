"""The web app on many gunicorn workers sharing one store: any worker serves any request.

Real gunicorn masters with two worker processes each (sync and gthread
workers), SQLite sessions and a SQLite event log on one host. With sync
workers a stream holds its worker, so while one is held open every other
request lands on the other worker: the tests use that to send a request to
"another worker" deterministically; with gthread workers they retry until
the kernel hands the request to the other one.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.support.llm_server import Calls, ScriptedLlmServer, Text
from tests.support.resume import gated_text, get, kinds, post, sse_events, text_of
from tests.support.web import NOTES, chat_body, decision_body
from tests.support.wsgi_servers import gunicorn

pytest.importorskip("gunicorn")


@pytest.fixture(params=["sync", "gthread"])
def served(
    request: pytest.FixtureRequest, llm_server: ScriptedLlmServer, tmp_path: Path
) -> Iterator[str]:
    with gunicorn(
        llm_url=llm_server.url,
        sessions=str(tmp_path / "c.db"),
        events=str(tmp_path / "events.db"),
        worker_class=request.param,
        log=tmp_path / "gunicorn.log",
    ) as url:
        yield url


def pid(response: requests.Response) -> str:
    return response.headers["X-Worker-Pid"]


def on_another_worker(than: str, send: Any, *, tries: int = 40) -> requests.Response:
    """``send()`` until a worker other than ``than`` answers (only reads may be retried)."""
    for _ in range(tries):
        answer: requests.Response = send()
        if pid(answer) != than:
            return answer
        answer.close()
    raise AssertionError(f"every request landed on worker {than}")


def test_a_paused_turn_is_resumed_by_whichever_worker_gets_the_decision(
    served: str, llm_server: ScriptedLlmServer
) -> None:
    NOTES.clear()
    llm_server.script(Calls(("save_note", {"text": "hello"})))
    paused_response = post(f"{served}/api/chat", chat_body("c1", "Note hello"))
    paused = sse_events(paused_response)
    request = next(
        d for _, d in paused if isinstance(d, dict) and d["type"] == "tool-approval-request"
    )
    first = pid(paused_response)
    listed = on_another_worker(first, lambda: get(f"{served}/api/conversations/c1"))
    assert listed.json()["waiting"] == [request["toolCallId"]]  # the other worker sees it

    llm_server.script(Text("Saved it, all done."))
    resumed = sse_events(
        post(f"{served}/api/chat", decision_body("c1", request["toolCallId"], True))
    )
    assert kinds(resumed)[:3] == ["start", "tool-approval-response", "tool-output-available"]
    assert [d for _, d in resumed if isinstance(d, dict)][2]["output"] == "saved: hello"
    assert kinds(resumed)[-1] == "[DONE]"
    conversation = get(f"{served}/api/conversations/c1").json()
    assert conversation["waiting"] == []
    assert NOTES == []  # saved in a gunicorn worker, not in this process


def test_a_stream_resumes_on_another_worker_after_the_client_dropped(
    served: str, llm_server: ScriptedLlmServer
) -> None:
    gate = threading.Event()
    llm_server.script(gated_text("Every word arrives exactly once.", gate))
    response = post(f"{served}/api/chat", chat_body("c2", "Say it"))
    runner = pid(response)
    first = sse_events(response, stop_after=4)
    assert kinds(first)[-1] == "text-delta"
    last_id = first[-1][0] or ""
    resumed = on_another_worker(
        runner, lambda: get(f"{served}/api/chat/c2/stream", **{"Last-Event-ID": last_id})
    )
    gate.set()
    rest = sse_events(resumed)
    whole = first + rest
    ids = [i for i, _ in whole if i]
    assert len(ids) == len(set(ids))
    text = text_of(whole)
    assert text == "Every word arrives exactly once."
    assert kinds(whole)[-1] == "[DONE]"


def test_a_stream_whose_worker_was_killed_ends_with_an_error_and_the_conversation_goes_on(
    served: str, llm_server: ScriptedLlmServer
) -> None:
    gate = threading.Event()
    llm_server.script(gated_text("This reply dies with its worker.", gate), Text("Back again."))
    response = post(f"{served}/api/chat", chat_body("c3", "Go"))
    runner = pid(response)
    first = sse_events(response, stop_after=4)
    os.kill(int(runner), signal.SIGKILL)  # the worker running the turn
    gate.set()
    rest = sse_events(get(f"{served}/api/chat/c3/stream", **{"Last-Event-ID": first[-1][0] or ""}))
    errors = [d["errorText"] for _, d in rest if isinstance(d, dict) and d["type"] == "error"]
    assert errors and "stopped before the end" in errors[0]
    assert kinds(rest)[-1] == "[DONE]"
    again = sse_events(post(f"{served}/api/chat", chat_body("c3", "Again")))
    text = text_of(again)
    assert text == "Back again."  # the dead worker's claim on the conversation was taken over
