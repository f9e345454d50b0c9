"""The metrics collector: counters and fixed-bucket histograms fed by the observer seam.

:class:`MetricsCollector` is an :class:`~agent_smith.observer.Observer`:
``install()`` adds it to the process's observers (next to tracing, see
:func:`~agent_smith.observer.add_observer`), ``uninstall()`` removes it.
Every series is named in :mod:`.catalog`; label values are bounded per
label (:mod:`.labels`), so what it holds is fixed by its bounds whatever
runs. Recording takes one short lock; :meth:`snapshot` returns plain data
(JSON-ready) and :meth:`reset` starts over. Not installed, it costs nothing.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..observer import (
    ChatClientFacts,
    ChatObservation,
    ChatRequestFacts,
    JsonObject,
    McpObservation,
    McpServerFacts,
    Observer,
    ToolFacts,
    ToolObservation,
    TurnFacts,
    TurnObservation,
    add_observer,
    remove_observer,
)
from ..tracing.span import client_provider
from .catalog import BY_NAME, COUNTERS, HISTOGRAMS, LABELS, Metric
from .histogram import Histogram
from .labels import DEFAULT_BOUND, UNKNOWN, LabelValues
from .observations import (
    ChatMetrics,
    McpMetrics,
    ToolMetrics,
    TurnMetrics,
    current_tool,
    current_turn,
)
from .timeline import Timelines

if TYPE_CHECKING:
    from ..messages import TokenUsage, ToolCall
    from ..runtime import Runtime
    from .otel_export import OtelExport

_CLIENTS_KEPT = 256
Labels = tuple[str, ...]
#: ``(metric name, label values, number)``: one count or one value to record.
Count = tuple[str, Labels, float]


class MetricsCollector(Observer):
    """Counts what agents, models, tools and MCP servers do (see the module doc).

    ``label_bound``: how many distinct values each label keeps before folding
    new ones into ``"other"``; ``turns``: how many top-level turns' timelines
    are kept; ``bars``: how many bars each timeline keeps.
    """

    __slots__ = (
        "_clients",
        "_counters",
        "_export",
        "_histograms",
        "_labels",
        "_lock",
        "timelines",
    )

    def __init__(
        self, *, label_bound: int = DEFAULT_BOUND, turns: int = 50, bars: int = 500
    ) -> None:
        self._lock = threading.Lock()
        self._labels = {name: LabelValues(label_bound) for name in LABELS}
        self._counters: dict[tuple[str, Labels], float] = {}
        self._histograms: dict[tuple[str, Labels], Histogram] = {}
        self._export: OtelExport | None = None
        # A client's provider and model labels, by (client type, url, model): asked once.
        self._clients: dict[tuple[type, str, str], tuple[str, str]] = {}
        self.timelines = Timelines(turns, bars)

    # -- installing --------------------------------------------------------------

    def install(self) -> MetricsCollector:
        """Start collecting: add this collector to the process's observers; returns it."""
        add_observer(self)
        return self

    def uninstall(self) -> None:
        """Stop collecting (what was counted stays readable)."""
        remove_observer(self)

    def export_to_opentelemetry(self, meter_provider: object | None = None) -> None:
        """Also record into OpenTelemetry metrics (GenAI names; needs the ``otel`` extra).

        ``meter_provider``: an OpenTelemetry ``MeterProvider``; None for the global one.
        """
        from .otel_export import OtelExport

        self._export = OtelExport(self, meter_provider)

    # -- recording ---------------------------------------------------------------

    def label(self, name: str, value: str) -> str:
        """``value`` as label ``name`` holds it: itself, or ``"other"`` past the bound."""
        return self._labels[name].fold(value)

    def add(self, name: str, labels: Labels, amount: float = 1) -> None:
        """Add ``amount`` to counter ``name``'s series ``labels`` (values already folded)."""
        self.record(((name, labels, amount),))

    def observe(self, name: str, labels: Labels, value: float) -> None:
        """Record ``value`` in histogram ``name``'s series ``labels``."""
        self.record((), ((name, labels, value),))

    def record(self, counts: Iterable[Count], values: Iterable[Count] = ()) -> None:
        """Add each of ``counts`` to its counter and each of ``values`` to its histogram
        (``(name, labels, number)`` each), under one lock."""
        counters, histograms = self._counters, self._histograms
        with self._lock:
            for name, labels, amount in counts:
                key = (name, labels)
                counters[key] = counters.get(key, 0) + amount
            for name, labels, value in values:
                key = (name, labels)
                histogram = histograms.get(key)
                if histogram is None:
                    histogram = histograms[key] = Histogram(BY_NAME[name].buckets)
                # The value's bucket: values equal to a bound count in that bound's bucket.
                histogram.counts[bisect_left(histogram.bounds, value)] += 1
                histogram.sum += value
        if self._export is not None:
            for name, labels, value in values:
                self._export.observe(name, labels, value)

    def tokens(self, labels: Labels, usage: TokenUsage) -> list[Count]:
        """The counts of one reply's token usage, to :meth:`record` (``labels``: agent,
        provider, model); an OpenTelemetry export records them now."""
        if self._export is not None:
            self._export.tokens(labels, usage.prompt, usage.completion)
        kinds = (
            ("input", usage.prompt),
            ("output", usage.completion),
            ("cached", usage.cache_read),
            ("reasoning", usage.reasoning),
        )
        return [("tokens", (*labels, kind), amount) for kind, amount in kinds if amount]

    # -- reading -----------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Plain data: ``counters`` and ``histograms`` by name, each a list of series.

        A counter series is ``{"labels": {...}, "value": n}``; a histogram's is
        ``{"labels": {...}, "bounds": [...], "counts": [...], "sum": s, "count": n}``
        (``counts`` has one more entry than ``bounds``: the values above the last).
        Every name in the catalog is there, with no series until something is counted.
        """
        with self._lock:
            counters = list(self._counters.items())
            histograms = [(key, h.data()) for key, h in self._histograms.items()]
        return {
            "counters": _series(COUNTERS, ((key, {"value": v}) for key, v in counters)),
            "histograms": _series(HISTOGRAMS, histograms),
        }

    def counter(self, name: str) -> list[tuple[Labels, float]]:
        """Counter ``name``'s series: (label values in the catalog's order, value) each."""
        with self._lock:
            return [(labels, v) for (n, labels), v in self._counters.items() if n == name]

    def total(self, name: str, **labels: str) -> float:
        """Counter ``name`` summed over its series whose labels are ``labels``
        (a histogram's: the sum of its values)."""
        names = BY_NAME[name].labels
        wanted = [(names.index(label), value) for label, value in labels.items()]
        with self._lock:
            if BY_NAME[name].is_histogram:
                values = [(key, h.sum) for key, h in self._histograms.items()]
            else:
                values = list(self._counters.items())
        return sum(
            value
            for (n, series), value in values
            if n == name and all(series[i] == v for i, v in wanted)
        )

    def turns(self) -> list[dict[str, Any]]:
        """The kept turns' timelines, oldest first, as plain data (see :mod:`.timeline`)."""
        return self.timelines.data()

    def reset(self) -> None:
        """Forget every count, histogram, label value and timeline."""
        with self._lock:
            self._counters.clear()
            self._histograms.clear()
            for values in self._labels.values():
                values.clear()
            self._clients.clear()
        self.timelines.clear()

    # -- the observer seam -------------------------------------------------------

    def on_chat_start(
        self, client: ChatClientFacts, request: ChatRequestFacts, body: Mapping[str, Any]
    ) -> ChatObservation:
        url, model = client.url, client.model
        key = (type(client), url, model)
        named = self._clients.get(key)
        if named is None:
            named = (self.label("provider", client_provider(client)), self.label("model", model))
            if len(self._clients) < _CLIENTS_KEPT:
                self._clients[key] = named
        return ChatMetrics(self, (self._agent(), *named))

    def on_tool_start(self, call: ToolCall, tool: ToolFacts, runtime: Runtime) -> ToolObservation:
        return ToolMetrics(self, self._tool(call))

    def on_tool_rejected(self, call: ToolCall, problem: str, runtime: Runtime) -> None:
        labels = self._tool(call)
        self.add("tool_calls", labels)
        self.add("tool_errors", (*labels, "rejected"))

    def on_tool_raised(self, error: BaseException) -> None:
        tool = current_tool()
        if tool is not None:
            tool.raised(error)

    def on_mcp_request(
        self, server: McpServerFacts, method: str, params: JsonObject | None
    ) -> McpObservation:
        labels = (self.label("server", server.alias), self.label("method", method))
        return McpMetrics(self, labels)

    def on_turn_start(self, agent: TurnFacts) -> TurnObservation:
        return TurnMetrics(self, agent, self.label("agent", agent.name))

    def on_approval(
        self, call: ToolCall, decision: str, *, asked: bool, waited: float = 0.0
    ) -> None:
        labels = self._tool(call)
        if asked:
            self.add("approvals", (*labels, "asked"))
        if decision != "deferred":
            self.add("approvals", (*labels, "granted" if decision == "approved" else "denied"))
        turn = current_turn()
        if turn is not None:
            turn.bar_until_now("approval", call.name, waited, {"decision": decision})

    def on_guardrail(self, stage: str, name: str, action: str, call_id: str | None) -> None:
        if action != "allow":
            self.add("guardrail_trips", (stage, self.label("guardrail", name)))

    def on_compaction(
        self, replaced: int, kept: int, tokens_before: int, tokens_after: int
    ) -> None:
        self.add("compactions", (self._agent(),))
        turn = current_turn()
        if turn is not None:
            facts = {"tokens_before": tokens_before, "tokens_after": tokens_after}
            turn.bar_until_now("compaction", f"{replaced} messages", 0.0, facts)

    def on_fallback(self, model: str, provider: str, error: BaseException) -> None:
        self.add("fallbacks", (self.label("provider", provider), self.label("model", model)))

    def _agent(self) -> str:
        """The agent label of the turn running in this context (``unknown`` outside one)."""
        turn = current_turn()
        return turn.agent if turn is not None else UNKNOWN

    def _tool(self, call: ToolCall) -> Labels:
        """The agent and tool labels of ``call``."""
        return (self._agent(), self.label("tool", call.name))


def _series(
    metrics: tuple[Metric, ...], values: Iterable[tuple[tuple[str, Labels], dict[str, Any]]]
) -> dict[str, list[dict[str, Any]]]:
    """Each of ``metrics`` by name, with its series: labels by name, then the values' fields."""
    out: dict[str, list[dict[str, Any]]] = {metric.name: [] for metric in metrics}
    for (name, labels), data in values:
        named = dict(zip(BY_NAME[name].labels, labels, strict=True))
        out[name].append({"labels": named, **data})
    return out
