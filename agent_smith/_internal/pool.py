"""Worker threads for tool calls and sub-agents.

Why not one shared ``ThreadPoolExecutor``: two invariants rule it out.

* Nesting. A sub-agent runs its loop on a worker and then waits for its own
  tool calls. If those calls queue on the same fixed pool, a tree wider than
  the pool deadlocks: every worker is a parent waiting for children that no
  worker is free to run. So :class:`Runtime` keeps one :class:`WorkerPool` per
  nesting depth. Work at depth *d* only ever waits on work at depth *d + 1*,
  and the deepest level waits on nothing, so there is no wait cycle.
* Hung tools. A tool that never returns holds its thread forever. When the
  dispatcher gives up on a call (timeout or cancellation) it calls
  :meth:`WorkerPool.abandon`, which raises the pool's capacity by one until
  that call finally returns, so later calls never queue behind hung ones.

The pool is otherwise shaped like ``concurrent.futures.thread``: a queue of
work items, threads started lazily up to the capacity, idle threads reused.
Each call runs in a copy of the submitting thread's :mod:`contextvars`
context, taken at submit (threads do not inherit it): whatever an observer
keeps there, such as OpenTelemetry's current span, carries over to the worker
without this module knowing about it, so traces stay whole across the pool.
Threads are daemons because an abandoned call may never return and must not
keep the interpreter alive at exit; ``close()`` still joins every thread whose
call has returned.
"""

from __future__ import annotations

import contextvars
import itertools
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")

_WorkItem = tuple["Future[Any]", contextvars.Context, Callable[..., Any], tuple[Any, ...]]


class WorkerPool:
    """An elastic thread pool: ``capacity`` workers plus one per abandoned call."""

    def __init__(self, name: str, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self._name = name
        self._capacity = capacity
        self._queue: queue.SimpleQueue[_WorkItem | None] = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)
        self._lock = threading.Lock()
        self._threads: set[threading.Thread] = set()
        self._abandoned: set[Future[Any]] = set()
        self._closed = False
        self._counter = itertools.count()

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Schedule ``fn(*args)``; it runs in a copy of the caller's context (contextvars)."""
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError(f"worker pool {self._name} is closed")
            self._queue.put((future, contextvars.copy_context(), fn, args))
        self._ensure_worker()
        return future

    def abandon(self, future: Future[Any]) -> None:
        """Stop counting ``future``'s worker against the capacity.

        Call this when the caller stops waiting for a call that is still
        running; a queued call is simply cancelled instead.
        """
        if future.cancel() or future.done():
            return
        with self._lock:
            if future in self._abandoned:
                return
            self._abandoned.add(future)
            self._capacity += 1
        self._ensure_worker()

    def close(self, *, timeout: float | None = None) -> None:
        """Cancel queued calls, let running ones finish, and join the threads."""
        with self._lock:
            self._closed = True
            threads = list(self._threads)
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                item[0].cancel()
        for _ in threads:
            self._queue.put(None)
        for thread in threads:
            thread.join(timeout)

    def _ensure_worker(self) -> None:
        if self._idle.acquire(blocking=False):
            return
        with self._lock:
            if self._closed or len(self._threads) >= self._capacity:
                return
            thread = threading.Thread(
                target=self._work,
                name=f"agent_smith-{self._name}-{next(self._counter)}",
                daemon=True,
            )
            self._threads.add(thread)
        thread.start()

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                break
            future, context, fn, args = item
            if future.set_running_or_notify_cancel():
                try:
                    result = context.run(fn, *args)
                except BaseException as err:
                    future.set_exception(err)
                else:
                    future.set_result(result)
            del item, context, fn, args
            with self._lock:
                if future in self._abandoned:
                    self._abandoned.discard(future)
                    self._capacity -= 1
                if len(self._threads) > self._capacity:
                    self._threads.discard(threading.current_thread())
                    return
            self._idle.release()
        with self._lock:
            self._threads.discard(threading.current_thread())
