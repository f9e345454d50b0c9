"""State shared by a root agent and all its sub-agents during one root send.

A root agent creates a fresh :class:`AgentTree` for each ``send``; children
built for that send (through :meth:`Agent.spawn_child`) receive the same
object. It holds the tree-wide iteration budget (seed §14.2), the tree's
usage meter when the root has usage limits, and the tree's cancellation
source: cancelling the root cancels the tree, and every live
descendant's loop is linked to it.
"""

from __future__ import annotations

import threading

from ..base.cancellation import CancellationSource
from .usage_limits import UsageMeter


class AgentTree:
    """A thread-safe iteration counter with a cap, the tree's cancel source and usage meter."""

    __slots__ = ("_count", "_lock", "cancel", "max_iterations", "meter")

    def __init__(
        self,
        max_iterations: int,
        *,
        cancel: CancellationSource | None = None,
        meter: UsageMeter | None = None,
    ) -> None:
        self.max_iterations = max_iterations
        self.cancel = cancel if cancel is not None else CancellationSource()
        self.meter = meter  # None: no usage limits, nothing metered
        self._count = 0
        self._lock = threading.Lock()

    def take_iteration(self) -> bool:
        """Claim one LLM call for the tree; False once the cap is used up."""
        with self._lock:
            if self._count >= self.max_iterations:
                return False
            self._count += 1
            return True

    def charge(self, count: int) -> None:
        """Count ``count`` LLM calls made earlier (by a paused turn that now resumes)."""
        with self._lock:
            self._count += count

    @property
    def iterations(self) -> int:
        """LLM calls claimed so far by every agent of the tree."""
        with self._lock:
            return self._count
