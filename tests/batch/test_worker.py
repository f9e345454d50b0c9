from __future__ import annotations

import pickle

import pytest
from dask.tokenize import tokenize

from agent_smith import AgentSpec, ItemError
from agent_smith.batch.cache import AgentCache
from agent_smith.batch.worker import Job, run_item
from tests.support.llm_server import Raw, ScriptedLlmServer, Text

pytestmark = pytest.mark.usefixtures("no_thread_leak")


def test_a_job_pickles_and_its_dask_key_is_one_per_run_input_and_attempt() -> None:
    spec = AgentSpec("http://127.0.0.1:1")
    job = Job(spec, "a", "question", 1, "run-1")
    assert pickle.loads(pickle.dumps(job)) == job
    keys = {
        tokenize(j)
        for j in (job, Job(spec, "a", "question", 1, "run-2"), Job(spec, "a", "q", 2, "run-1"))
    }
    assert len(keys) == 3
    assert tokenize(Job(spec, "a", "question", 1, "run-1")) == tokenize(job)


def test_run_item_returns_the_answer_or_the_error_as_data() -> None:
    with ScriptedLlmServer() as server, AgentCache() as cache:
        server.script(Text("fine"), Raw(400, '{"error": {"message": "nope"}}'))
        spec = AgentSpec(server.url)
        ok = run_item(Job(spec, "a", "first"), cache)
        failed = run_item(Job(spec, "b", "second"), cache)
    assert (ok.content, ok.error, ok.usage.total) == ("fine", None, 15)
    assert ok.seconds > 0
    assert failed.error is not None and failed.error.type == "LlmApiError"
    assert failed.retryable and failed.content is None


def test_a_spec_that_cannot_build_is_not_retryable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BATCH_WORKER_KEY", raising=False)
    spec = AgentSpec("http://127.0.0.1:1", api_key_env="BATCH_WORKER_KEY")
    with AgentCache() as cache:
        outcome = run_item(Job(spec, "a", "x"), cache)
    assert outcome.error == ItemError(
        "ConfigError", "AgentSpec.api_key_env: the environment variable BATCH_WORKER_KEY is not set"
    )
    assert not outcome.retryable
