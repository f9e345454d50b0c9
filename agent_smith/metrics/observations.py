"""The collector's observations: what one LLM call, tool call, MCP request or turn records.

Each takes its start time when made and records when it ends — a counter or
two, a histogram value, and a bar on the running turn's timeline. The turn
running in this context is a :mod:`contextvars` variable, set for each step
of the turn only (the turn is a generator: the caller's code between events
runs without it); the worker pool carries it to tool calls, so a tool call,
and a sub-agent it starts, knows its turn.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextvars import ContextVar, Token
from time import perf_counter
from typing import TYPE_CHECKING, Any, TypeVar

from .._internal.closing import close_iterator
from ..errors import ApprovalRequired, CancelledError
from ..llm.events import Finished
from ..messages import TokenUsage
from ..observer import (
    ChatObservation,
    ChatReplyFacts,
    McpObservation,
    ToolObservation,
    ToolResultFacts,
    TurnFacts,
    TurnObservation,
)
from ..tracing.span import error_type

if TYPE_CHECKING:
    from types import TracebackType

    from .collector import Count, Labels, MetricsCollector
    from .timeline import TurnTimeline

E = TypeVar("E")
R = TypeVar("R", bound=ChatReplyFacts)
T = TypeVar("T", bound=ToolResultFacts)

_turn: ContextVar[TurnMetrics | None] = ContextVar("agent_smith_metrics_turn", default=None)
# The tool call running in this context, for tools that catch their own exceptions.
_tool: ContextVar[ToolMetrics | None] = ContextVar("agent_smith_metrics_tool", default=None)


def current_turn() -> TurnMetrics | None:
    """The turn running in this context, if the collector watches it."""
    return _turn.get()


def current_tool() -> ToolMetrics | None:
    """The tool call running in this context, if the collector watches it."""
    return _tool.get()


class _Timed:
    """Started when made; the turn it runs in (None outside a watched turn)."""

    __slots__ = ("_collector", "_labels", "_started", "_turn")

    def __init__(self, collector: MetricsCollector, labels: Labels) -> None:
        self._collector = collector
        self._labels = labels
        self._turn = _turn.get()
        self._started = perf_counter()

    def _bar(self, kind: str, name: str, ended: float, facts: dict[str, Any] | None) -> None:
        turn = self._turn
        if turn is not None:
            turn.timeline.add(kind, name, self._started, ended, turn.depth, facts)


_NO_USAGE = TokenUsage()


class ChatMetrics(_Timed, ChatObservation):
    """One LLM call: requests, errors, retries, tokens, duration, time to first token, rate."""

    __slots__ = ("_first", "_usage")

    def __init__(self, collector: MetricsCollector, labels: Labels) -> None:
        super().__init__(collector, labels)
        self._first: float | None = None
        self._usage = _NO_USAGE

    def retry(self, attempt: int, delay: float, failure: BaseException) -> None:
        self._collector.add("retries", self._labels)

    def watch(self, events: Iterator[E]) -> Iterator[E]:
        return self._watch(events)

    def _watch(self, events: Iterator[E]) -> Iterator[E]:
        try:
            for event in events:
                if self._first is None:
                    self._first = perf_counter()
                    self._collector.observe(
                        "time_to_first_token", self._labels, self._first - self._started
                    )
                if isinstance(event, Finished):
                    self.finish(event.response)
                yield event
        finally:
            close_iterator(events)

    def finish(self, response: R) -> R:
        if response.usage is not None:
            self._usage = response.usage
        return response

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        ended = perf_counter()
        collector, labels = self._collector, self._labels
        prompt, completion = self._usage.prompt, self._usage.completion
        counts = collector.tokens(labels, self._usage)
        counts.append(("model_requests", labels, 1))
        values: list[Count] = [("model_request_duration", labels, ended - self._started)]
        if completion:
            generating = ended - (self._first if self._first is not None else self._started)
            if generating > 0:
                values.append(("tokens_per_second", labels, completion / generating))
        facts: dict[str, Any] = {"input_tokens": prompt, "output_tokens": completion}
        if error is not None:
            facts["error"] = kind_of = error_type(error)
            counts.append(("model_errors", (*labels, collector.label("error", kind_of)), 1))
        collector.record(counts, values)
        self._bar("model", labels[2], ended, facts)


class ToolMetrics(_Timed, ToolObservation):
    """One tool call: calls, errors by kind, duration; current on its worker while it runs."""

    __slots__ = ("_failed", "_token")

    def __init__(self, collector: MetricsCollector, labels: Labels) -> None:
        super().__init__(collector, labels)
        self._failed: str | None = None
        self._token: Token[ToolMetrics | None] | None = None

    def __enter__(self) -> ToolMetrics:
        self._token = _tool.set(self)
        return self

    def raised(self, error: BaseException) -> None:
        self._failed = "raised"

    def finish(self, result: T) -> T:
        if result.is_error and self._failed is None:
            self._failed = "result"
        return result

    def abandon(self, *, timed_out: bool) -> None:
        self._failed = "timeout" if timed_out else "cancelled"
        self._end()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._token is not None:
            _tool.reset(self._token)
        if self._failed in ("timeout", "cancelled"):
            return  # ended when the dispatcher gave up on it
        if error is not None:
            self._failed = "raised"
        self._end()

    def _end(self) -> None:
        ended = perf_counter()
        labels = self._labels
        counts: list[Count] = [("tool_calls", labels, 1)]
        values: list[Count] = [("tool_duration", labels, ended - self._started)]
        failed = self._failed
        if failed is not None:
            counts.append(("tool_errors", (*labels, failed), 1))
        self._collector.record(counts, values)
        self._bar("tool", labels[1], ended, None if failed is None else {"error": failed})


class McpMetrics(_Timed, McpObservation):
    """One MCP request: requests, errors."""

    __slots__ = ()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        counts: list[Count] = [("mcp_requests", self._labels, 1)]
        if error is not None:
            counts.append(("mcp_errors", self._labels, 1))
        self._collector.record(counts)


class TurnMetrics(TurnObservation):
    """One agent turn: turns by outcome, cancellations, duration, cost; its timeline.

    A top-level turn starts a timeline; a turn started inside another (a
    sub-agent's) adds to its parent's and shows there as one ``agent`` bar.
    """

    __slots__ = ("_agent", "_collector", "_parent", "agent", "depth", "timeline")

    def __init__(self, collector: MetricsCollector, agent: TurnFacts, label: str) -> None:
        self._collector = collector
        self._agent = agent
        self.agent = label
        self.depth = agent.depth
        self._parent = _turn.get()
        parent = self._parent
        self.timeline: TurnTimeline = (
            parent.timeline if parent is not None else collector.timelines.start(label)
        )

    def bar_until_now(self, kind: str, name: str, seconds: float, facts: dict[str, Any]) -> None:
        """A bar on this turn's timeline for the last ``seconds`` (an approval's wait; 0: an
        instant, such as a compaction)."""
        now = perf_counter()
        self.timeline.add(kind, name, now - seconds, now, self.depth, facts)

    def watch(self, events: Iterator[E]) -> Iterator[E]:
        return self._watch(events)

    def _watch(self, events: Iterator[E]) -> Iterator[E]:
        started = perf_counter()
        outcome = "error"
        try:
            while True:
                token = _turn.set(self)
                try:
                    event = next(events)
                except StopIteration:
                    break
                finally:
                    _turn.reset(token)
                yield event
            outcome = "ok"
        except ApprovalRequired:
            outcome = "paused"
            raise
        except (CancelledError, GeneratorExit):
            outcome = "cancelled"
            raise
        finally:
            token = _turn.set(self)
            try:
                close_iterator(
                    events
                )  # a caller that stopped early: the turn cleans up in its scope
            finally:
                _turn.reset(token)
                self._ended(started, outcome)

    def _ended(self, started: float, outcome: str) -> None:
        ended = perf_counter()
        collector, labels = self._collector, (self.agent,)
        counts: list[Count] = [("turns", (self.agent, outcome), 1)]
        if outcome == "cancelled":
            counts.append(("cancellations", labels, 1))
        usage = self._agent.usage if outcome != "error" else None
        facts: dict[str, Any] = {"outcome": outcome}
        if usage is not None:
            facts["input_tokens"] = usage.prompt
            facts["output_tokens"] = usage.completion
            if usage.cost is not None:
                facts["cost"] = usage.cost
                if self._parent is None:  # a sub-agent's cost is in its parent's usage too
                    counts.append(("cost", labels, usage.cost))
        collector.record(counts, (("turn_duration", labels, ended - started),))
        if self._parent is None:
            self.timeline.end(**facts)
        else:
            self.timeline.add("agent", self.agent, started, ended, self.depth, facts)
