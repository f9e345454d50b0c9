"""A process that works the durable queues ``turns`` and ``batch`` (tests/durable/test_queues.py).

    python -m tests.durable.queue_worker DATABASE WORKDIR

It launches an engine working both queues (at most two at once across every
worker process), writes ``WORKDIR/ready.<pid>`` and works until
``WORKDIR/stop`` appears. Its agent ``desk`` calls ``work(task)`` once per turn;
``work`` counts the calls running at once, over every process, in
``WORKDIR/gauge.sqlite`` (:class:`Gauge`), and holds each for a moment so
that they overlap. Its agent ``clerk`` calls ``file_claim(task)``, which a
person approves first.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from agent_smith import Agent, TestModel, tool
from agent_smith.durable import DurableAgent, DurableEngine
from agent_smith.llm.request import LlmRequest
from agent_smith.llm.testing import Reply, call

#: At most this many turns (or batch calls) run at once across the worker processes.
LIMIT = 2
#: How long a call holds its place, so that calls overlap (seconds).
HOLD = 0.3
#: How long a worker works at most before it gives up.
WORK_WAIT = 120.0


class Gauge:
    """How many calls run at once, and the most there ever were, across processes."""

    def __init__(self, path: Path) -> None:
        self._path = path
        with self._connect() as db:
            db.execute("CREATE TABLE IF NOT EXISTS gauge (running INTEGER, peak INTEGER)")
            if db.execute("SELECT count(*) FROM gauge").fetchone()[0] == 0:
                db.execute("INSERT INTO gauge VALUES (0, 0)")

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self._path, timeout=30, isolation_level="IMMEDIATE")

    def hold(self) -> None:
        with self._connect() as db:
            db.execute("UPDATE gauge SET running = running + 1, peak = max(peak, running + 1)")
        threading.Event().wait(HOLD)
        with self._connect() as db:
            db.execute("UPDATE gauge SET running = running - 1")

    def peak(self) -> int:
        with self._connect() as db:
            return int(db.execute("SELECT peak FROM gauge").fetchone()[0])


def replies(tool_name: str) -> Callable[[LlmRequest], Reply]:
    """A model that calls ``tool_name`` on the user's task, then answers with its result."""

    def reply(request: LlmRequest) -> Reply:
        last = request.messages[-1]
        if last.role == "user":
            return call(tool_name, task=last.content)
        return f"{last.content} in {os.getpid()}"

    return reply


def main(database: str, workdir: Path) -> None:
    gauge = Gauge(workdir / "gauge.sqlite")

    @tool
    def work(task: str) -> str:
        """Work on a task."""
        gauge.hold()
        return f"worked on {task}"

    @tool(requires_approval=True)
    def file_claim(task: str) -> str:
        """File a claim (a person approves it first)."""
        return f"filed {task}"

    desk = Agent(TestModel(respond=replies("work")), tools=[work], name="desk")
    clerk = Agent(TestModel(respond=replies("file_claim")), tools=[file_claim], name="clerk")
    with DurableEngine(database) as engine:
        engine.work_queue("turns", concurrency=LIMIT)
        engine.work_queue("batch", concurrency=LIMIT)
        DurableAgent(desk, engine)
        DurableAgent(clerk, engine)
        engine.launch()
        (workdir / f"ready.{os.getpid()}").write_text("")
        stop = threading.Event()
        for _ in range(int(WORK_WAIT / 0.1)):
            if (workdir / "stop").exists():
                return
            stop.wait(0.1)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
