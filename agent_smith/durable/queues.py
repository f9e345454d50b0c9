"""Durable queues: many turns, or a batch's inputs, through a DBOS queue across processes.

A DBOS queue lives in the database: whatever is enqueued on it waits there
until a launched engine that works the queue (:meth:`DurableEngine.work_queue
<agent_smith.durable.DurableEngine.work_queue>`, in any process on the same
database) takes it, never more at once than the queue's ``concurrency``
across all those processes (and ``per_process`` in each). An engine takes
work only from the queues it works (and from its own queue of the runs after
a decision), so a process without the agent never takes its turns.
A process that dies with work taken leaves it to DBOS's recovery, which
runs it again.

Two things go through queues:

* durable turns, :meth:`DurableAgent.start(message, queue=...)
  <agent_smith.durable.DurableAgent.start>`: the turn's workflow is
  enqueued, and whichever process takes it runs it (``result(turn_id)``
  waits for it from anywhere);
* any function calls, :class:`DurableQueue`: a
  :class:`concurrent.futures.Executor` whose calls are workflows on a queue,
  so ``run_batch(spec, inputs, executor=DurableQueue(engine, "batch"))``
  runs a batch on the processes that work that queue instead of Dask. The
  batch's driver keeps its guarantees (each id recorded once, retries,
  resumable results file); a call that a dead process leaves is run again by
  DBOS, and the driver drops a second result as it does for Dask.

A :class:`DurableQueue` call and its result are pickled, as a process pool
or Dask does: the processes on one database trust each other.
"""

from __future__ import annotations

import base64
import pickle
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import TYPE_CHECKING, Any

from dbos import DBOS, DBOSClient

from ..errors import ConfigError

if TYPE_CHECKING:
    from .engine import DurableEngine

#: The name of the workflow a :class:`DurableQueue` call runs as.
CALL_WORKFLOW = "agent_smith.queued_call"
#: How often DBOS looks for work on a queue, and a :class:`DurableQueue` for results (seconds).
QUEUE_POLL = 0.25
_ENDED = ["SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"]


def check_limits(name: str, concurrency: int | None, per_process: int | None) -> None:
    """Raise :class:`~agent_smith.errors.ConfigError` unless both limits are positive or None."""
    for limit in (concurrency, per_process):
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, int) or limit < 1
        ):
            raise ConfigError(
                f"queue {name!r}: a concurrency limit must be positive, got {limit!r}"
            )


def register_queue(name: str, concurrency: int | None, per_process: int | None) -> None:
    """Declare queue ``name`` with its limits in the launched DBOS of this process."""
    DBOS.register_queue(
        name,
        global_concurrency=concurrency,
        worker_concurrency=per_process,
        polling_interval_sec=QUEUE_POLL,
    )


def enqueue(client: DBOSClient, queue: str, workflow: str, workflow_id: str, *args: object) -> None:
    """Enqueue workflow ``workflow`` with ``args`` as ``workflow_id`` on ``queue``."""
    options: Any = {"queue_name": queue, "workflow_name": workflow, "workflow_id": workflow_id}
    client.enqueue(options, *args)


def _encode(value: object) -> str:
    return base64.b64encode(pickle.dumps(value)).decode("ascii")


def _decode(text: str) -> Any:
    return pickle.loads(base64.b64decode(text))  # our own queue's payload


@DBOS.workflow(name=CALL_WORKFLOW)
def _call_workflow(payload: str) -> str:
    """One :class:`DurableQueue` call: ``fn(*args, **kwargs)``'s result, pickled."""
    fn, args, kwargs = _decode(payload)
    return _encode(fn(*args, **kwargs))


class DurableQueue(Executor):
    """An executor whose calls run as workflows on the DBOS queue ``name``.

    ``engine`` is this process's :class:`~agent_smith.durable.DurableEngine`
    (it enqueues; launched and working the queue, this process runs calls
    too). One named thread (``agent_smith-durable-queue``) hands results to
    the futures, looking every :data:`QUEUE_POLL` seconds; ``shutdown`` joins
    it. Cancelling a future cancels its workflow.
    """

    def __init__(self, engine: DurableEngine, name: str) -> None:
        self._client = engine.client
        self._name = name
        self._lock = threading.Lock()
        self._futures: dict[str, Future[Any]] = {}
        self._closed = threading.Event()
        self._watcher = threading.Thread(
            target=self._watch, name="agent_smith-durable-queue", daemon=True
        )
        self._watcher.start()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        if self._closed.is_set():
            raise RuntimeError(f"durable queue {self._name!r} is shut down")
        future: Future[Any] = Future()
        call_id = f"{self._name}/{uuid.uuid4().hex}"
        enqueue(self._client, self._name, CALL_WORKFLOW, call_id, _encode((fn, args, kwargs)))
        with self._lock:
            self._futures[call_id] = future
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if cancel_futures:
            with self._lock:
                pending = list(self._futures.values())
            for future in pending:
                future.cancel()
            self._settle()  # the cancelled futures' workflows are cancelled too
        self._closed.set()
        if wait:
            self._watcher.join()

    def _watch(self) -> None:
        while not self._closed.wait(QUEUE_POLL):
            self._settle()

    def _settle(self) -> None:
        """Cancel the workflows of cancelled futures; hand ended workflows' results over."""
        with self._lock:
            watched = dict(self._futures)
        if not watched:
            return
        for call_id, future in watched.items():
            if future.cancelled():
                self._client.cancel_workflow(call_id)
                self._forget(call_id)
        ended = self._client.list_workflows(
            workflow_ids=list(watched), status=_ENDED, load_input=False, load_output=False
        )
        for status in ended:
            future = watched[status.workflow_id]
            self._forget(status.workflow_id)
            if not future.set_running_or_notify_cancel():
                continue
            try:
                text: str = self._client.retrieve_workflow(status.workflow_id).get_result()
                future.set_result(_decode(text))
            except Exception as err:  # the call's own failure, or DBOS's (cancelled)
                future.set_exception(err)

    def _forget(self, call_id: str) -> None:
        with self._lock:
            self._futures.pop(call_id, None)
