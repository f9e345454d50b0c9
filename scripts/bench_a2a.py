#!/usr/bin/env python3
"""Benchmark: what A2A adds to a turn, and 50 concurrent streaming tasks, both sides ours.

The served agent (``WebApp(..., a2a=True)`` on a SQLite session store in
``/dev/shm``, served by ``WebServer``: waitress, in this process) runs on a
:class:`~agent_smith.TestModel` that answers at once (``--words`` words,
streamed word by word), so the figures are the framework's, not a model's.

Framework time per message. Two things alternate, ``--messages`` times per
binding (JSON-RPC, HTTP+JSON) and mode (blocking ``SendMessage``, streaming
``SendStreamingMessage`` read to the final status): the agent's own turn as
an in-process caller pays for it (a session of a new conversation opened,
the agent built on it, ``agent.send(text)`` or ``agent.stream(text)`` read
to its end, closed), then the same message
sent with :class:`~agent_smith.A2AClient` to the served agent (a new task in
a new context; the server does the same turn). The round trip ends when the
caller has its answer *and* the server has finished the request (its
response body closed: the turn's session and agent closed), as the own turn
ends with them closed; a stream's caller has its last event before the
server is done, and stopping the clock there would leave that work out of
the round trip and put it in the next own turn. Framework time = the round
trip's p50 - the own turn's p50: both sides' share (HTTP on loopback, JSON,
the task, the events translated and read back), in wall time and in this
process's CPU time (both sides run in it; CPU time is what other work on
the machine disturbs least). Alternating keeps the two under the same load;
the budget is 2 ms.

Concurrency. ``--concurrent`` threads (default 50) each stream one task at
once, ``--rounds`` times; the agent's model waits ``--hold`` seconds before
answering, so every task of a round is open at the same time (the server
counts the peak). Every task must end ``TASK_STATE_COMPLETED`` with the
exact text; anything else is an error, and errors are counted.

    python scripts/bench_a2a.py [--messages 1000] [--concurrent 50] [--rounds 4]

Two cores shared with other work make single runs noisy: compare p50s.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


class Served:
    """The agent (a TestModel answering at once), its SQLite store, and its web app over A2A."""

    def __init__(self, store: str, words: int, hold: float) -> None:
        from agent_smith import TestModel
        from agent_smith.llm.request import LlmRequest
        from agent_smith.messages import UserMessage

        self.store, self.hold = store, hold
        self.reply = " ".join(["word"] * words)
        self.lock = threading.Lock()
        self.flight = {"now": 0, "peak": 0}
        self._pause = threading.Event()

        def respond(request: LlmRequest) -> str:
            last = request.messages[-1]
            if isinstance(last, UserMessage) and last.content.startswith("slow"):
                with self.lock:
                    self.flight["now"] += 1
                    self.flight["peak"] = max(self.flight["peak"], self.flight["now"])
                self._pause.wait(hold)
                with self.lock:
                    self.flight["now"] -= 1
            return self.reply

        self.model = TestModel(respond=respond)  # type: ignore[arg-type]

    def build(self, session: Any) -> Any:
        from agent_smith import Agent

        return Agent(self.model, "You help.", session=session)

    def own_turn(self, n: int, *, streaming: bool) -> tuple[float, float]:
        """The agent's own turn as an in-process caller pays for it (wall, CPU; s)."""
        from agent_smith.sessions.sqlite import SqliteSession

        start = clock()
        with SqliteSession(self.store, f"own-{n}") as session, self.build(session) as agent:
            if streaming:
                for _ in agent.stream("hello"):
                    pass
            else:
                agent.send("hello")
        return since(start)


