#!/usr/bin/env python3
"""Benchmark: what durability costs per step and per turn, and how long recovery takes.

One run measures, side by side, on SQLite (a file in a temporary folder) and
on PostgreSQL (a private server on loopback, fsync on, as in production, or
off with ``--no-fsync``; skipped without Debian's postgresql), each with the
engine's default ``synchronous`` and the other one (SQLite ``"normal"`` and
``"full"``; PostgreSQL ``"full"``, the server's ``synchronous_commit=on``, and
``"normal"``, ``synchronous_commit=off`` on the engine's connections):

* ``step``: recording one step's result in the journal (the write each
  model request and each tool call adds), median and p95;
* ``turn``: a 1-tool turn (two model requests, one tool call) on the
  in-process :class:`~agent_smith.llm.testing.TestModel`, plain
  ``Agent.send`` against ``DurableAgent.send``: the difference is the whole
  of durability's cost (the workflow, its start record, three steps);
* ``unused``: the seam a plain turn passes through (the steps in force
  looked up, one tool step reserved and run), per call;
* ``recovery``: a fresh process that finds a turn left pending by a killed
  one: from ``DurableEngine(...)`` to the recovered turn's answer.

    /work/main/.venv/bin/python scripts/bench_durable.py [--turns 200] [--no-postgres | --no-fsync]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dbos import DBOS, SetWorkflowID  # noqa: E402

from agent_smith import Agent, LlmRequest, TestModel, ToolResult, tool  # noqa: E402
from agent_smith.durable.engine import Synchronous  # noqa: E402
from agent_smith.llm.testing import Reply, call  # noqa: E402
from agent_smith.steps import current_steps  # noqa: E402
from tests.support.postgres import running_server  # noqa: E402

TURN = "bench-recovery"


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def respond(request: LlmRequest) -> Reply:
    """A 1-tool turn: a call for a new message, an answer after its result."""
    if request.messages[-1].role == "user":
        return call("add", a=1, b=2)
    return "3"


def fresh(agent: Agent) -> Agent:
    """The agent with an empty history: every measured turn starts a conversation."""
    agent.memory.clear()
    return agent


def timed(fn: Callable[[], object], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def row(name: str, times: list[float], unit: float = 1e3, label: str = "ms") -> None:
    ordered = sorted(times)
    p95 = ordered[int(len(ordered) * 0.95) - 1]
    median = statistics.median(ordered)
    print(f"| {name} | {median * unit:.3f} {label} | {p95 * unit:.3f} {label} |")


@DBOS.workflow(name="bench.empty")
def _empty(value: str) -> str:
    return value


def unused_seam(runs: int) -> list[float]:
    """The plain turn's share of the seam, per tool call."""

    made = call("add", a=1, b=2)
    result = ToolResult("3")

    def once() -> None:
        step = current_steps().tool(made, idempotent=False)
        step(lambda: result)

    batch = 1000
    return [t / batch for t in timed(lambda: [once() for _ in range(batch)], runs)]


Store = tuple[str, Synchronous | None]  # a database and the engine's synchronous


def in_process(turns: int, databases: dict[str, Store]) -> None:
    """The plain turn, then each store's durable figures (``databases``: name -> store)."""
    plain = Agent(TestModel(respond=respond), tools=[add], name="plain")
    for _ in range(20):
        fresh(plain).send("Add 1 and 2.")
    plain_times = timed(lambda: fresh(plain).send("Add 1 and 2."), turns)
    print("| measure | median | p95 |")
    print("| --- | --- | --- |")
    row("1-tool turn, plain", plain_times)
    for name, store in databases.items():
        durable_figures(turns, name, store, statistics.median(plain_times))
    row("unused seam, per tool call", unused_seam(50), 1e9, "ns")


