"""run_batch: the same agent over many inputs, on any executor, resumable.

The driver (the process that calls :func:`run_batch`) keeps at most
``concurrency`` inputs in flight on the executor and yields each
:class:`BatchResult` as it finishes, in completion order. Everything that
makes results trustworthy happens here, in one thread:

* **Durable.** With ``results=`` each result is written to the results file
  (and synced) before it is yielded.
* **Resumable.** Ids already in the results file are skipped, so rerunning
  after a crash or Ctrl-C picks up where the batch stopped; inputs that were
  in flight then simply run again. ``rerun_failed=True`` removes the failed
  results first, so those inputs run again too.
* **Exactly once.** An id is recorded and yielded once: a retry is only
  submitted after its previous attempt finished, and a second result for an
  id already recorded (an executor that ran a task twice) is dropped.
* **Never dropped.** A failure is a result with ``error`` set, after up to
  ``retries`` more attempts (none for a ConfigError, which would repeat). A
  worker that dies is the executor's business: Dask runs its tasks again
  elsewhere; when it gives up (``KilledWorker``) that is a failed attempt.

Executors: ``None`` (the default) runs on ``concurrency`` local threads of
this process; any ``concurrent.futures.Executor`` works, for example a
``ProcessPoolExecutor`` or Dask's ``Client.get_executor()``. Workers of a
process pool or a Dask cluster build agents in their own process-wide cache;
on threads of this process (the default, or a ``ThreadPoolExecutor`` you
pass) the batch uses a cache of its own and closes it at the end.

A run with a ``task`` of its own (evals run cases this way) submits that
module-level function instead of :func:`~.worker.run_item`; each input's
``payload`` reaches it in the :class:`~.worker.Job`, and the ``details`` of
its :class:`~.worker.Outcome` are recorded with the result.

Stopping early (``close()``, ``break``, Ctrl-C in the loop) cancels every
input in flight: on local threads the running turns are cancelled, on other
executors their futures are; nothing half-written is left behind.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
import time
import uuid
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from concurrent.futures import (
    FIRST_COMPLETED,
    Executor,
    Future,
    InvalidStateError,
    ThreadPoolExecutor,
    wait,
)
from dataclasses import dataclass
from typing import Any

from .._internal.closing import Closeable
from ..errors import CancelledError, ConfigError
from .cache import AgentCache
from .inputs import BatchInput, as_inputs
from .result import BatchResult
from .sink import ResultSink, open_sink
from .spec import AgentSpec
from .worker import Job, Outcome, Task, run_item

log = logging.getLogger("agent_smith.batch")

#: How long closing waits for cancelled turns on local threads to return.
CANCEL_WAIT = 10.0


def run_batch(
    spec: AgentSpec | None,
    inputs: Iterable[BatchInput | Mapping[str, object] | str],
    *,
    executor: Executor | None = None,
    concurrency: int = 8,
    results: str | os.PathLike[str] | None = None,
    retries: int = 2,
    item_timeout: float | None = None,
    rerun_failed: bool = False,
    task: Task = run_item,
) -> BatchRun:
    """Run the agent of ``spec`` on every input; iterate the returned run for results.

    ``inputs`` are :class:`BatchInput` values, ``{"id", "input"}`` mappings or
    strings (see :mod:`.inputs`). ``item_timeout`` (seconds) bounds each
    attempt's turn (it becomes the agent's ``deadline`` when shorter). The
    results file is opened, and its recorded ids read, before this returns:
    a ConfigError (bad arguments or inputs) or ResultsError (the file) is
    raised here, before any input runs. ``task`` replaces what runs per
    attempt (see the module doc); ``spec`` may then be None, for a task that
    makes its own agents on local threads. Use the run as a context manager, or
    iterate it to the end, so the file is closed.
    """
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigError(f"run_batch: concurrency must be a positive integer, got {concurrency!r}")
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ConfigError(f"run_batch: retries must be a non-negative integer, got {retries!r}")
    if item_timeout is not None and (
        isinstance(item_timeout, bool)
        or not isinstance(item_timeout, (int, float))
        or not item_timeout > 0
    ):
        raise ConfigError(f"run_batch: item_timeout must be positive, got {item_timeout!r}")
    if not isinstance(spec, AgentSpec) and not (spec is None and task is not run_item):
        raise ConfigError("run_batch: spec must be an AgentSpec (AgentSpec.load reads a file)")
    if spec is None and executor is not None and not isinstance(executor, ThreadPoolExecutor):
        raise ConfigError("run_batch: without a spec the task makes its agents: local threads only")
    if executor is not None and not isinstance(executor, Executor):
        raise ConfigError("run_batch: executor must be a concurrent.futures.Executor")
    items = as_inputs(inputs)
    spec = _with_deadline(spec, item_timeout)
    sink = open_sink(results) if results is not None else None
    try:
        if sink is not None and rerun_failed:
            dropped = sink.drop_failed()
            if dropped:
                log.info("batch: %d failed result(s) removed to run again", dropped)
        done = set(sink.recorded()) if sink is not None else set()
    except BaseException:
        if sink is not None:
            sink.close()
        raise
    todo = [item for item in items if item.id not in done]
    return BatchRun(
        spec,
        todo,
        skipped=len(items) - len(todo),
        sink=sink,
        executor=executor,
        concurrency=concurrency,
        retries=retries,
        task=task,
    )


@dataclass(frozen=True)
class _Attempt:
    item: BatchInput
    number: int
    submitted: float


class BatchRun(Closeable, Iterator[BatchResult]):
    """A running batch: iterate it for results; ``skipped``, ``pending``, ``done`` count.

    ``id`` names this run on the workers (see :func:`~agent_smith.batch.worker.stop_run`).
    ``skipped`` inputs were already in the results file; ``pending`` is how
    many this run will produce a result for; ``done`` how many it has
    recorded so far (also one written just before an interrupt). ``spec`` is
    None only for a task that makes its own agents.
    """

    def __init__(
        self,
        spec: AgentSpec | None,
        todo: list[BatchInput],
        *,
        skipped: int,
        sink: ResultSink | None,
        executor: Executor | None,
        concurrency: int,
        retries: int,
        task: Task = run_item,
    ) -> None:
        self.spec = spec
        self.id = uuid.uuid4().hex
        self.skipped = skipped
        self.pending = len(todo)
        self.done = 0
        self._todo = todo
        self._sink = sink
        self._executor = executor
        self._concurrency = concurrency
        self._retries = retries
        self._task = task
        # Done when cancel() is called: in the wait set, it wakes the driver at once.
        self._cancelled: Future[None] = Future()
        self._results = self._drive()

    def __next__(self) -> BatchResult:
        return next(self._results)

    def cancel(self) -> None:
        """Stop the run from any thread: iterating it then raises CancelledError.

        What is in flight is cancelled and the results file closed, as by
        :meth:`close` (which only the iterating thread may call).
        """
        with contextlib.suppress(InvalidStateError):  # cancelled already
            self._cancelled.set_result(None)

    def close(self) -> None:
        """Stop: cancel what is in flight, close the results file (safe to call twice)."""
        self._results.close()
        self._release()

    def _release(self) -> None:
        sink, self._sink = self._sink, None
        if sink is not None:
            sink.close()

    def _drive(self) -> Generator[BatchResult, None, None]:
        owned = self._executor is None
        executor = self._executor or ThreadPoolExecutor(
            self._concurrency, thread_name_prefix="agent_smith-batch"
        )
        # Threads of this process need no pickling: they share one cache this run closes.
        local = isinstance(executor, ThreadPoolExecutor)
        cache = AgentCache() if local else None
        task: Callable[[Job], Outcome] = self._task
        if cache is not None:
            task = functools.partial(self._task, cache=cache)
        queue: deque[tuple[BatchInput, int]] = deque((item, 1) for item in self._todo)
        in_flight: dict[Future[Outcome], _Attempt] = {}
        recorded: set[str] = set()
        try:
            while queue or in_flight:
                while queue and len(in_flight) < self._concurrency:
                    item, number = queue.popleft()
                    job = Job(
                        self.spec,
                        item.id,
                        item.input,
                        number,
                        self.id,
                        self._concurrency,
                        item.payload,
                    )
                    in_flight[self._submit(executor, task, job)] = _Attempt(
                        item, number, time.monotonic()
                    )
                waiting: list[Future[Any]] = [*in_flight, self._cancelled]
                finished, _ = wait(waiting, return_when=FIRST_COMPLETED)
                if self._cancelled.done():
                    raise CancelledError("the batch run was cancelled", operation="batch")
                for future in finished:
                    attempt = in_flight.pop(future)
                    outcome = _settle(future, attempt)
                    error = outcome.error
                    if error is not None and outcome.retryable and attempt.number <= self._retries:
                        log.info(
                            "batch: %s failed (%s), attempt %d of %d",
                            attempt.item.id,
                            error,
                            attempt.number,
                            self._retries + 1,
                        )
                        queue.appendleft((attempt.item, attempt.number + 1))
                        continue
                    if attempt.item.id in recorded:
                        log.warning("batch: a second result for %s was dropped", attempt.item.id)
                        continue
                    result = _result(attempt, outcome)
                    if self._sink is not None:
                        self._sink.write(result)
                    recorded.add(result.id)
                    self.done += 1
                    yield result
        finally:
            self._stop(executor, owned=owned, cache=cache, in_flight=list(in_flight))

    def _submit(
        self, executor: Executor, task: Callable[[Job], Outcome], job: Job
    ) -> Future[Outcome]:
        try:
            return executor.submit(task, job)
        except RuntimeError as err:  # shut down, or broken (a process pool whose worker died)
            raise ConfigError(f"run_batch: the executor refused work ({err})") from err

    def _stop(
        self,
        executor: Executor,
        *,
        owned: bool,
        cache: AgentCache | None,
        in_flight: list[Future[Outcome]],
    ) -> None:
        try:
            for future in in_flight:
                future.cancel()
            if cache is not None:
                cache.stop(self.id)  # running turns on our threads stop within moments
                wait(in_flight, timeout=CANCEL_WAIT)
            if owned:
                executor.shutdown(wait=True, cancel_futures=True)
        finally:
            try:
                if cache is not None:
                    cache.close()
            finally:
                self._release()


def _settle(future: Future[Outcome], attempt: _Attempt) -> Outcome:
    """The attempt's outcome, also when the executor failed it (a dead worker, a bug)."""
    if future.cancelled():  # by the executor itself, e.g. a cluster that restarted
        err: BaseException = CancelledError("the executor cancelled it", operation="batch item")
    else:
        raised = future.exception()
        if raised is None:
            return future.result()
        err = raised
    return Outcome.failed(err, seconds=time.monotonic() - attempt.submitted)


def _result(attempt: _Attempt, outcome: Outcome) -> BatchResult:
    failed = outcome.error is not None
    return BatchResult(
        id=attempt.item.id,
        input=attempt.item.input,
        content=None if failed else outcome.content,
        output=None if failed else outcome.output,
        usage=outcome.usage,
        error=outcome.error,
        attempts=attempt.number,
        seconds=round(outcome.seconds, 6),  # microseconds: what a results file is worth
        details=outcome.details,
    )


def _with_deadline(spec: AgentSpec | None, item_timeout: float | None) -> AgentSpec | None:
    """``spec`` with its agent's deadline at most ``item_timeout``."""
    if item_timeout is None or spec is None:
        return spec
    deadline = spec.config.deadline
    if deadline is not None and deadline <= item_timeout:
        return spec
    config = dataclasses.replace(spec.config, deadline=float(item_timeout))
    return dataclasses.replace(spec, config=config)
