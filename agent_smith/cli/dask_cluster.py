"""The Dask side of ``agent-smith batch``: a client of a scheduler, or a local cluster.

Imported only for ``--scheduler``/``--local-cluster``: Dask (``distributed``)
is the optional extra ``agent-smith[dask]``, and nothing else in the package
imports it.

Local worker processes are children of the command, so they sit in the
terminal's process group and a Ctrl-C reaches them too; each one ignores
SIGINT (a worker plugin, so a worker the nanny restarts does as well) and
leaves the interrupt to the driver, which cancels the run and then closes
the cluster. On interrupt the driver also cancels the turns still running on
the workers, which Dask's own cancellation cannot stop (a running task's
thread runs on), so no worker keeps paying for an LLM call nobody will read.

Cancelling races with results still arriving: Dask's ``ClientExecutor`` then
tries to set a result on the future just cancelled, and tornado logs that
``InvalidStateError`` with a traceback. It is harmless (the result is not
wanted), so while the command runs that one log record is dropped.
"""

from __future__ import annotations

import contextlib
import logging
import signal
from collections.abc import Iterator
from concurrent.futures import Executor, InvalidStateError
from typing import Any

from distributed import Client, LocalCluster
from distributed.diagnostics.plugin import WorkerPlugin

from ..batch.worker import stop_run

log = logging.getLogger("agent_smith.batch")


class IgnoreInterrupts(WorkerPlugin):
    """Makes a local worker process ignore the terminal's Ctrl-C."""

    name = "agent-smith-ignore-sigint"

    def setup(self, worker: Any) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # runs on the worker's main thread


class _CancelledResultRace(logging.Filter):
    """Drops tornado's log of a result set on a future the batch had cancelled."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (isinstance(error, InvalidStateError) and "CANCELLED" in str(error))


class DaskBackend:
    """A connected Dask client: its executor, and the cancelling of running turns."""

    def __init__(self, client: Any, where: str) -> None:
        self.client = client
        self.where = where
        self.executor: Executor = client.get_executor()

    def cancel(self, run: str) -> None:
        """Stop batch ``run`` on the workers: its running turns and any input still starting."""
        try:
            cancelled = self.client.run(stop_run, run)
        except (OSError, TimeoutError) as err:  # the cluster is going away anyway
            log.warning("batch: could not cancel the running turns on the workers: %s", err)
            return
        log.info("batch: cancelled %d running turn(s) on the workers", sum(cancelled.values()))


@contextlib.contextmanager
def dask_backend(
    *, scheduler: str | None, local_workers: int | None, threads: int, timeout: str
) -> Iterator[DaskBackend]:
    """Connect to ``scheduler``, or start ``local_workers`` processes of ``threads`` each."""
    with contextlib.ExitStack() as stack:
        quiet, tornado = _CancelledResultRace(), logging.getLogger("tornado.application")
        tornado.addFilter(quiet)
        stack.callback(tornado.removeFilter, quiet)
        target: Any = scheduler
        where = f"the Dask cluster at {scheduler}"
        if local_workers is not None:
            cluster = LocalCluster(  # type: ignore[no-untyped-call]
                n_workers=local_workers,
                threads_per_worker=threads,
                processes=True,
                dashboard_address=None,
                plugins=(IgnoreInterrupts(),),  # also for workers the nanny restarts
            )
            target = stack.enter_context(cluster)
            where = f"{local_workers} local Dask worker process(es)"
        client = Client(target, timeout=timeout)  # type: ignore[no-untyped-call]
        stack.enter_context(client)
        yield DaskBackend(client, where)
