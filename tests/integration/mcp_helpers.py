"""What the MCP client integration tests share: a hook recorder and a many-threads echo run."""

from __future__ import annotations

import threading
from collections.abc import Callable

from agent_smith import LifecycleEvent, McpClient, McpEvent, Notification

#: Generous bound for whole concurrent runs (a bug fails, never hangs).
RUN_BOUND = 60.0


class Recorder:
    """Collects hook events; tests wait on it instead of sleeping."""

    def __init__(self) -> None:
        self.events: list[McpEvent] = []
        self._changed = threading.Condition()

    def __call__(self, event: McpEvent) -> None:
        with self._changed:
            self.events.append(event)
            self._changed.notify_all()

    def kinds(self) -> list[str]:
        return [e.kind.name for e in self.events if isinstance(e, LifecycleEvent)]

    def methods(self) -> list[str]:
        return [e.method for e in self.events if isinstance(e, Notification)]

    def progress(self) -> list[object]:
        """The ``progress`` values of the progress notifications, in order."""
        return [
            e.params["progress"]
            for e in self.events
            if isinstance(e, Notification) and e.method == "notifications/progress"
        ]

    def wait_until(self, predicate: Callable[[], bool], timeout: float = 10.0) -> None:
        with self._changed:
            assert self._changed.wait_for(predicate, timeout), self.events


def echo_from_threads(
    client: McpClient, *, argument: str, threads: int = 10, calls: int = 5
) -> dict[tuple[int, int], str]:
    """Call the server's ``echo`` tool ``calls`` times from each of ``threads`` threads at once.

    Thread ``t`` sends ``t<t>-c<c>`` as ``argument`` in its call ``c``; the
    answers come back by ``(t, c)``. A barrier starts every thread together so
    the calls really overlap.
    """
    barrier = threading.Barrier(threads)
    results: dict[tuple[int, int], str] = {}

    def worker(thread: int) -> None:
        barrier.wait(RUN_BOUND)
        for call in range(calls):
            text = f"t{thread}-c{call}"
            results[(thread, call)] = client.call_tool("echo", {argument: text}).content

    workers = [
        threading.Thread(target=worker, args=(n,), name=f"test-echo-{n}") for n in range(threads)
    ]
    for t in workers:
        t.start()
    for t in workers:
        t.join(RUN_BOUND)
    return results
