from __future__ import annotations

import json
import multiprocessing
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from agent_smith import (
    AgentConfig,
    AgentSpec,
    BatchInput,
    CancelledError,
    ConfigError,
    ItemError,
    read_results,
    run_batch,
)
from agent_smith.batch.sink import open_sink
from agent_smith.batch.spec import AgentSpec as SpecClass
from tests.support.background import CANCEL_BOUND, WAIT, Background
from tests.support.batch import answer, last_user_text, pid_then_answer
from tests.support.llm_server import (
    Calls,
    Hold,
    JsonObject,
    Raw,
    Reply,
    ScriptedLlmServer,
    Text,
)

INPUTS = [f"question {i}" for i in range(60)]


@pytest.fixture
def server(no_thread_leak: None) -> Iterator[ScriptedLlmServer]:
    with ScriptedLlmServer(answer) as s:
        yield s


def test_every_input_gets_one_result_and_the_file_holds_the_same(
    server: ScriptedLlmServer, tmp_path: Path
) -> None:
    out = tmp_path / "out.jsonl"
    with run_batch(AgentSpec(server.url), INPUTS, results=out, concurrency=8) as run:
        assert (run.pending, run.skipped) == (60, 0)
        results = list(run)
    assert sorted(r.id for r in results) == sorted(str(i) for i in range(60))
    assert all(r.ok and r.content == f"answer: {r.input}" and r.attempts == 1 for r in results)
    assert all(r.usage.total == 15 and r.seconds > 0 for r in results)
    assert read_results(out) == results  # written in the order they were yielded


