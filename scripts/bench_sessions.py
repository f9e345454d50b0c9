#!/usr/bin/env python3
"""Benchmark: SqliteSession appends, loads, and many worker processes at once.

One run measures:

* ``append``: one message per call (a user message, then a 1 KiB tool
  result), each its own write transaction, in ``synchronous="normal"`` (the
  default) and ``"full"``; median and p99 wall time per call;
* ``open``: a SqliteSession opened on an existing store, a 20-message
  conversation read, the session closed (what a web request per turn pays);
* ``load``: a 10,000-message session (user / assistant tool call / tool
  result / assistant answer, repeated) read with ``session.messages()``, and
  an ``Agent(..., session=...)`` built on it (load + ``strip_orphans`` +
  filling the memory); median of 15, and as ratios taken in each round: the
  load to a floor (one ``json.loads`` of the same rows and the same messages
  built by hand), the Agent to the load;
* ``workers``: 8 processes at once, each running 200 agent turns (a tool
  call and an answer: 4 messages a turn) on its own session of one shared
  file, against the scripted server of tests/support/llm_server.py in this
  process; then every session is read back and checked message by message;
* ``--stores`` instead: append, open and read (the figures above, one
  session each, ``messages()`` alone for the read) through a
  :class:`~agent_smith.sessions.store.SessionStore` on SQLite and on
  PostgreSQL (a private server on loopback with fsync on, as in production,
  or off with ``--no-fsync``: the protocol's cost alone; skipped without
  Debian's postgresql).

    .venv/bin/python scripts/bench_sessions.py [--appends 2000] [--workers 8] [--turns 200]
        [--load-size 10000] [--load-rounds 15] [--only-load | --stores [--no-fsync]]
"""

from __future__ import annotations

import argparse
import json
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bench_server  # noqa: E402

from agent_smith import (  # noqa: E402
    Agent,
    AssistantMessage,
    LlmClient,
    Message,
    Session,
    SessionStore,
    SqliteSession,
    ToolCall,
    ToolMessage,
    UserMessage,
    tool,
)
from tests.support.postgres import running_server  # noqa: E402


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def bench_append(open_session: Callable[[str], Session], count: int) -> tuple[float, float]:
    """Median and p99 (ms) of one append, alternating a short and a 1 KiB message."""
    messages: list[Message] = [
        UserMessage("What is the weather like in Paris today, and should I take an umbrella?"),
        ToolMessage("call_1", "get_weather", "x" * 1024),
    ]
    times: list[float] = []
    with open_session("append") as session:
        for i in range(count + 50):
            started = time.perf_counter()
            session.append(messages[i % 2])
            if i >= 50:  # warm-up: the first appends grow the file
                times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), percentile(times, 0.99)


