"""The per-process cache of built agents, keyed by the spec they were built from.

A batch runs thousands of inputs through the same spec, so each process
builds what is expensive once and reuses it for every input it runs: one
:class:`Runtime` (its HTTP connection pool kept alive), one LLM client, and
one connection per MCP server (an MCP client takes calls from many threads at
once). What it cannot share is the :class:`Agent` itself: an agent runs one
turn at a time and keeps a history. So each spec has a small pool of agents:
a run takes an idle one (building one only when none is idle), the history
is cleared when it comes back. The pool therefore holds as many agents as
inputs ever ran at once in this process, and no more: one per Dask worker
thread, or ``concurrency`` for local threads.

A pool rather than one agent per thread (``threading.local``) because
thread identity says nothing useful here: a Dask worker may run a task on
any of its threads or on a seceded one, a ``ThreadPoolExecutor`` may replace
its threads, and a thread-local agent could never be closed when its thread
ends, leaving its turn timers and MCP hooks behind. The pool closes every
agent it built, and the shared parts, in :meth:`AgentCache.close`.

Stopping a batch run (Ctrl-C in the driver) stops its inputs in every
process: :meth:`AgentCache.stop` marks the run stopped and cancels the turns
its agents are running; a run of it that starts later is refused, and one
that was just starting cancels itself at its first message (a hook), so no
turn of a stopped run slips between the mark and the cancel.

Known limit: the agents of one spec share each MCP connection, and an MCP
client reports ``tools/list_changed`` to one agent only, so the others keep
the tool list they were built with.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._internal.closing import Closeable
from ..errors import AgentSmithError, CancelledError
from ..runtime import Runtime

if TYPE_CHECKING:
    from ..agent.agent import Agent
    from ..llm.model import ChatModel
    from ..mcp.client import McpClient
    from .spec import AgentSpec

log = logging.getLogger("agent_smith.batch")


@dataclass(frozen=True)
class CacheStats:
    """What a cache built for one spec: agents, LLM clients, MCP connections."""

    agents: int = 0
    llm_clients: int = 0
    mcp_connections: int = 0


class AgentCache(Closeable):
    """Agents built from specs in this process, lent to one input at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pools: dict[str, _SpecAgents] = {}
        self._stopped: set[str] = set()  # ids of stopped batch runs (a few bytes each)
        self._closed = False

    @contextlib.contextmanager
    def lease(self, spec: AgentSpec, *, slots: int, run: str = "") -> Iterator[Agent]:
        """Lend an agent built from ``spec`` to an input of batch ``run``; its history is fresh.

        ``slots`` (how many inputs may be in flight at once) sizes the HTTP
        connection pool when the spec's shared parts are first built. Raises
        CancelledError if ``run`` was stopped or the cache closed.
        """
        if self.stopped(run):
            raise CancelledError("the batch run was stopped", operation="batch item")
        pool = self._pool(spec, slots)
        slot = pool.take(run)
        try:
            yield slot.agent
        finally:
            pool.give_back(slot)

    def stopped(self, run: str) -> bool:
        """Whether :meth:`stop` was called for ``run``."""
        with self._lock:
            return run in self._stopped

    def stop(self, run: str) -> int:
        """Stop batch ``run`` here: cancel its running turns, refuse its later inputs.

        Returns how many running turns were cancelled.
        """
        with self._lock:
            self._stopped.add(run)  # first: a turn starting from now on sees it
            pools = list(self._pools.values())
        return sum(pool.cancel_run(run) for pool in pools)

    def stats(self, spec: AgentSpec) -> CacheStats:
        """How much this cache has built for ``spec``."""
        with self._lock:
            pool = self._pools.get(spec.key)
        return pool.stats() if pool is not None else CacheStats()

    def close(self) -> None:
        """Cancel lent agents and close every agent, MCP client and runtime built."""
        with self._lock:
            self._closed = True
            pools = list(self._pools.values())
            self._pools.clear()
        for pool in pools:
            pool.close()

    def _pool(self, spec: AgentSpec, slots: int) -> _SpecAgents:
        key = spec.key
        with self._lock:
            if self._closed:
                raise _closed_error()
            pool = self._pools.get(key)
            if pool is None:
                pool = self._pools[key] = _SpecAgents(spec, slots, stopped=self.stopped)
            return pool


