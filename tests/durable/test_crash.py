"""Crash anywhere, lose nothing: real processes killed by SIGKILL mid-turn, recovered by another.

Each scenario runs the same durable turn three ways against one scripted
chat server on 127.0.0.1: once uninterrupted (the reference), once killed at
its kill point, and then recovered by a fresh process. The recovered turn
completes; the model requests and tool runs that were recorded before the
kill are not repeated (the server counts requests, the tools write their
runs to a file); its history equals the reference's, ids and all — except
where a non-idempotent call was cut off, which gets the "may or may not have
happened" error result instead of running again. Every test runs on SQLite
and on PostgreSQL (tests/durable/conftest.py); the last one has a second
process, running all along, take over the turn of the one killed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("dbos")

from agent_smith.durable import UNKNOWN_OUTCOME
from tests.support.llm_server import Calls, Hold, Reply, ScriptedLlmServer, Text

ROOT = Path(__file__).resolve().parents[2]
#: Generous bounds: the processes start DBOS and Python on a busy machine.
STEP_TIMEOUT = 120.0

FIRST_CALLS = {
    "send_email": Calls(("send_email", {"to": "ann"})),
    "fetch_page": Calls(("fetch_page", {"url": "u1"})),
    "fast": Calls(("fast", {"n": 1}), ("slow", {"n": 2})),
    "researcher": Calls(("researcher", {"task": "find x"})),
    "scout": Calls(("scout", {"task": "x"}), ("scout", {"task": "y"})),
    "lookup": Calls(("lookup", {"q": "x"})),
    "wire_money": Calls(("wire_money", {"amount": 5})),
}


class Script:
    """The server's replies: calls for a new task, then an answer naming the results."""

    def __init__(self) -> None:
        self.hold: Hold | None = None  # the next request waits on it (the kill point)

    def __call__(self, body: dict[str, object]) -> Reply:
        hold, self.hold = self.hold, None
        reply = self._reply(body)
        if hold is not None:
            return Hold(hold.gate, reply, hold.reached)
        return reply

    def _reply(self, body: dict[str, object]) -> Reply:
        messages = body["messages"]
        assert isinstance(messages, list)
        last = messages[-1]
        if last["role"] == "user":
            tools = body.get("tools") or []
            first = tools[0]["function"]["name"]  # type: ignore[index]
            if first == "seek":  # a scout seeks its own task: each sub-agent's result differs
                return Calls(("seek", {"q": last["content"]}))
            return FIRST_CALLS[first]
        results = [m["content"] for m in messages if m["role"] == "tool"]
        return Text("done: " + "; ".join(results))


@pytest.fixture
def server() -> Iterator[tuple[ScriptedLlmServer, Script]]:
    script = Script()
    with ScriptedLlmServer(script) as running:
        yield running, script


def worker(
    scenario: str, mode: str, database: str, url: str, workdir: Path, synchronous: str = ""
) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.durable.crash_worker",
            scenario,
            mode,
            database,
            url,
            str(workdir),
            synchronous,
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def finish(process: subprocess.Popen[bytes]) -> None:
    out, _ = process.communicate(timeout=STEP_TIMEOUT)
    assert process.returncode == 0, out.decode(errors="replace")


def wait_for(ready: threading.Event | Path, process: subprocess.Popen[bytes]) -> None:
    """Wait for the kill point, polling the process so a crash fails the test at once."""
    deadline = time.monotonic() + STEP_TIMEOUT
    pause = threading.Event()
    while time.monotonic() < deadline:
        if ready.is_set() if isinstance(ready, threading.Event) else ready.exists():
            return
        assert process.poll() is None, process.communicate()[0].decode(errors="replace")
        pause.wait(0.05)
    raise AssertionError("the worker never reached its kill point")


def runs(workdir: Path) -> list[str]:
    path = workdir / "runs.txt"
    return path.read_text().split() if path.exists() else []


def history(workdir: Path) -> list[dict[str, object]]:
    return json.loads((workdir / "history.json").read_text())


def events(workdir: Path) -> list[dict[str, object]]:
    return json.loads((workdir / "events.json").read_text())


def reference(
    scenario: str, url: str, database: str, tmp_path: Path
) -> tuple[list[dict[str, object]], list[str]]:
    workdir = tmp_path / "reference"
    workdir.mkdir()
    finish(worker(scenario, "run", database, url, workdir))
    return history(workdir), runs(workdir)


def crash_and_recover(
    scenario: str,
    url: str,
    database: str,
    tmp_path: Path,
    reached: threading.Event | None = None,
    synchronous: str = "",
) -> Path:
    workdir = tmp_path / "crashed"
    workdir.mkdir()
    crashing = worker(scenario, "crash", database, url, workdir, synchronous)
    wait_for(reached if reached is not None else workdir / "reached", crashing)
    crashing.send_signal(signal.SIGKILL)
    crashing.wait(STEP_TIMEOUT)
    (workdir / "reached").unlink(missing_ok=True)
    finish(worker(scenario, "recover", database, url, workdir, synchronous))
    return workdir


