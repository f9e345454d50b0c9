"""Helpers for resumable web streams: SSE events with ids, gated replies, a served app.

``python -m tests.support.resume`` is the WSGI module gunicorn and the host
tests serve: ``app`` is a :class:`WebApp` on the sessions and event log the
environment names (``AGENT_SMITH_TEST_LLM``, ``AGENT_SMITH_TEST_SESSIONS``,
``AGENT_SMITH_TEST_EVENTS``: a SQLite path or a ``postgresql://`` URL; or, with
``AGENT_SMITH_TEST_DURABLE`` instead of an event log, durable chat turns on
that database, each worker an engine of its own), with
users from the ``X-User`` header (``local`` without one, as a browser); every
response says which process served it (``X-Worker-Pid``).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable
from typing import Any

import requests

from agent_smith import LlmClient
from agent_smith.sessions.event_log import EventLog, SqliteEventLog
from agent_smith.web.app import WebApp
from tests.support.llm_server import Chunks, ScriptedLlmServer, Text, sse_frames
from tests.support.web import factory, get_weather

SseEvent = tuple[str | None, Any]  # (id, data)
TIMEOUT = 30


def post(url: str, body: Any, user: str = "alice", **headers: str) -> requests.Response:
    """POST ``body`` as ``user`` (the test app's ``X-User``), streaming the answer."""
    return requests.post(
        url, json=body, headers={"X-User": user, **headers}, stream=True, timeout=TIMEOUT
    )


def get(url: str, user: str = "alice", **headers: str) -> requests.Response:
    """GET as ``user``, streaming the answer."""
    return requests.get(url, headers={"X-User": user, **headers}, stream=True, timeout=TIMEOUT)


def sse_events(response: requests.Response, *, stop_after: int | None = None) -> list[SseEvent]:
    """The SSE events of ``response`` as (id, JSON data) — ``[DONE]`` kept as text.

    ``stop_after``: close the response after that many events (a client that
    lost its connection).
    """
    out: list[SseEvent] = []
    event_id: str | None = None
    for line in response.iter_lines():
        if line.startswith(b"id: "):
            event_id = line[4:].decode()
        elif line.startswith(b"data: "):
            data = line[6:].decode()
            out.append((event_id, data if data == "[DONE]" else json.loads(data)))
            event_id = None
            if stop_after is not None and len(out) >= stop_after:
                response.close()
                break
    return out


def kinds(events: Iterable[SseEvent]) -> list[str]:
    return [d if isinstance(d, str) else d["type"] for _, d in events]


def text_of(events: Iterable[SseEvent]) -> str:
    """The text of a UI message stream's ``text-delta`` events."""
    return "".join(
        d["delta"] for _, d in events if isinstance(d, dict) and d["type"] == "text-delta"
    )


def agui_resumed_once(out: dict[str, Any], story: str) -> None:
    """The AG-UI client's run after its drop (``web_resume_client.mjs``'s output) told
    ``story`` whole, once: one RUN_STARTED, then RUN_FINISHED, the text and the result."""
    assert out["firstError"] is not None  # it did lose its connection
    resumed = out["events"][out["beforeResume"] :]
    assert [e["type"] for e in resumed].count("RUN_STARTED") == 1
    assert resumed[-1]["type"] == "RUN_FINISHED"
    text = "".join(e["delta"] for e in resumed if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == story
    assert out["result"] == story


def gated_text(text: str, gate: threading.Event) -> Chunks:
    """A streamed reply that sends its first word, then waits for ``gate`` to send the rest."""
    frames = list(sse_frames(Text(text), {}))
    return Chunks(*frames[:2], gate, *frames[2:])


def model_requested(llm_server: ScriptedLlmServer, count: int) -> None:
    """Wait until the scripted model got ``count`` requests (bounded by a minute)."""
    pause = threading.Event()
    for _ in range(int(60 / 0.05)):
        if len(llm_server.requests) >= count:
            return
        pause.wait(0.05)
    raise AssertionError(f"the model got {len(llm_server.requests)} requests, not {count}")


def running_worker(durable: str) -> int:
    """The pid of the worker whose engine runs the one pending durable turn on the durable
    database ``durable`` (its executor id is ``host:pid:starttime:tag``)."""
    import sqlalchemy as sa

    from agent_smith.durable.engine import database_url, open_database

    database = open_database(database_url(durable))
    schema = "" if database.url.get_backend_name() == "sqlite" else "dbos."
    query = f"SELECT executor_id FROM {schema}workflow_status WHERE status = 'PENDING'"
    try:
        with database.connect() as connection:
            (executor,) = connection.execute(sa.text(query)).one()
    finally:
        database.dispose()
    return int(executor.split(":")[1])


def open_log(where: str) -> EventLog:
    """The event log at ``where``: a PostgreSQL URL or a SQLite file."""
    if where.startswith("postgresql://"):
        from agent_smith.sessions.postgres_event_log import PostgresEventLog

        return PostgresEventLog(where)
    return SqliteEventLog(where)


def _user(environ: dict[str, Any]) -> str:
    return environ.get("HTTP_X_USER") or "local"  # a browser sends no X-User


def _durable_chat(llm: LlmClient, sessions: str) -> Any:
    """A launched engine of this worker on ``AGENT_SMITH_TEST_DURABLE``, and its chat."""
    from agent_smith import Agent
    from agent_smith.durable import DurableChat, DurableEngine, worker_executor_id

    engine = DurableEngine(os.environ["AGENT_SMITH_TEST_DURABLE"], executor_id=worker_executor_id())
    chat = DurableChat(engine, lambda: Agent(llm, "You help.", [get_weather]), sessions=sessions)
    engine.launch()
    return chat


def _served_app() -> Callable[..., Any]:
    llm = LlmClient(os.environ["AGENT_SMITH_TEST_LLM"], "test")
    sessions = os.environ["AGENT_SMITH_TEST_SESSIONS"]  # a file or a postgresql:// URL
    if os.environ.get("AGENT_SMITH_TEST_DURABLE"):
        web = WebApp(
            factory(llm),
            sessions=sessions,
            authenticate=_user,
            durable_chat=_durable_chat(llm, sessions),
        )
    else:
        web = WebApp(
            factory(llm),
            sessions=sessions,
            authenticate=_user,
            streams=open_log(os.environ["AGENT_SMITH_TEST_EVENTS"]),
        )
    pid = str(os.getpid())

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        def start(status: str, headers: list[tuple[str, str]], *exc: Any) -> Any:
            return start_response(status, [*headers, ("X-Worker-Pid", pid)], *exc)

        return web(environ, start)

    return app


if os.environ.get("AGENT_SMITH_TEST_EVENTS") or os.environ.get("AGENT_SMITH_TEST_DURABLE"):
    app = _served_app()
