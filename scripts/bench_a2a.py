#!/usr/bin/env python3
"""Benchmark: what A2A adds to a turn, and 50 concurrent streaming tasks, both sides ours.

The served agent (``WebApp(..., a2a=True)`` on a SQLite session store in
``/dev/shm``, served by ``WebServer``: waitress) runs on a
:class:`~agent_smith.TestModel` that answers at once (``--words`` words,
streamed word by word), so the figures are the framework's, not a model's.
As a user deploys it, the server runs in a process of its own (this script,
started as a child with ``--serve``, on 127.0.0.1; stopped and reaped at
the end) and the caller, :class:`~agent_smith.A2AClient`, in this one.
``--in-process`` serves from this process instead (both sides then share
one interpreter lock).

Framework time per message: what a caller pays to reach the agent over A2A
beyond what the agent's own turn costs. Two things alternate,
``--messages`` times per binding (JSON-RPC, HTTP+JSON) and mode (blocking
``SendMessage``, streaming ``SendStreamingMessage`` read to its final
status):

* the agent's own turn as an in-process caller pays for it, run *in the
  server's process* (a session of a new conversation opened, the agent
  built on it, ``agent.send(text)`` or ``agent.stream(text)`` read to its
  end, closed), timed there: wall time and that process's CPU time;
* the same message sent with ``A2AClient`` to the served agent (a new task
  in a new context: the server does that same turn). The round trip is
  the caller's wall time from the call to the answer in its hands (``send``
  returned the task; a stream's final status read). The server sends the
  answer (or the final status) only once the turn's session and agent are
  closed, so the round trip holds the whole own turn. Its CPU time is both
  sides': this process's during the round trip plus the server process's
  from the own turn's end until the server has closed the request's
  response (asked after the round trip, so it does not delay it).

Framework time = the round trip's p50 - the own turn's p50, in wall time and
in CPU time (what other work on the machine disturbs least). Alternating
keeps the two under the same load; the budget is 2 ms. Before each own turn
the server has finished the previous request, so nothing of it is left.

Concurrency. ``--concurrent`` threads (default 50) each stream one task at
once, ``--rounds`` times; the agent's model waits ``--hold`` seconds before
answering, so every task of a round is open at the same time (the server
counts the peak). Every task must end ``TASK_STATE_COMPLETED`` with the
exact text; anything else is an error, and errors are counted.

    python scripts/bench_a2a.py [--messages 1000] [--concurrent 50] [--rounds 4] [--in-process]

Two cores shared with other work make single runs noisy: compare p50s.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any, Protocol

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


class Served:
    """The agent (a TestModel answering at once), its SQLite store, and its web app over A2A."""

    def __init__(self, store: str, words: int, hold: float) -> None:
        from agent_smith import TestModel, WebApp
        from agent_smith.llm.request import LlmRequest
        from agent_smith.messages import UserMessage
        from agent_smith.sessions.store import SessionStore

        self.reply = " ".join(["word"] * words)
        self.lock = threading.Lock()
        self.flight = {"now": 0, "peak": 0}
        self._pause = threading.Event()

        def respond(request: LlmRequest) -> str:
            last = request.messages[-1]
            if isinstance(last, UserMessage) and last.text.startswith("slow"):
                with self.lock:
                    self.flight["now"] += 1
                    self.flight["peak"] = max(self.flight["peak"], self.flight["now"])
                self._pause.wait(hold)
                with self.lock:
                    self.flight["now"] -= 1
            return self.reply

        self.model = TestModel(respond=respond)
        self.sessions = SessionStore(store)  # the app's and the own turns' alike
        self.app = Finished(WebApp(self.build, sessions=self.sessions.open, a2a=True))

    def build(self, session: Any) -> Any:
        from agent_smith import Agent

        return Agent(self.model, "You help.", session=session)

    def own_turn(self, n: int, *, streaming: bool) -> tuple[float, float]:
        """The agent's own turn as an in-process caller pays for it (wall, CPU; s)."""
        start = clock()
        with self.sessions.open(f"own-{n}") as session, self.build(session) as agent:
            if streaming:
                for _ in agent.stream("hello"):
                    pass
            else:
                agent.send("hello")
        self.model.requests.clear()
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
        body = self.app(environ, start_response)
        if isinstance(body, list):  # a whole answer: the app's work is done; and a list
            self.closed()  # it stays, so waitress sends its length and keeps the connection
            return body
        return _Closing(body, self)

    def closed(self) -> None:
        with self.changed:
            self.count += 1
            self.changed.notify_all()

    def settle(self) -> None:
        """Until every request taken was finished (60 s at most)."""
        with self.changed:
            if not self.changed.wait_for(lambda: self.count >= self.started, 60):
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
    """Now: wall time, and this process's CPU time."""
    return time.perf_counter(), time.process_time()