class _Slot:
    """One agent of a pool and the batch run it is lent to (None: idle)."""

    __slots__ = ("agent", "run")

    def __init__(self) -> None:
        self.agent: Agent  # set once built: the agent's hook needs the slot first
        self.run: str | None = None

    def on_message(self, message: object, stopped: Callable[[str], bool]) -> None:
        """The agent's message hook: a turn of a stopped run cancels itself."""
        run = self.run
        if run is not None and stopped(run):
            self.agent.cancel()


class _SpecAgents:
    """One spec's shared parts (built on first use) and its idle and lent agents."""

    def __init__(self, spec: AgentSpec, slots: int, *, stopped: Callable[[str], bool]) -> None:
        self._spec = spec
        self._slots = slots
        self._stopped = stopped
        self._lock = threading.Lock()
        self._build_lock = threading.Lock()  # held while connecting: slow, and done once
        self._runtime: Runtime | None = None
        self._llm: ChatModel | None = None
        self._mcp: list[McpClient] = []
        self._idle: list[_Slot] = []
        self._lent: list[_Slot] = []
        self._closed = False

    def take(self, run: str) -> _Slot:
        with self._lock:
            if self._closed:
                raise _closed_error()
            if self._idle:
                slot = self._idle.pop()
                slot.run = run
                self._lent.append(slot)
                return slot
        slot = self._build()
        with self._lock:
            slot.run = run
            self._lent.append(slot)
            closed = self._closed
        if closed:  # closed while building: nobody will take this one back
            self.give_back(slot)
            raise _closed_error()
        return slot

    def give_back(self, slot: _Slot) -> None:
        agent = slot.agent
        agent.memory.clear()  # the next input starts a fresh conversation
        with self._lock:
            slot.run = None
            self._lent.remove(slot)
            if not self._closed:
                self._idle.append(slot)
                return
        agent.close()

    def cancel_run(self, run: str) -> int:
        with self._lock:
            agents = [s.agent for s in self._lent if s.run == run]
        for agent in agents:
            agent.cancel()
        return len(agents)

    def stats(self) -> CacheStats:
        with self._lock:
            agents = len(self._idle) + len(self._lent)  # every agent built, until closed
            return CacheStats(agents, int(self._llm is not None), len(self._mcp))

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            lent = list(self._lent)
        for slot in lent:
            slot.agent.cancel()
        for slot in idle:
            slot.agent.close()
        with self._build_lock:
            _close_all(self._mcp)
            self._mcp = []
            if self._runtime is not None:
                self._runtime.close()

    def _build(self) -> _Slot:
        from ..agent.events import AgentHooks

        with self._build_lock:
            if self._llm is None:
                self._connect()
            assert self._runtime is not None
            slot = _Slot()
            hooks = AgentHooks(on_message=functools.partial(slot.on_message, stopped=self._stopped))
            slot.agent = self._spec.build(
                runtime=self._runtime, llm=self._llm, mcp_clients=self._mcp, hooks=hooks
            )
            return slot

    def _connect(self) -> None:
        """Make the runtime, LLM client and MCP connections (under the build lock)."""
        from ..mcp.client import McpClient

        runtime = Runtime(http_pool_size=max(10, self._slots))
        clients: list[McpClient] = []
        try:
            llm = self._spec.make_llm(runtime=runtime)
            for server in self._spec.mcp_servers:
                clients.append(McpClient.connect(server, runtime=runtime))
        except BaseException:
            _close_all(clients)
            runtime.close()
            raise
        log.info(
            "batch: built the LLM client and %d MCP connection(s) for spec %s",
            len(clients),
            self._spec.key[:8],
        )
        self._runtime, self._llm, self._mcp = runtime, llm, clients


def _closed_error() -> CancelledError:
    return CancelledError("the batch's agent cache is closed", operation="batch item")


def _close_all(clients: list[McpClient]) -> None:
    for client in clients:
        try:
            client.close()
        except AgentSmithError:
            log.warning("batch: closing MCP client %s failed", client.alias)


_process_cache: AgentCache | None = None
_process_lock = threading.Lock()


def process_cache() -> AgentCache:
    """This process's cache (a worker's), created on first use and closed at exit."""
    global _process_cache
    with _process_lock:
        if _process_cache is None:
            _process_cache = AgentCache()
            atexit.register(_process_cache.close)
        return _process_cache
