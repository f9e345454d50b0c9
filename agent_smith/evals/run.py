"""run_eval: every case of a dataset, ``repeat`` times, against an agent, judged as it finishes.

The cases run through the batch machinery (:func:`~agent_smith.batch.run_batch`):
each run of a case is a batch input (id ``"case#repeat"``), so an eval run
has what a batch has. On local threads (``concurrency`` at once) or any
executor, Dask's included; with ``results=`` each run is recorded once
(fsynced), and running again continues where an interrupted run stopped:
recorded runs are read back and judged again, not run again. Evaluators
run in this (the driving) thread as each run arrives, so they need not
pickle, and changing an evaluator re-judges a results file for free.

The agent is an :class:`~agent_smith.batch.AgentSpec` (any executor; agents
are cached per worker process and their history cleared between runs) or
a factory returning a fresh :class:`~agent_smith.Agent` per run (local
threads only: a factory does not travel).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor
from pathlib import Path
from types import TracebackType

from .._internal.closing import Closeable
from ..agent.agent import Agent
from ..base.parts import content_text
from ..batch.inputs import BatchInput
from ..batch.result import BatchResult
from ..batch.run import BatchRun, run_batch
from ..batch.sink import read_results
from ..batch.spec import AgentSpec
from ..errors import ConfigError, ParseError
from ..llm.model import ChatModel
from .case_run import CaseRun, run_id
from .dataset import Dataset
from .evaluator import EvalContext, Evaluator, judge_run
from .progress import ProgressBar
from .report import EvalReport, RunReport, build_report
from .worker import FactoryTask, run_case

AgentSource = AgentSpec | Callable[[], Agent]


def run_eval(
    dataset: Dataset,
    agent: AgentSource,
    *,
    repeat: int = 1,
    concurrency: int = 4,
    executor: Executor | None = None,
    results: str | os.PathLike[str] | None = None,
    evaluators: Sequence[Evaluator] = (),
    judge: ChatModel | None = None,
    progress: bool = False,
    item_timeout: float | None = None,
    retries: int = 0,
) -> EvalRun:
    """Start an eval run; iterate it for judged runs, or call :meth:`EvalRun.report`.

    ``evaluators`` are added to the dataset's (every case gets them, before
    its own); ``judge`` is the model of judges that name none. ``retries``
    (default 0: a failure is the agent's, and counts) and ``item_timeout``
    are the batch's. ``progress`` shows a bar (a terminal's stderr, or the
    notebook cell). ConfigError for a bad argument, before anything runs.
    """
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ConfigError(f"run_eval: repeat must be a positive integer, got {repeat!r}")
    if not isinstance(dataset, Dataset):
        raise ConfigError("run_eval: dataset must be a Dataset (Dataset.load reads a file)")
    if not dataset.cases and not dataset.invalid:
        raise ConfigError(f"run_eval: the dataset {dataset.name!r} has no cases")
    factory: FactoryTask | None = None
    if isinstance(agent, AgentSpec):
        spec: AgentSpec | None = agent
    elif callable(agent):
        spec, factory = None, FactoryTask(agent)
    else:
        raise ConfigError("run_eval: agent must be an AgentSpec or a function returning an Agent")
    inputs = [
        BatchInput(run_id(case.id, r), case.input, case.payload(r))
        for case in dataset.cases
        for r in range(1, repeat + 1)
    ]
    recorded = _recorded(results, {i.id for i in inputs})
    batch = run_batch(
        spec,
        inputs,
        executor=executor,
        concurrency=concurrency,
        results=results,
        retries=retries,
        item_timeout=item_timeout,
        task=factory if factory is not None else run_case,
    )
    return EvalRun(
        dataset,
        batch,
        repeat=repeat,
        recorded=recorded,
        evaluators=(*evaluators, *dataset.evaluators),
        judge=judge,
        factory=factory,
        progress=ProgressBar(len(inputs), done=len(recorded)) if progress else None,
    )


def evaluate(dataset: Dataset, agent: AgentSource, **options: object) -> EvalReport:
    """Run the eval to its end and return its report (``options`` as :func:`run_eval`'s)."""
    with run_eval(dataset, agent, **options) as run:  # type: ignore[arg-type]
        return run.report()


class EvalRun(Closeable, Iterator[RunReport]):
    """A running eval: iterate it for each judged run; :meth:`report` runs it to its end.

    ``skipped`` runs were read back from the results file; ``pending`` runs
    are still to come. :meth:`cancel` stops it from any thread.
    """

    def __init__(
        self,
        dataset: Dataset,
        batch: BatchRun,
        *,
        repeat: int,
        recorded: Sequence[BatchResult],
        evaluators: Sequence[Evaluator],
        judge: ChatModel | None,
        factory: FactoryTask | None,
        progress: ProgressBar | None,
    ) -> None:
        self.dataset = dataset
        self.repeat = repeat
        self.skipped = batch.skipped
        self.pending = batch.pending
        self._batch = batch
        self._cases = {case.id: case for case in dataset.cases}
        self._evaluators = tuple(evaluators)
        self._judge = judge
        self._factory = factory
        self._progress = progress
        self._judged = [self._judge_result(r) for r in recorded]

    def __next__(self) -> RunReport:
        try:
            result = next(self._batch)
        except StopIteration:
            self._finish()
            raise
        judged = self._judge_result(result)
        self._judged.append(judged)
        if self._progress is not None:
            self._progress.advance(judged.passed)
        return judged

    def report(self) -> EvalReport:
        """Run what is left and return the report of every run (recorded ones included)."""
        for _ in self:
            pass
        cases = [(c.id, content_text(c.input), c.metadata) for c in self.dataset.cases]
        invalid = [(err.case or err.where or "?", str(err)) for err in self.dataset.invalid]
        return build_report(self.dataset.name, self.repeat, cases, self._judged, invalid)

    def cancel(self) -> None:
        """Stop the run from any thread: running turns are cancelled, iterating raises."""
        if self._factory is not None:
            self._factory.cancel()
        self._batch.cancel()

    def close(self) -> None:
        """Stop what is in flight and close the results file (safe to call twice)."""
        try:
            self._batch.close()
        finally:
            self._finish()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is not None and self._factory is not None:
            self._factory.cancel()  # Ctrl-C or an error while iterating: stop the turns
        self.close()

    def _finish(self) -> None:
        progress, self._progress = self._progress, None
        if progress is not None:
            progress.close()

    def _judge_result(self, result: BatchResult) -> RunReport:
        run = CaseRun.from_result(result)
        case = self._cases[run.case]
        evaluators = (*self._evaluators, *case.evaluators)
        ctx = EvalContext(case, run, self._judge)
        return RunReport(run, tuple(judge_run(evaluators, ctx)))


def _recorded(results: str | os.PathLike[str] | None, wanted: set[str]) -> list[BatchResult]:
    """The runs of this eval already in the results file (to judge, not to run again)."""
    if results is None or not Path(results).exists():
        return []
    found = []
    for result in read_results(results):
        if result.id not in wanted:
            continue
        with contextlib.suppress(ParseError):  # not an eval's line: the batch runs it again
            CaseRun.from_result(result)
            found.append(result)
    return found
