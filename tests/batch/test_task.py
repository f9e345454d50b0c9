"""A batch run with a task of its own: the payload reaches it, its details are recorded."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_smith import AgentSpec, BatchInput, ConfigError, read_results, run_batch
from agent_smith.batch.cache import AgentCache
from agent_smith.batch.worker import Job, Outcome, run_item
from tests.support.batch import answer
from tests.support.llm_server import ScriptedLlmServer


def tagged(job: Job, cache: AgentCache | None = None) -> Outcome:
    """The default task's outcome, with the payload echoed as details."""
    outcome = run_item(job, cache)
    return dataclasses.replace(outcome, details={"payload": job.payload, "id": job.id})


def no_agent(job: Job, cache: AgentCache | None = None) -> Outcome:
    """A task that makes no agent at all (a spec-less run)."""
    return Outcome(content=job.input.upper(), details={"payload": job.payload})


@pytest.fixture
def server(no_thread_leak: None) -> Iterator[ScriptedLlmServer]:
    with ScriptedLlmServer(answer) as s:
        yield s


@pytest.mark.parametrize("suffix", [".jsonl", ".sqlite"])
def test_a_task_gets_each_payload_and_its_details_are_recorded(
    server: ScriptedLlmServer, tmp_path: Path, suffix: str
) -> None:
    out = tmp_path / f"out{suffix}"
    inputs = [BatchInput(str(i), f"q{i}", {"n": i}) for i in range(5)]
    with run_batch(AgentSpec(server.url), inputs, results=out, task=tagged) as run:
        results = list(run)
    assert {r.id: r.details for r in results} == {
        str(i): {"payload": {"n": i}, "id": str(i)} for i in range(5)
    }
    assert all(r.content == f"answer: q{r.id}" for r in results)
    assert read_results(out) == results


def test_a_plain_batch_line_has_no_details_key(server: ScriptedLlmServer, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    with run_batch(AgentSpec(server.url), ["q"], results=out) as run:
        list(run)
    assert '"details"' not in out.read_text()


def test_a_task_that_makes_its_agents_runs_without_a_spec(no_thread_leak: None) -> None:
    with run_batch(None, [BatchInput("a", "x", 1)], task=no_agent) as run:
        (result,) = list(run)
    assert (result.content, result.details) == ("X", {"payload": 1})


def test_no_spec_needs_a_task_of_its_own() -> None:
    with pytest.raises(ConfigError, match="AgentSpec"):
        run_batch(None, ["q"])