@pytest.mark.parametrize(
    "scenario",
    ["after_reply", "tool_idempotent", "parallel", "subagent", "parallel_subagents", "approval"],
)
def test_a_turn_killed_at_a_boundary_completes_in_another_process_as_if_never_killed(
    scenario: str,
    server: tuple[ScriptedLlmServer, Script],
    new_database: Callable[[], str],
    tmp_path: Path,
) -> None:
    llm, _ = server
    expected, expected_runs = reference(scenario, llm.url, new_database(), tmp_path)
    sent = len(llm.requests)
    workdir = crash_and_recover(scenario, llm.url, new_database(), tmp_path)
    assert history(workdir) == expected
    assert events(workdir) == events(tmp_path / "reference")  # no gap, no repeat
    assert len(llm.requests) - sent == sent  # no recorded request was sent again
    rerun = {"after_reply": [], "tool_idempotent": ["fetch_page"], "parallel": ["slow"]}
    rerun["subagent"] = ["lookup"]
    rerun["parallel_subagents"] = ["seek", "seek"]  # both cut off; each gets its own result
    rerun["approval"] = []  # the call waited for its decision: it had not started
    assert sorted(runs(workdir)) == sorted(expected_runs + rerun[scenario])


def test_a_turn_killed_under_the_other_commit_durability_completes_as_if_never_killed(
    server: tuple[ScriptedLlmServer, Script], new_database: Callable[[], str], tmp_path: Path
) -> None:
    """``synchronous="normal"`` on PostgreSQL (commits not waiting for the WAL flush) and
    ``"full"`` on SQLite: a killed process loses nothing it committed either way."""
    llm, _ = server
    expected, expected_runs = reference("tool_idempotent", llm.url, new_database(), tmp_path)
    sent = len(llm.requests)
    database = new_database()
    other = "normal" if "://" in database else "full"
    workdir = crash_and_recover("tool_idempotent", llm.url, database, tmp_path, synchronous=other)
    assert history(workdir) == expected
    assert events(workdir) == events(tmp_path / "reference")
    assert len(llm.requests) - sent == sent  # the recorded reply was not asked again
    assert sorted(runs(workdir)) == sorted([*expected_runs, "fetch_page"])


def test_a_turn_killed_during_a_model_request_sends_that_request_again_and_nothing_else(
    server: tuple[ScriptedLlmServer, Script], new_database: Callable[[], str], tmp_path: Path
) -> None:
    llm, script = server
    expected, expected_runs = reference("model_request", llm.url, new_database(), tmp_path)
    sent = len(llm.requests)
    gate = threading.Event()
    held = Hold(gate, Text(""))
    script.hold = held
    try:
        workdir = crash_and_recover(
            "model_request", llm.url, new_database(), tmp_path, held.reached
        )
    finally:
        gate.set()
    assert history(workdir) == expected
    assert len(llm.requests) - sent == sent + 1  # only the unanswered request again
    assert runs(workdir) == expected_runs


def test_a_call_cut_off_by_a_crash_does_not_run_again_unless_idempotent(
    server: tuple[ScriptedLlmServer, Script], new_database: Callable[[], str], tmp_path: Path
) -> None:
    llm, _ = server
    workdir = crash_and_recover("tool", llm.url, new_database(), tmp_path)
    assert runs(workdir) == ["send_email"]  # started once, before the kill; never again
    result = next(m for m in history(workdir) if m["role"] == "tool")
    assert result["is_error"] is True
    assert UNKNOWN_OUTCOME in str(result["content"])
    assert history(workdir)[-1]["content"] == f"done: {result['content']}"


def test_a_process_killed_mid_turn_has_its_turn_taken_over_by_another_one_running_beside_it(
    server: tuple[ScriptedLlmServer, Script], new_database: Callable[[], str], tmp_path: Path
) -> None:
    llm, _ = server
    expected, expected_runs = reference("tool_idempotent", llm.url, new_database(), tmp_path)
    workdir = tmp_path / "crashed"
    workdir.mkdir()
    database = new_database()
    standby = worker("tool_idempotent", "takeover", database, llm.url, workdir)
    try:
        wait_for(workdir / "standing-by", standby)  # host-b runs before host-a starts
        crashing = worker("tool_idempotent", "crash", database, llm.url, workdir)
        wait_for(workdir / "reached", crashing)
        crashing.send_signal(signal.SIGKILL)
        crashing.wait(STEP_TIMEOUT)
        (workdir / "dead").write_text("")
        finish(standby)
    finally:
        standby.kill()
    assert history(workdir) == expected
    assert events(workdir) == events(tmp_path / "reference")
    assert sorted(runs(workdir)) == sorted([*expected_runs, "fetch_page"])