def since(start: tuple[float, float]) -> tuple[float, float]:
    wall, cpu = clock()
    return wall - start[0], cpu - start[1]


class Server(Protocol):
    """The served agent, wherever it runs: what the measurements ask of it."""

    url: str

    def own_turn(self, n: int, *, streaming: bool) -> tuple[float, float]: ...

    def settle(self) -> float:
        """Wait until the server finished every request; its CPU time (s) not counted yet."""
        ...

    def peak(self) -> int: ...


class InProcess:
    """The server in this process: its CPU time is this process's, counted by the caller."""

    def __init__(self, served: Served, url: str) -> None:
        self.served, self.url = served, url

    def own_turn(self, n: int, *, streaming: bool) -> tuple[float, float]:
        return self.served.own_turn(n, streaming=streaming)

    def settle(self) -> float:
        self.served.app.settle()
        return 0.0

    def peak(self) -> int:
        return self.served.flight["peak"]


class Child:
    """The server in a child process (this script with ``--serve``), driven over its stdin."""

    def __init__(self, store: str, args: argparse.Namespace) -> None:
        command = [sys.executable, __file__, "--serve", store, str(args.words), str(args.hold)]
        self.process = subprocess.Popen(
            [*command, str(args.concurrent + 16)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            self.url = self._line()
        except BaseException:
            self.close()
            raise

    def _line(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the server process ended (exit status {self.process.wait()})")
        return line.strip()

    def ask(self, command: str) -> list[float]:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return [float(value) for value in self._line().split()]

    def own_turn(self, n: int, *, streaming: bool) -> tuple[float, float]:
        wall, cpu = self.ask(f"own {n} {int(streaming)}")
        return wall, cpu

    def settle(self) -> float:
        return self.ask("settle")[0]

    def peak(self) -> int:
        return int(self.ask("peak")[0])

    def close(self) -> None:
        """Stop the server and reap the process (killed if it does not stop within 30 s)."""
        if self.process.stdin is not None:
            self.process.stdin.close()  # end of input: the server stops
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


def serve(store: str, words: int, hold: float, threads: int) -> None:
    """The child: serve the agent, print the URL, answer the parent's commands until stdin ends."""
    from agent_smith import WebServer

    served = Served(store, words, hold)
    with WebServer(served.app, threads=threads).start() as server:
        answer(served, server.url, sys.stdin, sys.stdout)
    served.sessions.close()


def answer(served: Served, url: str, commands: IO[str], out: IO[str]) -> None:
    """Say ``url``, then answer each command line (``own N 0|1``, ``settle``, ``peak``)."""
    out.write(url + "\n")
    out.flush()
    mark = time.process_time()
    for line in commands:
        words = line.split()
        reply: tuple[float, ...]
        if words[0] == "own":
            reply = served.own_turn(int(words[1]), streaming=words[2] == "1")
        elif words[0] == "settle":
            served.app.settle()
            reply = (time.process_time() - mark,)
        else:  # peak
            reply = (served.flight["peak"],)
        out.write(" ".join(map(str, reply)) + "\n")
        out.flush()
        mark = time.process_time()


def message_times(server: Server, binding: str, streaming: bool, count: int) -> Any:
    """``count`` own turns (wall, CPU) and A2A round trips (wall, the caller's CPU, the
    server's CPU; s), alternating."""
    from agent_smith import A2AClient
    from agent_smith.a2a.wire import StatusUpdate, TaskView, text_message

    client = A2AClient(server.url, binding=binding)
    client.card()
    server.settle()
    own, remote = [], []
    for n in range(count):
        own.append(server.own_turn(n, streaming=streaming))
        start = clock()
        if streaming:
            last = list(client.stream(text_message("hello")))[-1]
            state = last.state if isinstance(last, StatusUpdate | TaskView) else ""
        else:
            task = client.send(text_message("hello"))
            state = task.state if isinstance(task, TaskView) else ""
        wall, cpu = since(start)
        remote.append((wall, cpu, server.settle()))
        if state != "TASK_STATE_COMPLETED":
            raise RuntimeError(f"a task ended {state!r}")
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
    if sys.argv[1:2] == ["--serve"]:
        store, words, hold, threads = sys.argv[2:6]
        serve(store, int(words), float(hold), int(threads))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=1000, help="per binding and mode")
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--words", type=int, default=20, help="words per reply")
    parser.add_argument("--concurrent", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--hold", type=float, default=1.0, help="the model's wait (s) per task")
    parser.add_argument(
        "--in-process", action="store_true", help="serve from this process, not a child"
    )
    args = parser.parse_args()
    where = "/dev/shm" if os.path.isdir("/dev/shm") else None  # no disk in the figures
    with tempfile.TemporaryDirectory(dir=where) as tmp:
        store = os.path.join(tmp, "bench.db")
        if args.in_process:
            from agent_smith import WebServer

            served = Served(store, args.words, args.hold)
            with WebServer(served.app, threads=args.concurrent + 16).start() as web:
                results = measure(args, InProcess(served, web.url), served.reply)
            served.sessions.close()
        else:
            child = Child(store, args)
            try:
                results = measure(args, child, " ".join(["word"] * args.words))
            finally:
                child.close()
    report(args, results)


def measure(args: argparse.Namespace, server: Server, reply: str) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for binding in ("JSONRPC", "HTTP+JSON"):
        for streaming in (False, True):
            message_times(server, binding, streaming, args.warmup)
            pairs = message_times(server, binding, streaming, args.messages)
            results[f"{binding} {'stream' if streaming else 'send'}"] = pairs
    durations, errors = [], []
    for _ in range(args.rounds):
        done, failed = concurrent_round(server.url, args.concurrent, reply)
        durations += done
        errors += failed
    results["concurrent"] = (durations, errors, server.peak())
    return results


def report(args: argparse.Namespace, results: dict[str, Any]) -> None:
    def ms(seconds: float) -> str:
        return f"{seconds * 1000:.2f}"

    where = "in this process" if args.in_process else "in a child process"
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores")
    print(
        f"server {where}; {args.messages} messages per row after {args.warmup} warm-up, "
        f"{args.words} words per reply; own turn and A2A round trip alternate"
    )
    for name, times in results.items():
        if name == "concurrent":
            continue
        own, remote = times
        wall = [statistics.median(t[0] for t in times) for times in (own, remote)]
        cpu = [statistics.median(t[1] for t in own), statistics.median(c + s for _, c, s in remote)]
        caller = statistics.median(t[1] for t in remote)
        served = statistics.median(t[2] for t in remote)
        print(
            f"  {name:16} own turn p50 {ms(wall[0])} ms ({ms(cpu[0])} CPU); A2A round trip "
            f"p50 {ms(wall[1])} ms ({ms(cpu[1])} CPU: caller {ms(caller)}, server "
            f"{ms(served)}); framework time p50 {ms(wall[1] - wall[0])} ms "
            f"({ms(cpu[1] - cpu[0])} CPU)"
        )
    durations, errors, peak = results["concurrent"]
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