def durable_figures(turns: int, name: str, store: Store, plain: float) -> None:
    """A step's write and the durable turn on ``store``, against ``plain`` (seconds)."""
    from agent_smith.durable import DurableAgent, DurableEngine

    database, synchronous = store
    with DurableEngine(database, synchronous=synchronous) as engine:
        agent = Agent(TestModel(respond=respond), tools=[add], name="durable")
        durable = DurableAgent(agent, engine)
        quiet_agent = Agent(TestModel(respond=respond), tools=[add], name="no-stream")
        quiet = DurableAgent(quiet_agent, engine, event_stream=False)
        engine.launch()
        counter = iter(range(10**9))

        def durable_turn() -> None:
            fresh(agent)
            durable.send("Add 1 and 2.", turn_id=f"turn-{next(counter)}")

        def quiet_turn() -> None:
            fresh(quiet_agent)
            quiet.send("Add 1 and 2.", turn_id=f"turn-{next(counter)}")

        for _ in range(20):
            durable_turn()
            quiet_turn()
        durable_times = timed(durable_turn, turns)
        quiet_times = timed(quiet_turn, turns)
        workflows = iter(range(10**9))

        def empty_workflow() -> None:
            with SetWorkflowID(f"empty-{next(workflows)}"):
                _empty("")

        workflow_times = timed(empty_workflow, turns)
        record = '{"kind":"result","content":"3","error":false,"data":null}'
        steps = iter(range(10**9))
        step_times = timed(
            lambda: engine.journal.done("bench-steps", f"t{next(steps)}", record), turns * 3
        )
    row(f"one step recorded ({name})", step_times)
    row(f"1-tool turn, durable ({name})", durable_times)
    row(f"1-tool turn, durable, no event stream ({name})", quiet_times)
    row(f"an empty DBOS workflow, no steps ({name})", workflow_times)
    extra = statistics.median(quiet_times) - plain
    ours = extra - statistics.median(workflow_times)
    print(f"| durable (no event stream) minus plain, per turn ({name}) | {extra * 1e3:.3f} ms | |")
    print(f"| of which not DBOS's workflow, per record (5) ({name}) | {ours / 5 * 1e3:.3f} ms | |")


def recovery(name: str, store: Store, folder: Path) -> None:
    """Kill a process mid-turn, then time a fresh one until the turn's answer."""
    reached = folder / "reached"
    reached.unlink(missing_ok=True)
    database, synchronous = store
    argv = [sys.executable, __file__, "--child", database, str(reached), synchronous or ""]
    child = subprocess.Popen([*argv, "crash"])
    deadline = time.monotonic() + 120
    while not reached.exists():
        if time.monotonic() > deadline or child.poll() is not None:
            raise SystemExit("the crashing child never reached its tool")
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()
    out = subprocess.run(
        [*argv, "recover"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    print(f"| recovery: engine opened to the turn's answer ({name}) | {out.stdout.strip()} | |")


def child(database: str, reached: str, synchronous: str, mode: str) -> None:
    """A process of the recovery measure: one that is killed in its tool, one that recovers."""
    from agent_smith.durable import DurableAgent, DurableEngine

    @tool(name="add", idempotent=True)
    def slow_add(a: int, b: int) -> int:
        """Add two numbers."""
        if mode == "crash":
            Path(reached).write_text("")
            time.sleep(120)  # killed here
        return a + b

    start = time.perf_counter()
    level: Synchronous | None = {"normal": "normal", "full": "full", "": None}[synchronous]
    with DurableEngine(database, synchronous=level) as engine:
        agent = Agent(TestModel(respond=respond), tools=[slow_add], name="recovering")
        durable = DurableAgent(agent, engine)
        engine.launch()
        launched = time.perf_counter()
        if mode == "crash":
            durable.send("Add 1 and 2.", turn_id=TURN)
        else:
            durable.result(TURN)
            done = time.perf_counter()
            print(f"{(done - start) * 1e3:.0f} ms (launch {(launched - start) * 1e3:.0f} ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--no-postgres", action="store_true", help="measure SQLite alone")
    parser.add_argument("--no-fsync", action="store_true", help="PostgreSQL without fsync")
    parser.add_argument("--child", nargs=4, metavar=("DATABASE", "REACHED", "SYNC", "MODE"))
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, {args.turns} turns\n")
    postgres = (
        contextlib.nullcontext() if args.no_postgres else running_server(fsync=not args.no_fsync)
    )
    with tempfile.TemporaryDirectory() as folder, postgres as server:
        databases: dict[str, Store] = {
            "SQLite": (str(Path(folder) / "bench.sqlite"), None),
            "SQLite, synchronous=full": (str(Path(folder) / "full.sqlite"), "full"),
        }
        if server is not None:
            databases["PostgreSQL"] = (server.new_database(), None)
            databases["PostgreSQL, synchronous=normal"] = (server.new_database(), "normal")
        in_process(args.turns, databases)
        recovery("SQLite", (str(Path(folder) / "recovery.sqlite"), None), Path(folder))
        if server is not None:
            recovery("PostgreSQL", (server.new_database(), None), Path(folder))
            recovery(
                "PostgreSQL, synchronous=normal", (server.new_database(), "normal"), Path(folder)
            )


if __name__ == "__main__":
    main()
