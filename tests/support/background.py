"""Running a blocking call on a thread, and cancelling an agent's send() running there."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from agent_smith import Agent
from agent_smith.errors import CancelledError

#: Generous bound for anything waited on here (a bug fails, never hangs).
WAIT = 10.0
#: The issue's bound for cancel() to stop a running send().
CANCEL_BOUND = 2.0


class Background:
    """Runs ``fn`` on a thread and keeps its result or exception."""

    def __init__(self, fn: Callable[[], Any], *, name: str = "test-send") -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self.done = threading.Event()

        def run() -> None:
            try:
                self.result = fn()
            except BaseException as err:
                self.error = err
            finally:
                self.done.set()

        self.thread = threading.Thread(target=run, name=name)
        self.thread.start()

    def join(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for ``fn`` to finish; True when it did."""
        finished = self.done.wait(timeout)
        if finished:
            self.thread.join(WAIT)
        return finished


def cancel_during_send(
    agent: Agent, text: str, *, reached: threading.Event, release: threading.Event | None = None
) -> Background:
    """Send ``text`` on a thread, ``cancel()`` once ``reached`` is set, expect CancelledError.

    The send must stop within :data:`CANCEL_BOUND`. ``release`` (what holds
    the server or a tool back) is set afterwards either way, so nothing is
    left blocked when an assertion fails.
    """
    job = Background(lambda: agent.send(text))
    try:
        assert reached.wait(WAIT)
        agent.cancel()
        assert job.join(CANCEL_BOUND), "send() still running after cancel()"
    finally:
        if release is not None:
            release.set()
        job.join(WAIT)
    assert isinstance(job.error, CancelledError), job.error
    return job
