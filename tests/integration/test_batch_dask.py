"""Batches on a real Dask cluster: worker processes, a scripted LLM server on 127.0.0.1.

One LocalCluster (two worker processes, two threads each) serves the whole
module. The tests kill a worker mid-run, interrupt a driver (SIGKILL, and
SIGINT as a terminal's Ctrl-C) and resume it, and count what each worker
built; after each, every input must be in the results exactly once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from distributed import Client, LocalCluster

from agent_smith import AgentSpec, ServerConfig, read_results, run_batch
from agent_smith.batch.worker import worker_stats
from tests.support.batch import answer, last_user_text, tool_results, write_batch_files
from tests.support.llm_server import Calls, Hold, JsonObject, Reply, ScriptedLlmServer, Text
from tests.support.signals import default_sigint

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_SERVER = REPO / "examples" / "mcp_server_example.py"
WORKERS, THREADS = 2, 2
#: Generous bound for anything waited on here (a bug fails, never hangs).
WAIT = 60.0


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    cluster = LocalCluster(
        n_workers=WORKERS, threads_per_worker=THREADS, processes=True, dashboard_address=None
    )
    with cluster, Client(cluster) as c:
        yield c


def _inputs(n: int) -> list[dict[str, str]]:
    return [{"id": f"item-{i:03d}", "input": f"question {i}"} for i in range(n)]


def _counted(ids: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for ident in ids:
        counts[ident] = counts.get(ident, 0) + 1
    return counts


def _assert_each_once(path: Path, n: int) -> None:
    counts = _counted([r.id for r in read_results(path)])
    assert counts == {f"item-{i:03d}": 1 for i in range(n)}


def test_500_inputs_survive_a_worker_killed_mid_run(client: Client, tmp_path: Path) -> None:
    trigger = "question 200"
    reached, gate, killed = threading.Event(), threading.Event(), threading.Event()
    pids: list[int] = []

    def responder(body: JsonObject) -> Reply:
        if last_user_text(body) != trigger:
            return answer(body)
        results = tool_results(body)
        if not results:
            return Calls(("worker_pid", {}))  # tells which worker runs the trigger
        if killed.is_set():
            return Text(f"answer: {trigger}")
        pids.append(int(results[-1]))
        reached.set()
        return Hold(gate, Text("never delivered: the worker is dead"))

    out = tmp_path / "out.jsonl"
    with ScriptedLlmServer(responder) as server:
        spec = AgentSpec(server.url, tools=("tests.support.batch:worker_pid",))
        before = set(client.run(os.getpid).values())

        def kill_once_reached() -> None:
            # Not from the results loop: the trigger may be the last input in flight, and
            # then no other result comes to look at it while its reply is held.
            if reached.wait(WAIT * 5) and pids:
                os.kill(pids[0], signal.SIGKILL)  # a worker dies with inputs in flight
                killed.set()
            gate.set()

        killer = threading.Thread(target=kill_once_reached, name="test-batch-killer")
        killer.start()
        try:
            with run_batch(spec, _inputs(500), executor=client.get_executor(), results=out) as run:
                results = list(run)
        finally:
            reached.set()  # the killer stops waiting if the trigger never ran
            killer.join(WAIT)
        assert killed.is_set(), "the trigger input never ran"
    assert pids[0] in before
    assert _counted([r.id for r in results]) == {f"item-{i:03d}": 1 for i in range(500)}
    assert all(r.ok for r in results), [r.error for r in results if not r.ok][:3]
    _assert_each_once(out, 500)
    trigger_result = next(r for r in results if r.input == trigger)
    assert trigger_result.content == f"answer: {trigger}"
    client.wait_for_workers(WORKERS, timeout=WAIT)  # the nanny restarted the dead one
    assert pids[0] not in set(client.run(os.getpid).values())


def test_each_worker_builds_its_agents_llm_client_and_mcp_connection_once(
    client: Client,
) -> None:
    def responder(body: JsonObject) -> Reply:
        results = tool_results(body)
        if not results:
            return Calls(("mcp_demo__echo", {"text": last_user_text(body)}))
        return Text(f"echoed {results[-1]}")

    with ScriptedLlmServer(responder) as server:
        demo = ServerConfig(alias="demo", command=(sys.executable, str(EXAMPLE_SERVER)))
        spec = AgentSpec(server.url, system_prompt="counted", mcp_servers=(demo,))
        results = list(run_batch(spec, _inputs(100), executor=client.get_executor()))
    assert all(r.ok for r in results), [r.error for r in results if not r.ok][:3]
    assert all(r.content == f"echoed {r.input}" for r in results)
    stats = client.run(worker_stats, spec)
    working = [s for s in stats.values() if s.agents]
    assert working, stats
    for s in working:  # one agent per worker thread at most, the rest shared by the process
        assert 1 <= s.agents <= THREADS and s.llm_clients == 1 and s.mcp_connections == 1, stats
    assert sum(s.agents for s in stats.values()) <= WORKERS * THREADS < len(results)


def _command(tmp_path: Path, url: str, n: int, client: Client) -> list[str]:
    """``agent-smith batch`` of ``n`` inputs on the cluster, results in ``out.jsonl``."""
    spec, inputs = write_batch_files(
        tmp_path, {"base_url": url, "system_prompt": "cli"}, _inputs(n)
    )
    files = [str(spec), str(inputs), "-o", str(tmp_path / "out.jsonl")]
    return [
        sys.executable,
        "-m",
        "agent_smith",
        "batch",
        *files,
        "--scheduler",
        client.scheduler.address,
    ]


def test_a_driver_killed_mid_run_resumes_where_it_stopped(client: Client, tmp_path: Path) -> None:
    asked: list[str] = []
    enough = threading.Event()
    lock = threading.Lock()

    def responder(body: JsonObject) -> Reply:
        with lock:
            asked.append(last_user_text(body))
            if len(asked) >= 80:
                enough.set()
        return answer(body)

    out = tmp_path / "out.jsonl"
    with ScriptedLlmServer(responder) as server:
        command = _command(tmp_path, server.url, 200, client)
        driver = subprocess.Popen(command, stderr=subprocess.DEVNULL, cwd=REPO)
        try:
            assert enough.wait(WAIT), "the driver never got going"
        finally:
            driver.kill()  # a crash: no cleanup of any kind
            driver.wait(WAIT)
        before = {r.id for r in read_results(out)}
        assert before, "nothing was recorded before the crash"
        with lock:
            asked.clear()
        done = subprocess.run(command, capture_output=True, text=True, timeout=WAIT, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert f"{len(before)} already in" in done.stderr
    _assert_each_once(out, 200)
    recorded_inputs = {f"question {int(ident.split('-')[1])}" for ident in before}
    assert not recorded_inputs & set(asked), "the resumed run asked again for recorded inputs"


def test_ctrl_c_cancels_the_inputs_in_flight_and_the_rerun_finishes(
    client: Client, tmp_path: Path
) -> None:
    gate = threading.Event()
    answered: list[str] = []
    held: list[Hold] = []
    all_held = threading.Event()
    lock = threading.Lock()

    def responder(body: JsonObject) -> Reply:
        with lock:
            if len(answered) < 30 or gate.is_set():
                answered.append(last_user_text(body))
                return answer(body)
            held.append(Hold(gate, Text("too late")))
            if len(held) == WORKERS * THREADS:  # every worker thread now waits on us
                all_held.set()
            return held[-1]

    out = tmp_path / "out.jsonl"
    with ScriptedLlmServer(responder) as server:
        command = _command(tmp_path, server.url, 120, client)
        driver = subprocess.Popen(
            command,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
            start_new_session=True,
            preexec_fn=default_sigint,
        )
        try:
            assert all_held.wait(WAIT), "the workers never all waited on the server"
            os.killpg(driver.pid, signal.SIGINT)  # Ctrl-C in the driver's terminal
            _, err = driver.communicate(timeout=WAIT)
        finally:
            if driver.poll() is None:
                driver.kill()
                driver.wait(WAIT)
                gate.set()
        assert driver.returncode == 130, err
        assert "interrupted" in err and "Traceback" not in err, err
        data = out.read_bytes()
        assert not data or data.endswith(b"\n"), err  # no half-written line
        recorded = read_results(out)
        assert all(r.ok for r in recorded), err
        with lock:
            assert {r.input for r in recorded} <= set(answered), err  # held ones not recorded
        # The server still holds every reply, yet the worker threads are free again:
        # the interrupted driver cancelled the turns running on them, not just the futures.
        assert client.submit(len, "free", pure=False).result(timeout=WAIT) == 4
        gate.set()
        done = subprocess.run(command, capture_output=True, text=True, timeout=WAIT, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert not recorded or f"{len(recorded)} already in" in done.stderr
    _assert_each_once(out, 120)


def test_an_eval_runs_on_the_cluster_and_a_second_run_reads_its_results_back(
    client: Client, tmp_path: Path
) -> None:
    from agent_smith.evals import Case, Contains, Dataset, evaluate

    cases = Dataset(
        tuple(Case(f"c{i}", f"question {i}", expected=f"answer: question {i}") for i in range(20)),
        (Contains(),),
    )
    results = tmp_path / "runs.jsonl"
    with ScriptedLlmServer(answer) as server:
        spec = AgentSpec(server.url)
        executor = client.get_executor()
        report = evaluate(cases, spec, repeat=2, executor=executor, concurrency=8, results=results)
        again = evaluate(cases, spec, repeat=2, executor=executor, results=results)
    assert report.pass_rate == 1.0 and len(report.runs) == 40
    assert len(server.requests) == 40  # the second run sent nothing
    assert again.to_dict() == report.to_dict()
    counts = _counted([r.id for r in read_results(results)])
    assert counts == {f"c{i}#{r}": 1 for i in range(20) for r in (1, 2)}