class Finished:
    """The served app, counting the requests it took and those whose response it finished."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.started = self.count = 0
        self.changed = threading.Condition()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        with self.changed:
            self.started += 1
        return _Closing(self.app(environ, start_response), self)

    def closed(self) -> None:
        with self.changed:
            self.count += 1
            self.changed.notify_all()

    def wait(self, count: int) -> None:
        """Until ``count`` requests were finished (60 s at most)."""
        with self.changed:
            if not self.changed.wait_for(lambda: self.count >= count, 60):
                raise RuntimeError("the server did not finish a request within 60 s")


class _Closing:
    """A response body that tells ``finished`` when the server closes it (its chunks untouched)."""

    def __init__(self, body: Any, finished: Finished) -> None:
        self.body, self.finished = body, finished

    def __iter__(self) -> Any:
        return iter(self.body)

    def close(self) -> None:
        try:
            close = getattr(self.body, "close", None)
            if close is not None:
                close()
        finally:
            self.finished.closed()


def clock() -> tuple[float, float]:
    """Now: wall time, and this process's CPU time (both sides' threads: one process)."""
    return time.perf_counter(), time.process_time()


def since(start: tuple[float, float]) -> tuple[float, float]:
    wall, cpu = clock()
    return wall - start[0], cpu - start[1]


def message_times(
    served: Served, finished: Finished, url: str, binding: str, streaming: bool, count: int
) -> Any:
    """The own turns and the A2A round trips (wall, CPU; s) of ``count`` messages, alternating."""
    from agent_smith import A2AClient
    from agent_smith.a2a.wire import StatusUpdate, TaskView, text_message

    client = A2AClient(url, binding=binding)
    client.card()
    own, remote = [], []
    for n in range(count):
        finished.wait(finished.started)  # nothing of the last message left on the server
        own.append(served.own_turn(n, streaming=streaming))
        done = finished.started + 1
        start = clock()
        if streaming:
            last = list(client.stream(text_message("hello")))[-1]
            state = last.state if isinstance(last, StatusUpdate | TaskView) else ""
        else:
            task = client.send(text_message("hello"))
            state = task.state if isinstance(task, TaskView) else ""
        finished.wait(done)
        remote.append(since(start))
        if state != "TASK_STATE_COMPLETED":
            raise RuntimeError(f"a task ended {state!r}")
        served.model.requests.clear()
    return own, remote


def concurrent_round(url: str, threads: int, expected: str) -> tuple[list[float], list[str]]:
    """``threads`` streaming tasks at once: their durations (s) and errors."""
    from agent_smith import A2AClient
    from agent_smith.a2a.wire import ArtifactUpdate, StatusUpdate, text_message

    client = A2AClient(url, timeout=120)
    client.card()
    lock = threading.Lock()
    durations: list[float] = []
    errors: list[str] = []
    go = threading.Barrier(threads)

    def one(n: int) -> None:
        go.wait()
        start = time.perf_counter()
        try:
            items = list(client.stream(text_message(f"slow {n}")))
            text = "".join(i.text for i in items if isinstance(i, ArtifactUpdate))
            states = [i.state for i in items if isinstance(i, StatusUpdate)]
            if states[-1:] != ["TASK_STATE_COMPLETED"] or text != expected:
                raise RuntimeError(f"ended {states[-1:]} with {text[:60]!r}")
        except Exception as err:  # counted: the figure is how many there are
            with lock:
                errors.append(f"{type(err).__name__}: {err}")
            return
        with lock:
            durations.append(time.perf_counter() - start)

    workers = [
        threading.Thread(target=one, args=(n,), name=f"a2a-bench-{n}") for n in range(threads)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return durations, errors


def main() -> None:
    from agent_smith import WebApp, WebServer

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=1000, help="per binding and mode")
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--words", type=int, default=20, help="words per reply")
    parser.add_argument("--concurrent", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--hold", type=float, default=1.0, help="the model's wait (s) per task")
    args = parser.parse_args()
    where = "/dev/shm" if os.path.isdir("/dev/shm") else None  # no disk in the figures
    with tempfile.TemporaryDirectory(dir=where) as tmp:
        served = Served(os.path.join(tmp, "bench.db"), args.words, args.hold)
        app = Finished(WebApp(served.build, sessions=served.store, a2a=True))
        with WebServer(app, threads=args.concurrent + 16).start() as server:
            results = measure(args, served, app, server.url)
    report(args, results, served.flight["peak"])


def measure(
    args: argparse.Namespace, served: Served, finished: Finished, url: str
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for binding in ("JSONRPC", "HTTP+JSON"):
        for streaming in (False, True):
            message_times(served, finished, url, binding, streaming, args.warmup)
            pairs = message_times(served, finished, url, binding, streaming, args.messages)
            results[f"{binding} {'stream' if streaming else 'send'}"] = pairs
    durations, errors = [], []
    for _ in range(args.rounds):
        done, failed = concurrent_round(url, args.concurrent, served.reply)
        durations += done
        errors += failed
    results["concurrent"] = (durations, errors)
    return results


def report(args: argparse.Namespace, results: dict[str, Any], peak: int) -> None:
    def ms(seconds: float) -> str:
        return f"{seconds * 1000:.2f}"

    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores")
    print(
        f"{args.messages} messages per row after {args.warmup} warm-up, {args.words} words "
        "per reply; own turn and A2A round trip alternate"
    )
    for name, (own, remote) in results.items():
        if name == "concurrent":
            continue
        wall = [statistics.median(t[0] for t in times) for times in (own, remote)]
        cpu = [statistics.median(t[1] for t in times) for times in (own, remote)]
        print(
            f"  {name:16} own turn p50 {ms(wall[0])} ms ({ms(cpu[0])} CPU); A2A round trip "
            f"p50 {ms(wall[1])} ms ({ms(cpu[1])} CPU); framework time p50 "
            f"{ms(wall[1] - wall[0])} ms ({ms(cpu[1] - cpu[0])} CPU)"
        )
    durations, errors = results["concurrent"]
    print(
        f"{args.rounds} rounds of {args.concurrent} concurrent streaming tasks "
        f"(model holds {args.hold} s): {len(durations)} completed, {len(errors)} errors, "
        f"peak {peak} tasks in the model at once; "
        f"task p50 {ms(statistics.median(durations))} ms, max {ms(max(durations))} ms"
    )
    for error in errors[:5]:
        print(f"  error: {error}")


if __name__ == "__main__":
    main()