def test_agents_are_built_once_per_thread_at_most(
    server: ScriptedLlmServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds: list[int] = []
    original = SpecClass.build

    def counting_build(self: SpecClass, **kwargs: Any) -> Any:
        builds.append(1)
        return original(self, **kwargs)

    monkeypatch.setattr(SpecClass, "build", counting_build)
    results = list(run_batch(AgentSpec(server.url), INPUTS, concurrency=4))
    assert len(results) == 60
    assert 1 <= len(builds) <= 4


def test_a_failing_input_is_retried_then_recorded_with_its_error(
    server: ScriptedLlmServer, tmp_path: Path
) -> None:
    failures = {"flaky": 2, "broken": 99}
    lock = threading.Lock()

    def responder(body: JsonObject) -> Reply:
        text = last_user_text(body)
        with lock:
            left = failures.get(text, 0)
            failures[text] = left - 1
        if left > 0:
            return Raw(400, '{"error": {"message": "bad request"}}')
        return Text(f"answer: {text}")

    server.responder = responder
    out = tmp_path / "out.jsonl"
    inputs = [BatchInput("f", "flaky"), BatchInput("b", "broken"), BatchInput("ok", "fine")]
    by_id = {r.id: r for r in run_batch(AgentSpec(server.url), inputs, results=out, retries=2)}
    assert by_id["f"].ok and by_id["f"].attempts == 3
    assert by_id["ok"].ok and by_id["ok"].attempts == 1
    broken = by_id["b"]
    assert (broken.content, broken.attempts) == (None, 3)
    assert broken.error is not None and broken.error.type == "LlmApiError"
    assert "bad request" in broken.error.message
    assert {r.id: r.ok for r in read_results(out)} == {"f": True, "b": False, "ok": True}


def test_a_config_error_is_not_retried(
    server: ScriptedLlmServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BATCH_RUN_KEY", raising=False)
    spec = AgentSpec(server.url, api_key_env="BATCH_RUN_KEY")
    results = list(run_batch(spec, ["a", "b"], retries=5))
    assert [(r.attempts, r.error.type if r.error else None) for r in results] == [
        (1, "ConfigError"),
        (1, "ConfigError"),
    ]
    assert server.requests == []


def test_a_call_waiting_for_approval_fails_the_input_once(server: ScriptedLlmServer) -> None:
    server.script(Calls(("delete_record", {"name": "x"})))
    spec = AgentSpec(server.url, tools=("tests.support.batch:delete_record",))
    (result,) = run_batch(spec, ["delete x"], retries=3)
    assert result.error is not None and result.error.type == "ApprovalRequired"
    assert result.attempts == 1  # a person is needed: another attempt would pause again


def test_a_rerun_skips_what_is_recorded_and_records_each_id_once(
    server: ScriptedLlmServer, tmp_path: Path
) -> None:
    out = tmp_path / "out.sqlite"
    spec = AgentSpec(server.url)
    with run_batch(spec, INPUTS, results=out, concurrency=4) as run:
        first = [next(run) for _ in range(10)]  # then stop, as a crash or Ctrl-C would
    recorded = {r.id for r in read_results(out)}
    assert recorded == {r.id for r in first}
    asked_before = len(server.requests)
    with run_batch(spec, INPUTS, results=out, concurrency=4) as run:
        assert (run.skipped, run.pending) == (10, 50)
        rest = list(run)
    assert not {r.id for r in rest} & recorded
    asked = [last_user_text(body) for body in server.requests[asked_before:]]
    assert not {INPUTS[int(i)] for i in recorded} & set(asked)
    ids = [r.id for r in read_results(out)]
    assert sorted(ids) == sorted(str(i) for i in range(60))  # each exactly once


def test_rerun_failed_runs_only_the_failures_again(
    server: ScriptedLlmServer, tmp_path: Path
) -> None:
    def refuse_b(body: JsonObject) -> Reply:
        return Raw(400, "refused") if last_user_text(body) == "b" else answer(body)

    server.responder = refuse_b
    out = tmp_path / "out.jsonl"
    spec = AgentSpec(server.url)
    results = list(run_batch(spec, ["a", "b"], results=out, retries=0))
    assert sorted((r.input, r.ok) for r in results) == [("a", True), ("b", False)]
    server.responder = answer
    assert list(run_batch(spec, ["a", "b"], results=out)) == []  # failures count as done
    again = list(run_batch(spec, ["a", "b"], results=out, rerun_failed=True))
    assert [(r.input, r.ok) for r in again] == [("b", True)]
    assert sorted((r.input, r.ok) for r in read_results(out)) == [("a", True), ("b", True)]


def test_stopping_early_cancels_the_turns_in_flight(tmp_path: Path, no_thread_leak: None) -> None:
    gate = threading.Event()
    holds: list[Hold] = []
    lock = threading.Lock()

    def responder(body: JsonObject) -> Reply:
        if last_user_text(body) == "fast":
            return Text("quick")
        with lock:
            holds.append(Hold(gate, Text("too late")))
            return holds[-1]

    out = tmp_path / "out.jsonl"
    with ScriptedLlmServer(responder) as server:
        run = run_batch(AgentSpec(server.url), ["slow1", "slow2", "fast", "slow3"], results=out)
        first = next(run)
        assert first.input == "fast"
        started = time.monotonic()
        run.close()
        stopped = time.monotonic() - started
        gate.set()
    assert stopped < CANCEL_BOUND, f"close() took {stopped:.2f} s"
    assert [r.input for r in read_results(out)] == ["fast"]


def test_cancel_from_another_thread_stops_the_iterating_one(
    tmp_path: Path, no_thread_leak: None
) -> None:
    gate = threading.Event()
    holds = [Hold(gate, Text("too late")) for _ in range(3)]
    out = tmp_path / "out.jsonl"
    with ScriptedLlmServer() as server:
        server.script(*holds)
        run = run_batch(AgentSpec(server.url), ["a", "b", "c"], results=out)
        iterating = Background(lambda: list(run))
        try:
            assert all(hold.reached.wait(WAIT) for hold in holds)
            run.cancel()
            run.cancel()  # twice is fine
            assert iterating.join(CANCEL_BOUND), "the run did not stop"
        finally:
            gate.set()
            iterating.join(WAIT)
    assert isinstance(iterating.error, CancelledError)
    assert read_results(out) == []
    open_sink(out).close()  # the run let go of the file


def test_item_timeout_bounds_each_attempt(tmp_path: Path, no_thread_leak: None) -> None:
    gate = threading.Event()
    with ScriptedLlmServer(lambda body: Hold(gate, Text("never"))) as server:
        try:
            (result,) = run_batch(AgentSpec(server.url), ["hang"], retries=0, item_timeout=0.3)
        finally:
            gate.set()
    assert result.error is not None
    assert result.error.type == "AgentStopped" and "deadline" in result.error.message


def test_a_shorter_spec_deadline_is_kept() -> None:
    spec = AgentSpec("http://h", config=AgentConfig(deadline=1.0))
    run = run_batch(spec, [], item_timeout=60)
    assert run.spec.config.deadline == 1.0
    assert run_batch(AgentSpec("http://h"), [], item_timeout=60).spec.config.deadline == 60.0


class FailingFirstExecutor(Executor):
    """Fails the first submission of each input as a lost worker would, then runs it."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(2, thread_name_prefix="agent_smith-test")
        self._seen: set[str] = set()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        job = args[0]
        if job.id not in self._seen:
            self._seen.add(job.id)
            failed: Future[Any] = Future()
            failed.set_exception(OSError("worker lost"))
            return failed
        return self._pool.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._pool.shutdown(wait=wait, cancel_futures=cancel_futures)


def test_a_task_the_executor_failed_is_retried(server: ScriptedLlmServer) -> None:
    executor = FailingFirstExecutor()
    try:
        results = list(run_batch(AgentSpec(server.url), ["a", "b"], executor=executor))
    finally:
        executor.shutdown()
    assert sorted((r.input, r.ok, r.attempts) for r in results) == [("a", True, 2), ("b", True, 2)]
    executor = FailingFirstExecutor()
    try:
        (lost,) = run_batch(AgentSpec(server.url), ["c"], executor=executor, retries=0)
    finally:
        executor.shutdown()
    assert lost.error == ItemError("OSError", "worker lost")


def test_a_process_pool_runs_the_batch_in_other_processes(no_thread_leak: None) -> None:
    with ScriptedLlmServer(pid_then_answer) as server:
        spec = AgentSpec(server.url, tools=("tests.support.batch:worker_pid",))
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(2, mp_context=context) as pool:
            results = list(run_batch(spec, ["a", "b", "c", "d"], executor=pool, concurrency=2))
    assert all(r.ok for r in results), [r.error for r in results]
    pids = {r.content.rsplit(" ", 1)[1] for r in results if r.content}
    assert str(multiprocessing.current_process().pid) not in pids


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"concurrency": 0}, "concurrency must be a positive integer"),
        ({"retries": -1}, "retries must be a non-negative integer"),
        ({"item_timeout": 0}, "item_timeout must be positive"),
        ({"item_timeout": "5"}, "item_timeout must be positive"),
        ({"executor": object()}, "concurrent.futures.Executor"),
    ],
)
def test_bad_options_are_config_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        run_batch(AgentSpec("http://h"), ["a"], **options)


def test_a_spec_path_instead_of_a_spec_says_how_to_load_one() -> None:
    with pytest.raises(ConfigError, match=r"AgentSpec\.load"):
        run_batch("spec.json", ["a"])  # type: ignore[arg-type]


def test_a_shut_down_executor_is_a_config_error(server: ScriptedLlmServer) -> None:
    pool = ThreadPoolExecutor(1)
    pool.shutdown()
    with pytest.raises(ConfigError, match="refused work"):
        list(run_batch(AgentSpec(server.url), ["a"], executor=pool))


def test_a_typed_spec_records_each_output_as_json(tmp_path: Path, no_thread_leak: None) -> None:
    def verdict(body: JsonObject) -> Reply:
        assert body["response_format"]["json_schema"]["name"] == "Verdict"
        return Text(json.dumps({"label": last_user_text(body).upper()}))

    out = tmp_path / "out.jsonl"
    with ScriptedLlmServer(verdict) as server:
        spec = AgentSpec(server.url, output_type="tests.support.batch:Verdict")
        with run_batch(spec, ["yes", "no"], results=out, concurrency=2) as run:
            results = sorted(run, key=lambda r: r.id)
    assert [r.output for r in results] == [{"label": "YES"}, {"label": "NO"}]
    assert [r.content for r in results] == ['{"label": "YES"}', '{"label": "NO"}']
    assert sorted(read_results(out), key=lambda r: r.id) == results
