"""Durable queues: many turns, and a batch, through a DBOS queue worked by other processes."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("dbos")

from agent_smith import Agent, AgentSpec, ConfigError, TestModel, read_results, run_batch
from agent_smith.durable import DurableAgent, DurableEngine, DurableQueue
from tests.durable.conftest import WAIT, Workers
from tests.durable.queue_worker import LIMIT, Gauge
from tests.support.batch import pid_then_answer
from tests.support.llm_server import ScriptedLlmServer


def test_queued_turns_run_in_the_worker_processes_never_more_at_once_than_the_limit(
    workers: Workers, tmp_path: Path
) -> None:
    with DurableEngine(tmp_path / "turns.sqlite") as engine:
        desk = DurableAgent(Agent(TestModel(["unused"]), name="desk"), engine)
        engine.launch()  # this process works no queue: the workers run the turns
        turns = [desk.start(f"task {n}", turn_id=f"turn-{n}", queue="turns") for n in range(8)]
        answers = [desk.result(turn, timeout=WAIT).content for turn in turns]
    assert [a.rsplit(" in ", 1)[0] for a in answers] == [f"worked on task {n}" for n in range(8)]
    assert {a.rsplit(" in ", 1)[1] for a in answers} <= workers.pids
    assert 1 <= Gauge(tmp_path / "gauge.sqlite").peak() <= LIMIT


def test_a_batch_on_a_durable_queue_records_each_input_once_from_the_workers(
    workers: Workers, tmp_path: Path
) -> None:
    out = tmp_path / "out.jsonl"
    inputs = [f"q{n}" for n in range(6)]
    with (
        ScriptedLlmServer(pid_then_answer) as server,
        DurableEngine(tmp_path / "turns.sqlite") as engine,
    ):
        queue = DurableQueue(engine, "batch")
        spec = AgentSpec(server.url, tools=("tests.support.batch:worker_pid",))
        try:
            results = list(run_batch(spec, inputs, executor=queue, concurrency=4, results=out))
        finally:
            queue.shutdown()
    assert all(r.ok for r in results), [r.error for r in results]
    assert sorted(r.input for r in results) == inputs
    assert read_results(out) == results
    assert {str(r.content).rsplit(" ", 1)[1] for r in results} <= workers.pids


def test_a_queue_limit_must_be_positive(engine: DurableEngine) -> None:
    with pytest.raises(ConfigError, match="must be positive"):
        engine.work_queue("turns", concurrency=0)
