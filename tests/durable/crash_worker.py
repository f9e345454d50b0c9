"""A process that runs one durable turn, for the crash tests (tests/durable/test_crash.py).

    python -m tests.durable.crash_worker SCENARIO MODE DATABASE SERVER_URL WORKDIR [SYNCHRONOUS]

DATABASE is a SQLite file or a PostgreSQL URL. MODE ``run`` runs the turn
``turn-1`` to its end; ``crash`` runs it too, but stops at the scenario's kill
point (it writes ``WORKDIR/reached`` and waits there to be killed); ``recover``
launches the engine, which recovers the turn a killed process left, and waits
for it (approving the waiting call of the ``approval`` scenario from this
process). These three are the process ``host-a`` (its executor id), one
process restarted. ``takeover`` is another process, ``host-b``, running beside
them: launched, it writes ``WORKDIR/standing-by``, waits for ``WORKDIR/dead``
(``host-a`` was killed), then takes over ``host-a``'s turns and waits for the
turn. SYNCHRONOUS is the engine's (the database's default if not given).
``run``, ``recover`` and ``takeover`` write the final history to
``WORKDIR/history.json`` and the turn's durable event stream to
``WORKDIR/events.json``. Every tool appends its name to ``WORKDIR/runs.txt``
when it starts, so the test counts what ran.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

from agent_smith import Agent, AgentEvent, AgentHooks, ApprovalRequested, LlmClient, Message, tool
from agent_smith.agent.subagents import SubAgentSpec
from agent_smith.base.history_json import messages_to_json
from agent_smith.durable import DurableAgent, DurableEngine
from agent_smith.durable.journal import DONE
from agent_smith.tools.function import FunctionTool

TURN = "turn-1"
#: How long a stopped worker waits to be killed before it gives up.
KILL_WAIT = 120.0


#: The executor id of the process that ran the turn first, and of the one that takes it over.
HOST_A, HOST_B = "host-a", "host-b"


def main(
    scenario: str, mode: str, database: str, url: str, workdir: Path, synchronous: str = ""
) -> None:
    stop = Stop(workdir, armed=mode == "crash")
    opened: list[DurableEngine] = []  # the engine, for the tools that read its journal

    def ran(name: str, *, stops_in: str = "") -> None:
        """Count ``name`` as run; in scenario ``stops_in``, stop at the kill point."""
        with (workdir / "runs.txt").open("a") as runs:
            runs.write(name + "\n")
        if scenario == stops_in:
            stop.here()

    @tool
    def send_email(to: str) -> str:
        """Send an email."""
        ran("send_email", stops_in="tool")
        return f"sent to {to}"

    @tool(idempotent=True)
    def fetch_page(url: str) -> str:
        """Fetch a page."""
        ran("fetch_page", stops_in="tool_idempotent")
        return f"page {url}"

    @tool
    def fast(n: int) -> str:
        """A quick call."""
        ran("fast")
        return f"fast {n}"

    @tool(idempotent=True)
    def slow(n: int) -> str:
        """A slow call: it waits until the fast one is recorded."""
        ran("slow")
        stop.after_recorded(opened[0], "t1")
        return f"slow {n}"

    @tool(idempotent=True)
    def lookup(q: str) -> str:
        """Look something up."""
        ran("lookup", stops_in="subagent")
        return f"found {q}"

    @tool(idempotent=True)
    def seek(q: str) -> str:
        """Seek something (two sub-agents seek at once; the kill point waits for both)."""
        ran("seek")
        stop.once_ran(workdir, "seek", 2)
        return f"found {q}"

    @tool(requires_approval=True)
    def wire_money(amount: int) -> str:
        """Wire money (a person approves it first)."""
        ran("wire_money")
        return f"wired {amount}"

    tools: dict[str, list[FunctionTool]] = {
        "model_request": [send_email],
        "after_reply": [send_email],
        "tool": [send_email],
        "tool_idempotent": [fetch_page],
        "parallel": [fast, slow],
        "subagent": [],
        "parallel_subagents": [],
        "approval": [wire_money],
    }
    hooks = AgentHooks(on_message=stop.after_reply if scenario == "after_reply" else None)
    agent = Agent(LlmClient(url, "scripted"), tools=tools[scenario], name="parent", hooks=hooks)
    if scenario == "subagent":
        agent.add_subagent(
            SubAgentSpec(
                "researcher", "Finds things.", "You research.", tool_factories=[lambda: lookup]
            )
        )
    if scenario == "parallel_subagents":
        agent.add_subagent(SubAgentSpec("scout", "Seeks things.", tool_factories=[lambda: seek]))
    executor = HOST_B if mode == "takeover" else HOST_A
    level = {"normal": "normal", "full": "full", "": None}[synchronous]
    with DurableEngine(database, executor_id=executor, synchronous=level) as engine:
        opened.append(engine)
        durable = DurableAgent(agent, engine)
        engine.launch()
        if mode == "takeover":
            (workdir / "standing-by").write_text("")
            wait_for_file(workdir / "dead")
            assert engine.recover(HOST_A) == [TURN]
        if mode in ("recover", "takeover"):
            if scenario == "approval":  # the decision comes from this other process
                approve_when_waiting(durable)
            durable.result(TURN)
        else:

            def on_event(event: AgentEvent) -> None:
                if isinstance(event, ApprovalRequested) and not event.answered:
                    if mode == "crash":
                        stop.reached()  # killed while the turn waits for the decision
                    else:
                        threading.Thread(target=approve_when_waiting, args=(durable,)).start()

            durable.send("Do it.", turn_id=TURN, on_event=on_event)
        (workdir / "history.json").write_text(messages_to_json(agent.history))
        (workdir / "events.json").write_text(json.dumps(list(durable.events(TURN))))


def wait_for_file(path: Path) -> None:
    gate = threading.Event()
    for _ in range(int(KILL_WAIT / 0.05)):
        if path.exists():
            return
        gate.wait(0.05)
    raise SystemExit(f"{path.name} never appeared")


def approve_when_waiting(durable: DurableAgent) -> None:
    gate = threading.Event()
    for _ in range(int(KILL_WAIT / 0.05)):
        waiting = durable.waiting(TURN)
        if waiting:
            durable.decide(TURN, str(waiting[0]["call_id"]), True)
            return
        gate.wait(0.05)
    raise SystemExit("the turn never waited for a decision")


class Stop:
    """The kill point: tell the test it is reached, then wait to be killed."""

    def __init__(self, workdir: Path, *, armed: bool) -> None:
        self._workdir = workdir
        self._armed = armed

    def reached(self) -> None:
        (self._workdir / "reached").write_text("")

    def here(self) -> None:
        if self._armed:
            self.reached()
            threading.Event().wait(KILL_WAIT)
            raise SystemExit("the test did not kill this worker")

    def after_reply(self, message: Message) -> None:
        if getattr(message, "tool_calls", ()):  # the reply is recorded before it is
            self.here()

    def once_ran(self, workdir: Path, name: str, count: int) -> None:
        """Stop once ``name`` has started ``count`` times (in other threads too)."""
        if not self._armed:
            return
        pause = threading.Event()
        for _ in range(600):
            if (workdir / "runs.txt").read_text().split().count(name) >= count:
                self.here()
            pause.wait(0.1)
        raise SystemExit(f"{name} never started {count} times")

    def after_recorded(self, engine: DurableEngine, step: str) -> None:
        """Stop once ``step`` of the turn has its result recorded (another thread records it)."""
        if not self._armed:
            return
        done = threading.Event()
        for _ in range(600):
            entry = engine.journal.entries(TURN).get(step)
            if entry is not None and entry.state == DONE:
                self.here()
            done.wait(0.1)
        raise SystemExit(f"step {step} was never recorded")


if __name__ == "__main__":
    scenario, mode, database, url, workdir = sys.argv[1:6]
    main(scenario, mode, database, url, Path(workdir), *sys.argv[6:7])
