#!/usr/bin/env python3
"""Benchmark: durable web turns on gunicorn — a turn's time beside the same turn on an event
log, and the time to take over the turn of a killed worker.

The test app of ``tests/support/resume.py`` on gunicorn with two sync workers,
against the scripted model (``tests/support/llm_server.py``, in this
process), on SQLite files and, with Debian's ``postgresql``, on a private
PostgreSQL server (sessions and durable turns each in a database of their own):

* **turn**: ``POST /api/chat`` -> the last frame (``[DONE]``) of a one-reply
  turn that the model answers at once; with ``durable_chat=`` and with
  ``streams=`` (an event log on the same kind of database), the median of
  ``--runs`` after one warm-up turn;
* **takeover**: the worker running a durable turn is killed (SIGKILL) while the
  model request hangs; a client reconnects with ``Last-Event-ID``; the time from
  the kill to the reply's last frame: the follower's check (at most one second),
  the claim, ``recover``, the replay and the model request sent again.

    python scripts/bench_durable_web.py [--runs 5]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.llm_server import ScriptedLlmServer, Text  # noqa: E402
from tests.support.postgres import running_server  # noqa: E402
from tests.support.resume import (  # noqa: E402
    gated_text,
    get,
    model_requested,
    post,
    running_worker,
    sse_events,
    text_of,
)
from tests.support.web import chat_body  # noqa: E402
from tests.support.wsgi_servers import gunicorn  # noqa: E402

REPLY = "The whole reply, once."


def turn_seconds(url: str, llm: ScriptedLlmServer, conversation: str) -> float:
    """One turn answered at once: POST -> its last frame."""
    llm.script(Text(REPLY))
    started = time.perf_counter()
    events = sse_events(post(f"{url}/api/chat", chat_body(conversation, "Go")))
    took = time.perf_counter() - started
    assert text_of(events) == REPLY and events[-1][1] == "[DONE]", events
    return took


def takeover_seconds(url: str, llm: ScriptedLlmServer, durable: str, conversation: str) -> float:
    """Kill the worker running a turn whose model request hangs: kill -> the last frame."""
    gate = threading.Event()
    llm.script(gated_text("Lost with its worker.", gate), Text(REPLY))
    asked = len(llm.requests)
    first = sse_events(post(f"{url}/api/chat", chat_body(conversation, "Go")), stop_after=1)
    model_requested(llm, asked + 1)
    pid = running_worker(durable)
    killed = time.perf_counter()
    os.kill(pid, signal.SIGKILL)
    gate.set()
    rest = sse_events(
        get(f"{url}/api/chat/{conversation}/stream", **{"Last-Event-ID": first[-1][0] or ""})
    )
    took = time.perf_counter() - killed
    assert text_of(first + rest) == REPLY, rest
    return took


def wait_for_replacement(url: str) -> None:
    """Give gunicorn time to boot the worker that replaces a killed one (and its engine)."""
    threading.Event().wait(3.0)
    for _ in range(100):
        with contextlib.suppress(OSError):
            if get(f"{url}/api/conversations").status_code == 200:
                return
        threading.Event().wait(0.1)


@contextlib.contextmanager
def databases(kind: str, folder: str) -> Iterator[tuple[str, str, str] | None]:
    """(sessions, event log, durable turns) on ``kind``; None without PostgreSQL."""
    if kind == "sqlite":
        yield f"{folder}/c.db", f"{folder}/events.db", f"{folder}/turns.sqlite"
        return
    with running_server() as server:
        if server is None:
            yield None
            return
        yield server.new_database(), server.new_database(), server.new_database()


def median_ms(values: list[float]) -> str:
    low, middle, high = (
        round(v * 1000) for v in (min(values), statistics.median(values), max(values))
    )
    return f"{middle} ms ({low}-{high})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    print(f"{runs} runs each; two sync gunicorn workers; median (min-max)")
    with ScriptedLlmServer() as llm:
        for kind in ("sqlite", "postgres"):
            with tempfile.TemporaryDirectory() as folder, databases(kind, folder) as found:
                if found is None:
                    print(f"{kind}: no PostgreSQL server (apt-get install postgresql)")
                    continue
                sessions, events, durable = found
                with gunicorn(llm_url=llm.url, sessions=sessions, events=events) as url:
                    turn_seconds(url, llm, "warm")
                    logged = [turn_seconds(url, llm, f"e{n}") for n in range(runs)]
                with gunicorn(llm_url=llm.url, sessions=sessions, durable=durable) as url:
                    turn_seconds(url, llm, "warm")
                    lasting = [turn_seconds(url, llm, f"d{n}") for n in range(runs)]
                    taken = []
                    for n in range(runs):
                        taken.append(takeover_seconds(url, llm, durable, f"k{n}"))
                        wait_for_replacement(url)
                print(f"{kind}: turn with streams= (event log)     {median_ms(logged)}")
                print(f"{kind}: turn with durable_chat=            {median_ms(lasting)}")
                print(f"{kind}: killed worker -> reply complete    {median_ms(taken)}")


if __name__ == "__main__":
    main()
