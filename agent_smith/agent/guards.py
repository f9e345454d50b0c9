"""Loop guards: stop a model that repeats itself or keeps failing.

Taken from the amber agent (seeds/amber-architecture.md): the same set of
tool calls several times in a row is a loop, and a run of rounds in which
every tool call failed first earns a steering note, then a hard stop. Both
are evaluated once per LLM round by the agent loop; each guard instance lives
for one ``send``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..errors import AgentStopped
from ..messages import ToolCall, ToolMessage, UserMessage

STEERING_NOTE = (
    "Note from the agent framework: your last {rounds} rounds of tool calls all failed. "
    "Read the error messages, fix the tool names or arguments, try a different approach, "
    "or answer without tools."
)


class LoopGuard:
    """Raises ``AgentStopped("loop_detected")`` on ``repeats`` identical call sets in a row."""

    __slots__ = ("_count", "_last", "_repeats")

    def __init__(self, repeats: int) -> None:
        self._repeats = repeats
        self._last: Sequence[ToolCall] = ()  # the last call set
        self._count = 0

    @property
    def repeats(self) -> int:
        """How many times in a row the last call set was requested."""
        return self._count

    def restore(self, calls: Sequence[ToolCall], repeats: int) -> None:
        """Continue a paused turn: ``calls`` were the last set, requested ``repeats`` times."""
        self._last, self._count = tuple(calls), repeats

    def check(self, calls: Sequence[ToolCall]) -> None:
        """Record one round's tool calls; raise before the repeated round runs."""
        if self._count and _same(calls, self._last):
            self._count += 1
        else:
            self._last, self._count = tuple(calls), 1
        if self._count >= self._repeats:
            names = ", ".join(c.name for c in calls)
            raise AgentStopped(
                f"agent stopped: the same tool calls ({names}) were requested "
                f"{self._count} times in a row",
                condition="loop_detected",
            )


class FailureGuard:
    """Counts consecutive all-failed tool rounds; steers once, then stops."""

    __slots__ = ("_failed", "_steer_after", "_steered", "_stop_after")

    def __init__(self, *, steer_after: int, stop_after: int) -> None:
        self._steer_after = steer_after
        self._stop_after = stop_after
        self._failed = 0
        self._steered = False

    @property
    def failed_rounds(self) -> int:
        """Consecutive rounds in which every call failed, so far."""
        return self._failed

    @property
    def steered(self) -> bool:
        """Whether the steering note of this run of failures was given."""
        return self._steered

    def restore(self, failed_rounds: int, steered: bool) -> None:
        """Continue a paused turn with its failure count."""
        self._failed, self._steered = failed_rounds, steered

    def check(self, results: Sequence[ToolMessage]) -> UserMessage | None:
        """Record one round's results; return a steering note to add, or raise."""
        if not results or not all(r.is_error for r in results):
            self._failed = 0
            self._steered = False
            return None
        self._failed += 1
        if self._failed >= self._stop_after:
            raise AgentStopped(
                f"agent stopped: tool calls failed in {self._failed} consecutive rounds",
                condition="tool_failures",
            )
        if self._failed >= self._steer_after and not self._steered:
            self._steered = True
            return UserMessage(STEERING_NOTE.format(rounds=self._failed))
        return None


def _same(calls: Sequence[ToolCall], last: Sequence[ToolCall]) -> bool:
    """Whether ``calls`` repeat ``last``: the same names and arguments, in order.

    Ids differ between rounds even when the model repeats itself. The
    arguments are compared only when the names match (most rounds differ there).
    """
    if len(calls) != len(last) or any(a.name != b.name for a, b in zip(calls, last, strict=True)):
        return False
    return all(_canonical(a) == _canonical(b) for a, b in zip(calls, last, strict=True))


def _canonical(call: ToolCall) -> str:
    if call.invalid_arguments is not None:
        return call.invalid_arguments
    return json.dumps(call.arguments, sort_keys=True, ensure_ascii=False, default=str)
