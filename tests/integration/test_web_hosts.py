"""Two web hosts on one PostgreSQL: conversations, approvals and streams cross.

Each "host" is a server of its own on its own port — one a gunicorn master
with a gthread worker, the other waitress — serving the test app with
PostgreSQL conversations
(:class:`~agent_smith.sessions.postgres.PostgresSession`) and a PostgreSQL
event log; nothing else is shared. A user's conversation is never readable
by another user on either host, and a stream survives the database
restarting under it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.llm_server import Calls, ScriptedLlmServer, Text
from tests.support.postgres import PostgresServer
from tests.support.resume import gated_text, get, kinds, post, sse_events, text_of
from tests.support.web import chat_body, decision_body
from tests.support.wsgi_servers import gunicorn, waitress

pytest.importorskip("gunicorn")
pytest.importorskip("waitress")
pytest.importorskip("psycopg")


@pytest.fixture
def hosts(
    llm_server: ScriptedLlmServer, postgres_url: str, tmp_path: Path
) -> Iterator[tuple[str, str]]:
    llm, pg = llm_server.url, postgres_url
    with (
        gunicorn(
            llm_url=llm,
            sessions=pg,
            events=pg,
            worker_class="gthread",
            workers=1,
            log=tmp_path / "a.log",
        ) as a,
        waitress(llm_url=llm, sessions=pg, events=pg, log=tmp_path / "b.log") as b,
    ):
        yield a, b


def test_a_conversation_begun_on_one_host_goes_on_on_the_other(
    hosts: tuple[str, str], llm_server: ScriptedLlmServer
) -> None:
    a, b = hosts
    llm_server.script(Text("Hello from host A."), Text("And from host B."))
    assert text_of(sse_events(post(f"{a}/api/chat", chat_body("c1", "Hi")))) == (
        "Hello from host A."
    )
    seen = get(f"{b}/api/conversations/c1").json()
    assert [m["role"] for m in seen["messages"]] == ["user", "assistant"]
    assert text_of(sse_events(post(f"{b}/api/chat", chat_body("c1", "Again")))) == (
        "And from host B."
    )
    asked = [m["content"] for m in llm_server.requests[1]["messages"] if m["role"] != "system"]
    assert asked == ["Hi", "Hello from host A.", "Again"]  # B sent the history A wrote


def test_a_turn_paused_on_one_host_is_decided_on_the_other(
    hosts: tuple[str, str], llm_server: ScriptedLlmServer
) -> None:
    a, b = hosts
    llm_server.script(Calls(("save_note", {"text": "hello"})), Text("Saved."))
    paused = sse_events(post(f"{a}/api/chat", chat_body("c2", "Note hello")))
    request = next(
        d for _, d in paused if isinstance(d, dict) and d["type"] == "tool-approval-request"
    )
    assert get(f"{b}/api/conversations/c2").json()["waiting"] == [request["toolCallId"]]
    resumed = sse_events(post(f"{b}/api/chat", decision_body("c2", request["toolCallId"], True)))
    outputs = [d for _, d in resumed if isinstance(d, dict)]
    assert outputs[2]["output"] == "saved: hello"
    assert text_of(resumed) == "Saved."
    assert get(f"{a}/api/conversations/c2").json()["waiting"] == []


def test_a_stream_dropped_on_one_host_is_followed_on_the_other(
    hosts: tuple[str, str], llm_server: ScriptedLlmServer
) -> None:
    a, b = hosts
    gate = threading.Event()
    llm_server.script(gated_text("Every word crosses hosts once.", gate))
    first = sse_events(post(f"{a}/api/chat", chat_body("c3", "Go")), stop_after=4)
    assert kinds(first)[-1] == "text-delta"
    resumed = get(f"{b}/api/chat/c3/stream", **{"Last-Event-ID": first[-1][0] or ""})
    assert resumed.status_code == 200
    gate.set()
    whole = first + sse_events(resumed)
    ids = [i for i, _ in whole if i]
    assert len(ids) == len(set(ids))
    assert text_of(whole) == "Every word crosses hosts once."
    assert kinds(whole)[-1] == "[DONE]"


def test_another_user_reads_nothing_of_a_conversation_on_either_host(
    hosts: tuple[str, str], llm_server: ScriptedLlmServer
) -> None:
    a, b = hosts
    llm_server.script(Text("Alice's secret."))
    events = sse_events(post(f"{a}/api/chat", chat_body("c4", "Tell me")))
    mark = next(i for i, _ in events if i)
    for host in (a, b):
        assert get(f"{host}/api/conversations/c4", user="bob").status_code == 404
        listed = get(f"{host}/api/conversations", user="bob").json()
        assert "c4" not in str(listed)
        stream = get(f"{host}/api/chat/c4/stream", user="bob", **{"Last-Event-ID": mark})
        assert stream.status_code in (204, 404)
        assert b"secret" not in stream.content
        forged = get(f"{host}/api/chat/c4/stream", **{"Last-Event-ID": "made-up:1"})
        assert forged.status_code == 404  # alice's own conversation, a stream that never was
        assert get(f"{host}/api/conversations/c4").status_code == 200  # alice still reads it


def test_a_stream_goes_on_when_postgresql_restarts_under_it(
    hosts: tuple[str, str], llm_server: ScriptedLlmServer, postgres_server: PostgresServer
) -> None:
    a, b = hosts
    gate = threading.Event()
    llm_server.script(gated_text("Nothing is lost when the database restarts.", gate))
    first = sse_events(post(f"{a}/api/chat", chat_body("c5", "Go")), stop_after=4)
    postgres_server.restart()
    gate.set()  # the rest is written after the restart
    rest = sse_events(get(f"{b}/api/chat/c5/stream", **{"Last-Event-ID": first[-1][0] or ""}))
    whole = first + rest
    assert text_of(whole) == "Nothing is lost when the database restarts."
    assert kinds(whole)[-1] == "[DONE]"
    conversation = get(f"{a}/api/conversations/c5").json()
    assert [m["role"] for m in conversation["messages"]] == ["user", "assistant"]
