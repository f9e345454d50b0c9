"""The runtime: one HTTP session and the worker pools, shared by many agents.

One :class:`Runtime` per process is typical; clients and agents created
without one share :func:`default_runtime`. A runtime is a context manager and
``close()`` shuts its pools down and closes its connections.
"""

from __future__ import annotations

import atexit
import logging
import threading

import requests

from ._internal.closing import Closeable
from ._internal.pool import WorkerPool
from ._internal.sockets import WatchingAdapter

log = logging.getLogger(__name__)

DEFAULT_MAX_WORKERS = 8


class Runtime(Closeable):
    """Owns the ``requests.Session`` and the per-depth worker pools.

    ``max_workers`` is the number of tool calls (or sub-agents) that run at
    once at each nesting depth; ``http_pool_size`` the number of kept-alive
    connections per host (default: enough for every worker at two depths).
    ``trace_content`` lets OpenTelemetry spans record prompts, replies, tool
    arguments and results (redacted); off by default (see docs/tracing.md).
    """

    def __init__(
        self,
        *,
        max_workers: int = DEFAULT_MAX_WORKERS,
        http_pool_size: int | None = None,
        trace_content: bool = False,
    ) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self.max_workers = max_workers
        self.trace_content = trace_content
        self.session = requests.Session()
        size = http_pool_size or max(10, 2 * max_workers)
        adapter = WatchingAdapter(pool_connections=size, pool_maxsize=size, max_retries=0)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self._pools: dict[int, WorkerPool] = {}
        self._lock = threading.Lock()
        self._closed = False

    def pool(self, depth: int = 0) -> WorkerPool:
        """The worker pool for calls made by agents at nesting ``depth``."""
        with self._lock:
            if self._closed:
                raise RuntimeError("runtime is closed")
            pool = self._pools.get(depth)
            if pool is None:
                pool = self._pools[depth] = WorkerPool(f"worker-d{depth}", self.max_workers)
            return pool

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self, *, timeout: float = 10.0) -> None:
        """Shut the pools down (waiting up to ``timeout`` per pool) and the session."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            pools = list(self._pools.values())
        for pool in pools:
            pool.close(timeout=timeout)
        self.session.close()


_default: Runtime | None = None
_default_lock = threading.Lock()


def default_runtime() -> Runtime:
    """The process-wide runtime used when none is passed (closed at exit)."""
    global _default
    with _default_lock:
        if _default is None or _default.closed:
            _default = Runtime()
            atexit.register(_default.close)
        return _default
