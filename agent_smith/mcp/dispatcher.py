"""The client's event thread: hook calls, list refreshes and server-request handlers, in order.

Readers (the stdio reader thread, HTTP body readers) must never block on user
code, so everything that may be slow runs here, one job at a time in arrival
order. A ``list_changed`` notification refreshes the list before the hook
hears of it, so a hook that reads ``client.tools`` sees the new list.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

from ..errors import AgentSmithError
from ..logs import invoke_hook
from .events import McpEvent, McpHook, Notification

log = logging.getLogger(__name__)

_JOIN_TIMEOUT = 10.0


class EventDispatcher:
    """One thread (``agent_smith-mcp-events-<alias>``) running jobs in order for server ``alias``.

    ``hook`` may be replaced at any time; each event goes to the hook set
    when its job runs.
    """

    def __init__(self, alias: str, hook: McpHook | None = None) -> None:
        self.alias = alias
        self.hook = hook
        self._jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        # Daemon only so a client nobody closed cannot hang interpreter exit; close() joins it.
        self._thread = threading.Thread(
            target=self._run, name=f"agent_smith-mcp-events-{alias}", daemon=True
        )
        self._thread.start()

    def submit(self, job: Callable[[], None]) -> None:
        """Run ``job`` on the event thread after every job submitted before it."""
        self._jobs.put(job)

    def emit(self, event: McpEvent) -> None:
        """Tell the hook (whichever is set when the job runs) about ``event``."""
        self.submit(lambda: invoke_hook(self.hook, event, name="MCP event hook"))

    def refresh_then_emit(
        self, refresh: Callable[[], object], event: Notification, *, quiet: Callable[[], bool]
    ) -> None:
        """Run ``refresh``, then tell the hook; a failed refresh is logged, not raised."""

        def job() -> None:
            try:
                refresh()
            except AgentSmithError as err:
                level = logging.DEBUG if quiet() else logging.WARNING
                log.log(
                    level, "MCP server %s: refresh on %s failed: %s", self.alias, event.method, err
                )
            invoke_hook(self.hook, event, name="MCP event hook")

        self.submit(job)

    def close(self, timeout: float = _JOIN_TIMEOUT) -> None:
        """Run what was submitted, then stop and join the thread (unless called from it)."""
        self._jobs.put(None)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("%s is stuck in a hook or handler; not joined", self._thread.name)

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                job()
            except Exception:  # one broken job must not stop the events after it
                log.exception("MCP event job failed")
