"""Many agents on threads against a faulty loopback LLM server, and what they leave behind.

:func:`soak` runs ``agents`` agents, each on its own thread for ``turns``
turns, against a :class:`~tests.support.llm_server.ScriptedLlmServer` whose
replies are drawn (seeded) from: a tool call, a plain answer, a 503, a stream
that stalls past the client's timeout, a stream cut in the middle. Their
tools answer, raise, or hang past their timeout; another thread cancels
random turns. Half the agents keep their history in a :class:`SqliteSession`.

After every turn the agent's history must be consistent (each tool-call
turn followed by exactly its results); after the run, everything is closed
and :class:`Resources` are measured again. Used by the CI soak test
(``tests/test_soak.py``) and by ``scripts/soak.py`` (the long run).
"""

from __future__ import annotations

import collections
import gc
import os
import random
import resource
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_smith import (
    Agent,
    AgentConfig,
    AgentSmithError,
    AssistantMessage,
    LlmClient,
    Message,
    RetryPolicy,
    Runtime,
    SqliteSession,
    ToolMessage,
    strip_orphans,
    tool,
)
from tests.support.llm_server import Calls, Chunks, Drop, Raw, Reply, ScriptedLlmServer, Text

#: How long a turn may take at most before the run is declared hung (generous).
TURN_BOUND = 60.0


@dataclass(frozen=True)
class Resources:
    """What the process holds: threads, open file descriptors, resident memory."""

    threads: int
    open_files: int
    rss_kib: int
    thread_names: tuple[str, ...] = ()

    @classmethod
    def now(cls) -> Resources:
        names = tuple(sorted(t.name for t in threading.enumerate()))
        return cls(len(names), _open_files(), _rss_kib(), names)


@dataclass
class SoakReport:
    """What a run did (outcomes by kind) and left (resources before and after)."""

    turns: int = 0
    outcomes: collections.Counter[str] = field(default_factory=collections.Counter)
    inconsistent: list[str] = field(default_factory=list)
    before: Resources | None = None
    after: Resources | None = None
    seconds: float = 0.0


@dataclass
class _Faults:
    """The server's dice: which reply a request gets (seeded, thread-safe)."""

    seed: int
    stall: threading.Event = field(default_factory=threading.Event)  # never set while running
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    def reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            roll = self._random.random()
            tool_name = self._random.choice(["lookup", "explode", "stall_tool"])
        messages = body.get("messages", [])
        answered = bool(messages) and messages[-1].get("role") == "tool"
        delta = b'data: {"choices": [{"index": 0, "delta": {"content": "par"}}]}\n\n'
        if roll < 0.10:
            return Raw(503, b'{"error": {"message": "overloaded"}}')
        if roll < 0.18:
            return Chunks(delta, self.stall)  # stalls past the client's timeout
        if roll < 0.26:
            return Chunks(delta, Drop())  # the connection is cut mid-stream
        if answered or roll < 0.45:
            return Text("done")
        return Calls((tool_name, {"city": "Paris"}))


def soak(
    *,
    agents: int,
    turns: int,
    seed: int = 1,
    request_timeout: float = 0.5,
    tool_timeout: float = 0.2,
    cancel_every: float = 0.05,
) -> SoakReport:
    """Run the soak (see the module doc); return its report."""
    report = SoakReport()
    release_tools = threading.Event()  # the hung tools' way out, at the end
    faults = _Faults(seed)
    report.before = Resources.now()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="agent-smith-soak-") as tmp, ExitStack() as stack:
        server = stack.enter_context(ScriptedLlmServer(faults.reply, record=False))
        stack.callback(faults.stall.set)  # before the server stops: its handlers wait on it
        runtime = stack.enter_context(Runtime(max_workers=8))
        llm = LlmClient(
            server.url,
            runtime=runtime,
            request_timeout=request_timeout,
            retry_policy=RetryPolicy(max_retries=1, base=0.01, jitter=0.0, cap=0.02),
        )
        stack.callback(release_tools.set)
        fleet = [
            stack.enter_context(_agent(llm, runtime, i, Path(tmp), release_tools))
            for i in range(agents)
        ]
        stop_cancels = threading.Event()
        canceller = threading.Thread(
            target=_cancel_randomly,
            args=(fleet, stop_cancels, seed, cancel_every),
            name="soak-cancel",
        )
        workers = [
            threading.Thread(target=_drive, args=(agent, turns, report), name=f"soak-{i}")
            for i, agent in enumerate(fleet)
        ]
        canceller.start()
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(TURN_BOUND * turns)
            if worker.is_alive():
                report.inconsistent.append(f"{worker.name} did not finish its turns")
        stop_cancels.set()
        canceller.join(TURN_BOUND)
    report.seconds = time.perf_counter() - started
    # Found by this soak, not fixed yet: in about one round of five, a few
    # kept-alive connections of the closed runtime's HTTP pool are freed only
    # by the garbage collector (they sit in a pool queue inside a reference
    # cycle). Collect first so the figures show what is left for good.
    gc.collect()
    _settle(report.before.threads)
    report.after = Resources.now()
    return report


