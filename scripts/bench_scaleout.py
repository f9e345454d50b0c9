#!/usr/bin/env python3
"""Benchmark: concurrent streaming conversations over 1, 2 and 4 worker processes, against
this project's web app and, in the same run, a peer's (pydantic-ai on uvicorn).

Both apps answer ``useChat``'s ``POST /api/chat`` with the AI SDK UI message
stream, and both stream the reply of the same model: the scripted
OpenAI-compatible server (scripts/bench_server.py) in a process of its own,
answering at once with ``--words`` words, so the figures are the web tiers'.

* Ours: ``WebApp`` on a SQLite session file shared by the workers (each turn
  is stored; the peer stores nothing), served by gunicorn with ``gthread``
  workers, each with ``clients + 8`` threads: a gthread worker accepts every
  connection it is quick enough to take, not its share, so a worker sized for
  ``clients / workers`` streams queued the surplus behind streams that last a
  whole turn (p99 first event 1.8 s at 4 workers, against 0.27 s with a
  thread for every client; traced with timestamps in gunicorn's worker).
* The peer: pydantic-ai's ``VercelAIAdapter.dispatch_request`` in a Starlette
  app (scripts/peer_chat_app.py) on ``uvicorn --workers N``, run by
  ``--peer-python``: a Python with ``pydantic-ai-slim[openai]``, ``starlette``
  and ``uvicorn`` (not this project's dependencies; without one the peer's
  rows are left out).

The load, from one asyncio process, in two rows per app and worker count:

* closed loop: ``--clients`` conversations going at once for ``--seconds``
  after a warm-up; each posts a new conversation's first message as soon as
  its last stream ended. Each server gets as much work as it can take, so a
  faster one is measured under more load;
* open loop (``--rate``, 0 to leave it out): a new conversation every
  ``1 / rate`` seconds, whoever answers, for the same time: both apps under
  the same offered load (choose a rate both sustain).

Each turn reads its stream to the end. The load starts once every worker has
built its app (each marks itself ready in a folder), not as soon as the port
listens: a worker still importing would hold the first turns, and that is
start-up, not streaming. Time to first event: request sent -> the first
``data:`` line. An error: a status other than 200, a stream that ends without
``[DONE]``, or a failed connection. The turns counted are those that started
in the measured window, each read to its end (the run waits for them). Not
those that ended in it: the closed loop's first ``clients`` turns all start
at once, a burst of its own, and on one worker they lasted longer than the
warm-up, so their start-up first events (1.1-1.3 s) were counted as the
steady state's p99.

``--streams`` gives our app resumable streams (``WebApp(streams=SqliteEventLog(...))``,
a file of its own shared by the workers): every frame is stored before it is sent.

    python scripts/bench_scaleout.py [--clients 200] [--rate 5] [--seconds 20]
        [--workers 1 2 4] [--streams] [--peer-python /path/to/peer/bin/python]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

import bench_server  # noqa: E402

READY_SECONDS = 60.0


# -- our app, as gunicorn loads it ----------------------------------------------------


def ours() -> Any:
    """The WSGI app gunicorn serves: ``bench_scaleout:ours()`` in each worker."""
    from agent_smith import Agent, LlmClient, Runtime, Session, SqliteEventLog, WebApp

    runtime = Runtime()  # one per worker process, for the life of the worker
    llm = LlmClient(os.environ["BENCH_MODEL_URL"], "scripted", runtime=runtime, max_retries=0)

    def build(session: Session) -> Agent:
        return Agent(llm, "You help.", session=session)

    streams = os.environ.get("BENCH_STREAMS")
    log = SqliteEventLog(streams) if streams else None
    app = WebApp(build, sessions=os.environ["BENCH_SESSIONS"], streams=log, dev_ui=False)
    mark_ready()
    return app


def mark_ready() -> None:
    """Say that this worker process has built its app (see :func:`wait_ready`)."""
    Path(os.environ["BENCH_READY_DIR"], str(os.getpid())).touch()


def words_responder(words: int) -> Any:
    from tests.support.llm_server import Text

    reply = " ".join(["word"] * words)
    return lambda body: Text(reply, usage=(10, words))


# -- servers ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_ready(port: int, proc: subprocess.Popen[bytes], ready: str, workers: int) -> None:
    """Until the port listens and ``workers`` processes marked themselves ready in ``ready``."""
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode} before it was ready")
        if len(os.listdir(ready)) >= workers:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    return
        time.sleep(0.1)
    raise SystemExit(f"port {port}: {workers} workers not ready within {READY_SECONDS:.0f} s")


def start_ours(
    workers: int, clients: int, model_url: str, store: str, ready: str, streams: bool
) -> tuple[Any, int]:
    port = free_port()
    threads = clients + 8
    gunicorn = Path(sys.executable).with_name("gunicorn")
    options = ["-k", "gthread", "-w", str(workers), "--threads", str(threads)]
    options += ["--backlog", "2048", "-b", f"127.0.0.1:{port}", "--log-level", "warning"]
    proc = subprocess.Popen(
        [str(gunicorn), "--chdir", str(ROOT / "scripts"), *options, "bench_scaleout:ours()"],
        env={
            **os.environ,
            "BENCH_MODEL_URL": model_url,
            "BENCH_SESSIONS": store,
            "BENCH_READY_DIR": ready,
            **({"BENCH_STREAMS": f"{store}.events"} if streams else {}),
        },
    )
    wait_ready(port, proc, ready, workers)
    return proc, port


def start_peer(python: str, workers: int, model_url: str, ready: str) -> tuple[Any, int]:
    port = free_port()
    options = ["--workers", str(workers), "--port", str(port), "--log-level", "warning"]
    options += ["--backlog", "2048", "--app-dir", str(ROOT / "scripts")]
    proc = subprocess.Popen(
        [python, "-m", "uvicorn", *options, "peer_chat_app:app"],
        env={**os.environ, "PEER_MODEL_URL": model_url, "PEER_READY_DIR": ready},
    )
    wait_ready(port, proc, ready, workers)
    return proc, port


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(30)


# -- the load ---------------------------------------------------------------------------


@dataclass
class Tally:
    """The turns that started inside the measured window: their times, and the errors."""

    window: tuple[float, float]
    first_event: list[float] = field(default_factory=list)
    whole: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)

    def ended(self, started: float, first: float | None, error: str | None) -> None:
        now = time.perf_counter()
        if not self.window[0] <= started <= self.window[1]:
            return
        if error is not None:
            self.errors[error] = self.errors.get(error, 0) + 1
        elif first is not None:
            self.first_event.append(first - started)
            self.whole.append(now - started)


def request_bytes(port: int) -> bytes:
    conversation = uuid.uuid4().hex
    body = json.dumps(
        {
            "id": conversation,
            "trigger": "submit-message",
            "messages": [
                {"id": "m1", "role": "user", "parts": [{"type": "text", "text": "Hello?"}]}
            ],
        }
    ).encode()
    head = (
        f"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        "Content-Type: application/json\r\nAccept: text/event-stream\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


async def one_turn(port: int, tally: Tally) -> None:
    started = time.perf_counter()
    first: float | None = None
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError as err:
        tally.ended(started, None, f"connect: {type(err).__name__}")
        return
    try:
        writer.write(request_bytes(port))
        status = await reader.readline()
        if b" 200 " not in status:
            tally.ended(started, None, status.decode(errors="replace").strip() or "no status")
            return
        tail = b""
        while line := await reader.readline():
            if first is None and line.startswith(b"data:"):
                first = time.perf_counter()
            tail = (tail + line)[-64:]  # only the end matters: [DONE]
        tally.ended(started, first, None if b"[DONE]" in tail else "stream ended early")
    except OSError as err:
        tally.ended(started, first, type(err).__name__)
    finally:
        writer.close()


async def load(port: int, clients: int, seconds: float, warmup: float) -> Tally:
    """Closed loop: ``clients`` conversations going for ``warmup + seconds``; the turns
    that started in the last ``seconds``, each read to its end."""
    begin = time.perf_counter()
    tally = Tally((begin + warmup, begin + warmup + seconds))

    async def client() -> None:
        while time.perf_counter() < tally.window[1]:
            await one_turn(port, tally)

    await asyncio.gather(*(client() for _ in range(clients)))
    return tally


async def paced_load(port: int, rate: float, seconds: float, warmup: float) -> Tally:
    """Open loop: a new conversation every ``1 / rate`` s for ``warmup + seconds``; the
    turns that started in the last ``seconds``, each read to its end."""
    begin = time.perf_counter()
    tally = Tally((begin + warmup, begin + warmup + seconds))
    turns: list[asyncio.Task[None]] = []
    for n in range(int((warmup + seconds) * rate)):
        await asyncio.sleep(max(0.0, begin + n / rate - time.perf_counter()))
        turns.append(asyncio.create_task(one_turn(port, tally)))
    await asyncio.gather(*turns)
    return tally


def ms(values: list[float], q: float) -> str:
    """The ``q`` quantile of ``values`` in whole milliseconds ("-" when there is none)."""
    ordered = sorted(values)
    if not ordered:
        return "-"
    return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e3:.0f}"


# -- the run ----------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--rate", type=float, default=5.0, help="open-loop turns/s (0: none)")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--words", type=int, default=20)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument(
        "--streams", action="store_true", help="ours with resumable streams (SqliteEventLog)"
    )
    parser.add_argument("--peer-python", help="a Python with pydantic-ai, starlette, uvicorn")
    parser.add_argument("--serve-model", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_model is not None:
        bench_server.serve(words_responder(args.serve_model))
        return
    print(f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs")
    print(f"{args.seconds:.0f} s a row, {args.words}-word replies from the scripted model;", end="")
    print(f" load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
    print(
        "| app | workers | load | turns/s | first event p50 (ms) | p99 (ms) "
        "| turn p50 (ms) | errors |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---|")
    loads = [(f"closed, {args.clients} clients", "closed")]
    if args.rate:
        loads.append((f"open, {args.rate:g} turns/s", "open"))
    model, model_url = bench_server.start(__file__, "--serve-model", str(args.words))
    folder = tempfile.mkdtemp(prefix="bench_scaleout-")
    try:
        for workers in args.workers:
            apps = [("agent_smith (gunicorn gthread)", "ours")]
            if args.peer_python:
                apps.append(("pydantic-ai (uvicorn)", "peer"))
            for (name, which), (load_name, mode) in itertools.product(apps, loads):
                ready = tempfile.mkdtemp(dir=folder)
                if which == "ours":
                    store = os.path.join(folder, f"w{workers}-{mode}.db")
                    proc, port = start_ours(
                        workers, args.clients, model_url, store, ready, args.streams
                    )
                else:
                    proc, port = start_peer(args.peer_python, workers, model_url, ready)
                try:
                    if mode == "closed":
                        run = load(port, args.clients, args.seconds, args.warmup)
                    else:
                        run = paced_load(port, args.rate, args.seconds, args.warmup)
                    tally = asyncio.run(run)
                finally:
                    stop(proc)
                errors = sum(tally.errors.values())
                said = ", ".join(f"{k}: {v}" for k, v in tally.errors.items()) or "0"
                print(
                    f"| {name} | {workers} | {load_name} | {len(tally.whole) / args.seconds:.0f} "
                    f"| {ms(tally.first_event, 0.5)} | {ms(tally.first_event, 0.99)} "
                    f"| {ms(tally.whole, 0.5)} | {said if errors else 0} |",
                    flush=True,
                )
        print(f"\nload average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    finally:
        bench_server.stop(model)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
