"""What runs on a worker for one run of a case: the batch task evals hand to the batch driver.

:func:`run_case` is the task for an :class:`~agent_smith.batch.AgentSpec`
(module-level, so it pickles by name for Dask): it leases an agent from the
process's cache like a plain batch item. :class:`FactoryTask` is the task
for an agent factory on local threads: a fresh agent per run, closed after
it (and cancelled by :meth:`FactoryTask.cancel`). Both go through
:func:`play`: the case's history goes into the agent's memory, the input is
sent, and the turn's messages (also of a failed turn: the report shows
them) are recorded as the result's details. When the tracing is on, each
run is an ``eval_case`` span, parent of the turn's spans.

A case whose ``expected`` value does not fit the agent's output type fails
here, before its turn, with an EvalError naming it.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..agent.agent import Agent
from ..agent.output_type import output_schema
from ..base.history_json import message_from_dict
from ..base.parts import Content
from ..batch.cache import AgentCache
from ..batch.result import json_ready
from ..batch.worker import Job, Outcome, lease
from ..errors import AgentSmithError, CancelledError, EvalError, OutputValidationError
from ..messages import Message
from ..tracing.names import EVAL_CASE, EVAL_CASE_SPAN, EVAL_REPEAT
from ..tracing.otel import api, tracer
from ..tracing.span import LiveSpan
from .case_run import details


def run_case(job: Job, cache: AgentCache | None = None) -> Outcome:
    """Run one case on an agent of ``job.spec`` (from ``cache``, else this process's)."""
    started = time.monotonic()
    try:
        with lease(job, cache) as agent:
            return play(agent, job, started)
    except AgentSmithError as err:  # the agent could not be built or lent
        return Outcome.failed(err, seconds=time.monotonic() - started)


class FactoryTask:
    """The task for an agent factory: a fresh agent per run, on threads of this process."""

    def __init__(self, factory: Callable[[], Agent]) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self._running: set[Agent] = set()
        self._cancelled = False

    def __call__(self, job: Job, cache: AgentCache | None = None) -> Outcome:
        started = time.monotonic()
        with self._lock:
            if self._cancelled:
                error = CancelledError("the eval run was cancelled", operation="eval case")
                return Outcome.failed(error, seconds=0.0)
        try:
            agent = self._factory()
        except AgentSmithError as err:
            return Outcome.failed(err, seconds=time.monotonic() - started)
        if not isinstance(agent, Agent):
            wrong = EvalError(f"the agent factory returned {type(agent).__name__}, not an Agent")
            return dataclasses.replace(Outcome.failed(wrong, seconds=0.0), retryable=False)
        with self._lock:
            self._running.add(agent)
        try:
            return play(agent, job, started)
        finally:
            with self._lock:
                self._running.discard(agent)
            agent.close()

    def cancel(self) -> None:
        """Cancel the running turns and refuse the runs that have not started."""
        with self._lock:
            self._cancelled = True
            running = list(self._running)
        for agent in running:
            agent.cancel()


def turn_input(job: Job) -> Content:
    """What the agent is sent for the job's case (the one place a case's input reaches a turn)."""
    return job.input


def play(agent: Agent, job: Job, started: float) -> Outcome:
    """Continue the case's history with its input on ``agent``; the outcome with its messages."""
    payload: dict[str, Any] = job.payload or {}
    case, repeat = str(payload.get("case", job.id)), int(payload.get("repeat", 1))
    history = [message_from_dict(m, f"case {case} history") for m in payload.get("history", ())]
    problem = _expected_misfit(agent, case, payload.get("expected"))
    if problem is not None:
        failed = Outcome.failed(problem, seconds=time.monotonic() - started)
        return dataclasses.replace(failed, retryable=False, details=details(case, repeat, []))
    agent.memory.extend(history)
    start = len(agent.history)
    with _case_span(case, repeat):
        try:
            message = agent.send(turn_input(job))
        except AgentSmithError as err:
            outcome = Outcome.failed(err, seconds=time.monotonic() - started, usage=agent.usage)
        else:
            outcome = Outcome(
                content=message.content,
                output=json_ready(message.output),
                usage=agent.usage,
                seconds=time.monotonic() - started,
            )
    messages: list[Message] = agent.history[start:]
    return dataclasses.replace(outcome, details=details(case, repeat, messages))


def _expected_misfit(agent: Agent, case: str, expected: Any) -> EvalError | None:
    """The error for an ``expected`` value that the agent's output type cannot hold."""
    if expected is None or agent.output_type is None:
        return None
    schema = output_schema(agent.output_type)
    try:
        schema.convert(expected, raw=repr(expected))
    except OutputValidationError as err:
        return EvalError(
            f"case {case}: the expected value does not fit the output type {schema.name} ({err})",
            case=case,
        )
    return None


@contextmanager
def _case_span(case: str, repeat: int) -> Iterator[None]:
    """An ``eval_case`` span, current around the run, when tracing is on."""
    t = tracer()
    if t is None:
        yield
        return
    attributes = {EVAL_CASE: case, EVAL_REPEAT: repeat}
    live = LiveSpan(
        t,
        f"{EVAL_CASE_SPAN} {case}",
        api().SpanKind.INTERNAL,
        attributes,  # type: ignore[arg-type]  # str and int are attribute values
        content=False,
        attach=True,
    )
    live.enter()
    try:
        yield
    except BaseException as err:
        live.exit(err)
        raise
    live.exit(None)