# -- the agents ---------------------------------------------------------------------


class _Tools:
    def __init__(self, release: threading.Event) -> None:
        self.release = release

    def all(self) -> list[Any]:
        @tool
        def lookup(city: str) -> str:
            """The weather in a city."""
            return f"sunny in {city}"

        @tool
        def explode(city: str) -> str:
            """A tool that fails."""
            raise RuntimeError(f"no weather for {city}")

        release = self.release

        @tool
        def stall_tool(city: str) -> str:
            """A tool that hangs past its timeout."""
            release.wait(TURN_BOUND)
            return city

        return [lookup, explode, stall_tool]


class _SoakAgent:
    """An agent, its session (or none), and what it must leave consistent."""

    def __init__(self, agent: Agent, session: SqliteSession | None) -> None:
        self.agent = agent
        self.session = session

    def check(self) -> str | None:
        """What is inconsistent after a turn, or None."""
        history = list(self.agent.history)
        problem = _inconsistency(history)
        if problem is None and self.session is not None:
            stored = strip_orphans(self.session.messages())
            problem = _inconsistency(stored) or (
                None if stored == history else "the session and the agent disagree"
            )
        return None if problem is None else f"{self.agent.name}: {problem}"


@contextmanager
def _agent(
    llm: LlmClient, runtime: Runtime, index: int, tmp: Path, release: threading.Event
) -> Iterator[_SoakAgent]:
    """Agent ``index`` of the fleet: every odd one keeps its history in a session."""
    with ExitStack() as stack:
        session = None
        if index % 2:
            session = stack.enter_context(SqliteSession(tmp / "sessions.db", f"conv-{index}"))
        agent = Agent(
            llm,
            "You answer weather questions.",
            _Tools(release).all(),
            config=AgentConfig(default_tool_timeout=0.2, max_iterations=4),
            runtime=runtime,
            name=f"agent-{index}",
            session=session,
        )
        stack.callback(agent.close)
        yield _SoakAgent(agent, session)


def _drive(soaker: _SoakAgent, turns: int, report: SoakReport) -> None:
    for turn in range(turns):
        try:
            soaker.agent.send(f"weather in Paris? ({turn})")
            outcome = "answered"
        except AgentSmithError as err:
            outcome = type(err).__name__
        problem = soaker.check()
        with _REPORT_LOCK:
            report.turns += 1
            report.outcomes[outcome] += 1
            if problem is not None:
                report.inconsistent.append(problem)


_REPORT_LOCK = threading.Lock()


def _cancel_randomly(
    fleet: list[_SoakAgent], stop: threading.Event, seed: int, every: float
) -> None:
    rng = random.Random(seed + 1)
    while not stop.wait(rng.uniform(0, 2 * every)):  # load generation, not synchronisation
        rng.choice(fleet).agent.cancel()


def _inconsistency(history: list[Message]) -> str | None:
    """Whether every assistant tool-call turn is followed by exactly its results."""
    i = 0
    while i < len(history):
        message = history[i]
        if isinstance(message, AssistantMessage) and message.tool_calls:
            ids = [call.id for call in message.tool_calls]
            results = history[i + 1 : i + 1 + len(ids)]
            got = [r.tool_call_id for r in results if isinstance(r, ToolMessage)]
            if got != ids:
                return f"tool calls {ids} followed by results for {got} at {i}"
            i += len(ids)
        i += 1
    return None


# -- resources ----------------------------------------------------------------------


def _settle(threads: int) -> None:
    """Give finished threads a bounded moment to be gone (close() joined ours already)."""
    deadline = time.monotonic() + 10.0
    while threading.active_count() > threads and time.monotonic() < deadline:
        for thread in _extra_threads():
            thread.join(0.1)


def _extra_threads() -> Iterator[threading.Thread]:
    main = threading.main_thread()
    return (
        t for t in threading.enumerate() if t is not main and t is not threading.current_thread()
    )


def _open_files() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:  # no /proc: count what resource reports as the limit's use is not possible
        return -1


def _rss_kib() -> int:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
