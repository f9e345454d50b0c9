"""One send's state: cancellation, iteration counters, usage, guards and stop conditions.

The agent loop creates a :class:`Turn` per ``send`` and asks it, before each
LLM call, whether a stop condition fired (seed §15.3). A deadline is enforced
by a timer that cancels the turn, so a stalled stream or a slow tool is cut
short too; the loop then reports ``AgentStopped("deadline")``.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Sequence

from ..base.cancellation import CancellationSource
from ..errors import AgentSmithError, AgentStopped
from ..llm.request import LlmRequest, LlmResponse
from ..messages import TokenUsage, ToolCall
from ..tools.dispatch import ToolOutcome
from .compaction import Completer
from .config import AgentConfig
from .guards import FailureGuard, LoopGuard
from .tree import AgentTree

_NO_USAGE = TokenUsage()
_timer_ids = itertools.count()


class Turn:
    """State of one send of one agent."""

    __slots__ = (
        "_deadline_at",
        "_deadline_hit",
        "_lock",
        "_stopped",
        "_timer",
        "config",
        "failures",
        "iterations",
        "loops",
        "name",
        "pending",
        "source",
        "tree",
        "usage",
    )

    def __init__(
        self, name: str, tree: AgentTree, source: CancellationSource, config: AgentConfig
    ) -> None:
        self.name = name
        self.tree = tree
        self.source = source
        self.config = config
        self.iterations = 0
        self.usage = _NO_USAGE  # this agent's LLM calls plus its finished children's
        self._lock = threading.Lock()  # children add their usage from their own threads
        self.pending: Sequence[ToolCall] = ()  # calls recorded without their results yet
        self.loops = LoopGuard(config.loop_guard_repeats) if config.loop_guard else None
        self.failures = (
            FailureGuard(
                steer_after=config.steer_after_failed_rounds,
                stop_after=config.stop_after_failed_rounds,
            )
            if config.failure_guard
            else None
        )
        self._deadline_hit = False
        self._stopped: AgentSmithError | None = None
        self._deadline_at: float | None = None
        self._timer: threading.Timer | None = None
        if config.deadline is not None:
            self._deadline_at = time.monotonic() + config.deadline
            self._timer = threading.Timer(config.deadline, self._expire)
            self._timer.name = f"agent_smith-deadline-{next(_timer_ids)}"
            self._timer.daemon = True
            self._timer.start()

    def add_usage(self, usage: TokenUsage | None) -> None:
        """Add one LLM call's (or a finished sub-agent's) usage; thread-safe."""
        if usage is not None:
            with self._lock:
                self.usage = self.usage + usage

    def begin_round(self) -> None:
        """Count one LLM call; raise CancelledError or AgentStopped if it may not happen."""
        self.source.token.raise_if_cancelled("agent turn")
        config = self.config
        self.iterations += 1
        if self.iterations > config.max_iterations:
            raise self._stop("max_iterations", f"max_iterations ({config.max_iterations}) reached")
        if not self.tree.take_iteration():
            raise self._stop(
                "tree_iterations", f"the agent tree used its {self.tree.max_iterations} iterations"
            )
        if config.max_total_tokens is not None and self.usage.total > config.max_total_tokens:
            raise self._stop(
                "max_total_tokens",
                f"{self.usage.total} tokens used, over max_total_tokens "
                f"({config.max_total_tokens})",
            )
        if self._deadline_at is not None and time.monotonic() >= self._deadline_at:
            raise self._deadline_stop()
        meter = self.tree.meter
        if meter is not None:
            meter.before_request()

    def ask_aside(self, llm: Completer, request: LlmRequest, *, model: str) -> LlmResponse:
        """One hidden request of the turn (a summary, a finish check), metered and counted.

        Raises what the model's ``complete`` raises, or UsageLimitExceeded.
        """
        meter = self.tree.meter
        if meter is not None:
            meter.before_request()
        response = llm.complete(request, cancel=self.source.token)
        self.add_reply_usage(response.message.usage, model, response.model)
        return response

    def add_reply_usage(self, usage: TokenUsage | None, *models: str) -> None:
        """Add one LLM reply's usage, priced and metered when the tree has usage limits.

        ``models`` name the reply's model for the price table (asked for, then reported).
        """
        meter = self.tree.meter
        self.add_usage(usage if meter is None else meter.spend(usage, *models))

    def explain(self) -> AgentSmithError | None:
        """The stop behind a cancellation of this turn: the deadline, or :meth:`stop_with`'s."""
        if self._stopped is not None:
            return self._stopped
        return self._deadline_stop() if self._deadline_hit else None

    def stop_with(self, error: AgentSmithError) -> None:
        """Cancel the turn from any thread; it then raises ``error`` (a tripped guardrail)."""
        self._stopped = error
        self.source.cancel()

    def finish(self) -> None:
        """Stop the deadline timer and cancel anything the turn left running."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer.join()
        # Work the turn gave up on (a timed-out sub-agent, say) stops too.
        self.source.cancel()
        if self.source is not self.tree.cancel:
            self.source.detach()

    def _stop(self, condition: str, reason: str) -> AgentStopped:
        return AgentStopped(f"agent {self.name!r} stopped: {reason}", condition=condition)

    def _deadline_stop(self) -> AgentStopped:
        return self._stop("deadline", f"its deadline of {self.config.deadline} s passed")

    def _expire(self) -> None:
        self._deadline_hit = True
        self.source.cancel()


def done_message(outcomes: Sequence[ToolOutcome]) -> str | None:
    """The final message of the first result signalling done (seed §15.3), else None."""
    for outcome in outcomes:
        data = outcome.result.structured
        if isinstance(data, dict) and data.get("_done") is True:
            final = data.get("final_message", "")
            return final if isinstance(final, str) else str(final)
    return None
