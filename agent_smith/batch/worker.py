"""What runs on a worker: one input through a cached agent, as plain data back.

The driver submits :func:`run_item` with a :class:`Job` to its executor. Both
are module-level and the job is a frozen dataclass of plain values, so they
pickle for process pools and Dask, which import this module by name on the
worker. The agent comes from the process's :class:`AgentCache` (or the one
the driver passes for local threads). A failure of the agent (any
:class:`AgentSmithError`) comes back as an :class:`Outcome` with the error,
which is cheaper to ship and clearer than a pickled traceback; anything else
(a bug, a killed worker) reaches the driver as the future's exception.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..base.parts import Content
from ..errors import AgentSmithError, ApprovalRequired, ConfigError
from ..messages import TokenUsage
from .cache import AgentCache, CacheStats, process_cache
from .result import ItemError, json_ready
from .spec import AgentSpec

if TYPE_CHECKING:
    from ..agent.agent import Agent

_NO_USAGE = TokenUsage()


@dataclass(frozen=True)
class Job:
    """One attempt at one input: the spec, the input, its batch run and that run's concurrency.

    ``payload`` is the input's :attr:`~agent_smith.batch.BatchInput.payload`.
    """

    spec: AgentSpec | None
    id: str
    input: Content
    attempt: int = 1
    run: str = ""
    slots: int = 8
    payload: Any = None

    def __dask_tokenize__(self) -> tuple[str, str, str, int]:
        """Dask's task key: one per run, input and attempt (hashing the whole spec costs ~1 ms).

        Dask merges tasks with equal keys, so a rerun's input must not share
        the key of the same input still running for an interrupted run.
        """
        return (self.run, self.spec.key if self.spec is not None else "", self.id, self.attempt)


@dataclass(frozen=True)
class Outcome:
    """What an attempt produced; ``retryable`` is False for errors that would repeat.

    ``details``: a JSON value a task of its own records with the result.
    """

    content: str | None = None
    output: Any = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    error: ItemError | None = None
    retryable: bool = False
    seconds: float = 0.0
    details: Any = None

    @classmethod
    def failed(
        cls, err: BaseException, *, seconds: float, usage: TokenUsage = _NO_USAGE
    ) -> Outcome:
        """The outcome of an attempt that raised ``err`` (retryable unless it would repeat)."""
        return cls(usage=usage, error=ItemError.of(err), retryable=retryable(err), seconds=seconds)


class Task(Protocol):
    """What a batch runs per attempt: a module-level function (it pickles by name)."""

    def __call__(self, job: Job, cache: AgentCache | None = None) -> Outcome: ...


def run_item(job: Job, cache: AgentCache | None = None) -> Outcome:
    """Run ``job.input`` through an agent built from ``job.spec`` (built once per process)."""
    started = time.monotonic()
    usage = _NO_USAGE
    try:
        with lease(job, cache) as agent:
            try:
                message = agent.send(job.input)
            finally:
                usage = agent.usage
    except AgentSmithError as err:
        return Outcome.failed(err, seconds=time.monotonic() - started, usage=usage)
    return Outcome(
        content=message.content,
        output=json_ready(message.output),
        usage=usage,
        seconds=time.monotonic() - started,
    )


def lease(job: Job, cache: AgentCache | None) -> contextlib.AbstractContextManager[Agent]:
    """An agent of ``job.spec`` from ``cache`` (else this process's) for the job's turn."""
    if job.spec is None:
        raise ConfigError("a batch job without an agent spec needs a task that makes its agent")
    return (cache or process_cache()).lease(job.spec, slots=job.slots, run=job.run)


def retryable(err: BaseException) -> bool:
    """Whether another attempt at an input that failed with ``err`` could succeed.

    Not after a ConfigError (a spec that does not build, a bad setting) nor
    an ApprovalRequired (a call waiting for a person): they would repeat.
    """
    return not isinstance(err, (ConfigError, ApprovalRequired))


def stop_run(run: str) -> int:
    """Stop batch ``run`` in this process (``client.run`` it on the workers); turns cancelled."""
    return process_cache().stop(run)


def worker_stats(spec: AgentSpec) -> CacheStats:
    """What this process's cache built for ``spec`` (run it on workers: ``client.run``)."""
    return process_cache().stats(spec)