def bench_open(open_session: Callable[[str], Session], count: int = 200) -> float:
    """Median ms to open a session of an existing store, read it and close it."""
    with open_session("open") as session:
        session.replace(conversation(5))
    times: list[float] = []
    for _ in range(count):
        started = time.perf_counter()
        with open_session("open") as session:
            session.messages()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def bench_read(open_session: Callable[[str], Session], size: int, rounds: int) -> float:
    """Median ms of ``session.messages()`` on a ``size``-message session."""
    with open_session("read") as session:
        session.replace(conversation(size // 4))
        times: list[float] = []
        for _ in range(rounds):
            started = time.perf_counter()
            assert len(session.messages()) == size
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def bench_stores(folder: Path, appends: int, size: int, rounds: int, *, fsync: bool) -> None:
    """SqliteSession beside PostgresSession (a private server on loopback, ``fsync`` on or
    off), each opened through a SessionStore as an application does: the same figures."""
    print("| store | append median | append p99 | open + read 20 + close | read 10,000 |")
    print("| --- | --- | --- | --- | --- |")
    with running_server(fsync=fsync) as server:
        wheres = {"SQLite": str(folder / "stores.db")}
        if server is not None:
            wheres["PostgreSQL"] = server.new_database()
        for name, where in wheres.items():
            with SessionStore(where) as store:
                median, p99 = bench_append(store.open, appends)
                opened = bench_open(store.open)
                read = bench_read(store.open, size, rounds)
            print(f"| {name} | {median:.3f} ms | {p99:.3f} ms | {opened:.3f} ms | {read:.1f} ms |")


def conversation(turns: int) -> list[Message]:
    history: list[Message] = []
    for i in range(turns):
        call = ToolCall(f"call_{i}", "get_weather", {"city": f"City {i}"})
        history += [
            UserMessage(f"Question {i}: what is the weather like in City {i}?"),
            AssistantMessage("", (call,)),
            ToolMessage(call.id, call.name, f"Sunny and {i % 30} °C in City {i}."),
            AssistantMessage(f"It is sunny and {i % 30} °C in City {i}."),
        ]
    return history


def by_hand(row: dict[str, Any]) -> Message:
    """One stored row's message built by hand: no checks, the shapes of ``conversation``."""
    role = row["role"]
    if role == "user":
        return UserMessage(row["content"])
    if role == "tool":
        return ToolMessage(row["tool_call_id"], row["name"], row["content"], row["is_error"])
    calls = tuple(ToolCall(c["id"], c["name"], c["arguments"]) for c in row["tool_calls"])
    return AssistantMessage(row["content"], calls)


def bench_load(folder: Path, size: int, rounds: int) -> dict[str, float]:
    """Milliseconds to read a ``size``-message session and to build an Agent on it.

    Medians of ``rounds`` (wall and CPU time of this process), and the fastest wall
    time: the machine is shared, and the garbage collector runs a full
    collection now and then while tens of thousands of objects are made.
    Each round also takes the floor: one ``json.loads`` of the same rows
    (read beforehand and joined into one array) and the same messages built
    by hand, with the caller's history alive as in the load.
    """
    path = folder / "load.db"
    history = conversation(size // 4)
    with SqliteSession(path, "big") as session:
        session.replace(history)
    with sqlite3.connect(path) as conn:
        bodies = [body for (body,) in conn.execute("SELECT body FROM messages ORDER BY id")]
    conn.close()
    joined = "[" + ",".join(bodies) + "]"
    llm = LlmClient("http://127.0.0.1:9", "unused")  # never called
    names = ("floor", "floor_cpu", "load", "load_cpu", "build", "build_cpu")
    figures: dict[str, list[float]] = {name: [] for name in names}
    ratios: dict[str, list[float]] = {
        "load/floor": [],
        "build/load": [],
        "load/floor_cpu": [],
        "build/load_cpu": [],
    }

    def timed(name: str, work: Callable[[], object]) -> object:
        wall, cpu = time.perf_counter(), time.process_time()
        done = work()
        figures[name].append((time.perf_counter() - wall) * 1000)
        figures[f"{name}_cpu"].append((time.process_time() - cpu) * 1000)
        return done

    with SqliteSession(path, "big") as session:
        for _ in range(rounds):
            built = timed("floor", lambda: [by_hand(row) for row in json.loads(joined)])
            assert built == history
            del built
            loaded = timed("load", session.messages)
            assert loaded == history
            del loaded
            agent = timed("build", lambda: Agent(llm, session=session))
            assert isinstance(agent, Agent) and len(agent.history) == size
            del agent
            # each round's ratios: the three ran back to back, under the same load
            for suffix in ("", "_cpu"):
                load, floor = figures[f"load{suffix}"][-1], figures[f"floor{suffix}"][-1]
                ratios[f"load/floor{suffix}"].append(load / floor)
                ratios[f"build/load{suffix}"].append(figures[f"build{suffix}"][-1] / load)
    result = {name: statistics.median(values) for name, values in figures.items()}
    result |= {name: statistics.median(values) for name, values in ratios.items()}
    result["load_min"] = min(figures["load"])
    result["floor_min"] = min(figures["floor"])
    return result


# -- many worker processes ------------------------------------------------------


def worker(url: str, db: str, index: int, turns: int) -> None:
    """A worker process: wait for the go line, run ``turns`` turns on session ``w<index>``."""

    @tool
    def get_weather(city: str) -> str:
        """Today's weather in a city."""
        return f"Sunny in {city}."

    with SqliteSession(db, f"w{index}") as session:
        agent = Agent(LlmClient(url, "bench", max_retries=0), tools=[get_weather], session=session)
        print("ready", flush=True)
        sys.stdin.readline()
        for turn in range(turns):
            agent.send(f"worker {index} turn {turn}")
    print("done", flush=True)


def bench_workers(folder: Path, workers: int, turns: int) -> tuple[float, int, list[str]]:
    """Seconds for all workers' turns, messages stored, and any problems found."""
    db = folder / "workers.db"
    SqliteSession(db, "setup").close()
    with bench_server.instant_server() as server:  # echo_tools_responder: a call, then its result
        procs = [
            subprocess.Popen(
                [sys.executable, __file__, "--worker", server.url, str(db), str(i), str(turns)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                cwd=ROOT,
            )
            for i in range(workers)
        ]
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        started = time.perf_counter()
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "done"
        elapsed = time.perf_counter() - started
        for proc in procs:
            proc.communicate()
    problems: list[str] = []
    stored = 0
    for i in range(workers):
        with SqliteSession(db, f"w{i}") as session:
            messages = session.messages()
        stored += len(messages)
        expected: list[str] = []
        for turn in range(turns):
            expected += [
                f"worker {i} turn {turn}",
                "",
                "Sunny in Paris.",
                "Result: Sunny in Paris.",
            ]
        if [m.content for m in messages] != expected:
            problems.append(f"session w{i}: {len(messages)} messages, not the {len(expected)} sent")
    with sqlite3.connect(db) as conn:
        (total,) = conn.execute("SELECT COUNT(*) FROM messages").fetchone()
    conn.close()
    if total != stored:
        problems.append(f"{total} rows in the file, {stored} in the sessions")
    return elapsed, stored, problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--load-size", type=int, default=10_000)
    parser.add_argument("--load-rounds", type=int, default=15)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--only-load", action="store_true", help="measure the load alone")
    parser.add_argument(
        "--stores", action="store_true", help="SqliteSession beside PostgresSession"
    )
    parser.add_argument(
        "--no-fsync", action="store_true", help="with --stores: PostgreSQL without fsync"
    )
    args = parser.parse_args()
    if args.worker:
        url, db, index, turns = args.worker
        worker(url, db, int(index), int(turns))
        return
    print(
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, {platform.machine()}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        modes: tuple[Literal["normal", "full"], ...] = ("normal", "full")
        if args.stores:
            bench_stores(
                folder, args.appends, args.load_size, args.load_rounds, fsync=not args.no_fsync
            )
            return
        for synchronous in () if args.only_load else modes:
            path = folder / f"append-{synchronous}.db"
            median, p99 = bench_append(
                lambda sid, path=path, mode=synchronous: SqliteSession(path, sid, synchronous=mode),
                args.appends,
            )
            print(f"append ({synchronous}): median {median:.3f} ms, p99 {p99:.3f} ms")
        if not args.only_load:
            opened = bench_open(lambda sid: SqliteSession(folder / "open.db", sid))
            print(f"open + read 20 messages + close: median {opened:.3f} ms")
        load = bench_load(folder, args.load_size, args.load_rounds)
        print(
            f"load {args.load_size} messages: messages() median {load['load']:.1f} ms "
            f"(CPU {load['load_cpu']:.1f} ms, fastest {load['load_min']:.1f} ms); "
            f"Agent(..., session=...) median {load['build']:.1f} ms "
            f"(CPU {load['build_cpu']:.1f} ms); floor (json.loads + by hand) median "
            f"{load['floor']:.1f} ms (CPU {load['floor_cpu']:.1f} ms, "
            f"fastest {load['floor_min']:.1f} ms)\n"
            f"  medians of each round's ratios: load / floor {load['load/floor']:.2f}x "
            f"(CPU {load['load/floor_cpu']:.2f}x; target < 3x), Agent / load "
            f"{load['build/load']:.2f}x (CPU {load['build/load_cpu']:.2f}x; target <= 1.10x)"
        )
        if args.only_load:
            return
        elapsed, stored, problems = bench_workers(folder, args.workers, args.turns)
        turns = args.workers * args.turns
        print(
            f"{args.workers} workers x {args.turns} turns: {elapsed:.2f} s "
            f"({turns / elapsed:.0f} turns/s), {stored} messages stored, "
            + ("every message present" if not problems else "PROBLEMS: " + "; ".join(problems))
        )


if __name__ == "__main__":
    main()
