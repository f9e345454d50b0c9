"""The collector's figures as OpenTelemetry metrics, with the GenAI conventions' names.

Made by :meth:`MetricsCollector.export_to_opentelemetry` (the ``otel`` extra:
``opentelemetry-api``; imported only then). Histogram values are recorded
as they are observed, into the GenAI instruments where the conventions name
one:

* ``gen_ai.client.operation.duration`` (``gen_ai.operation.name`` ``chat``),
* ``gen_ai.client.token.usage`` (``gen_ai.token.type`` ``input`` / ``output``),
* ``gen_ai.client.operation.time_to_first_chunk``,
* ``gen_ai.invoke_agent.duration`` and ``gen_ai.execute_tool.duration``,
* ``agent_smith.tokens_per_second``;

every counter is an observable counter ``agent_smith.{name}`` read from the
collector when the application's reader collects. Labels become the GenAI
attributes (``gen_ai.agent.name``, ``gen_ai.provider.name``,
``gen_ai.request.model``, ``gen_ai.tool.name``...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..tracing.names import (
    AGENT_NAME,
    CHAT,
    ERROR_TYPE,
    OPERATION_NAME,
    PROVIDER_NAME,
    REQUEST_MODEL,
    TOOL_NAME,
)
from .catalog import BY_NAME, COUNTERS, TOKEN_BUCKETS

if TYPE_CHECKING:
    from opentelemetry.metrics import CallbackOptions, Histogram, Observation

    from .collector import Labels, MetricsCollector

TOKEN_USAGE = "gen_ai.client.token.usage"
OPERATION_DURATION = "gen_ai.client.operation.duration"
TIME_TO_FIRST_CHUNK = "gen_ai.client.operation.time_to_first_chunk"
AGENT_DURATION = "gen_ai.invoke_agent.duration"
TOOL_DURATION = "gen_ai.execute_tool.duration"
TOKEN_TYPE = "gen_ai.token.type"

#: The collector's histograms and the instruments they are recorded into.
HISTOGRAM_NAMES = {
    "model_request_duration": OPERATION_DURATION,
    "time_to_first_token": TIME_TO_FIRST_CHUNK,
    "turn_duration": AGENT_DURATION,
    "tool_duration": TOOL_DURATION,
    "tokens_per_second": "agent_smith.tokens_per_second",
}
#: Label names as attributes: the GenAI ones, else ``agent_smith.{label}``.
ATTRIBUTES = {
    "agent": AGENT_NAME,
    "provider": PROVIDER_NAME,
    "model": REQUEST_MODEL,
    "tool": TOOL_NAME,
    "type": TOKEN_TYPE,
    "error": ERROR_TYPE,
}


def attribute(label: str) -> str:
    return ATTRIBUTES.get(label, f"agent_smith.{label}")


class OtelExport:
    """Instruments on ``meter_provider``'s (None: the global one's) ``agent_smith`` meter."""

    def __init__(self, collector: MetricsCollector, meter_provider: Any | None) -> None:
        from opentelemetry import metrics
        from opentelemetry.metrics import Observation

        provider = meter_provider if meter_provider is not None else metrics.get_meter_provider()
        meter = provider.get_meter("agent_smith", __version__)
        self._histograms: dict[str, tuple[Histogram, tuple[str, ...]]] = {}
        for name, exported in HISTOGRAM_NAMES.items():
            metric = BY_NAME[name]
            instrument = meter.create_histogram(
                exported,
                unit=metric.unit,
                description=metric.help,
                explicit_bucket_boundaries_advisory=list(metric.buckets),
            )
            self._histograms[name] = (instrument, tuple(attribute(n) for n in metric.labels))
        self._tokens = meter.create_histogram(
            TOKEN_USAGE,
            unit="{token}",
            description="Input and output tokens per LLM request",
            explicit_bucket_boundaries_advisory=list(TOKEN_BUCKETS),
        )
        for metric in COUNTERS:
            meter.create_observable_counter(
                f"agent_smith.{metric.name}",
                callbacks=[_reader(collector, metric.name, Observation)],
                unit=metric.unit,
                description=metric.help,
            )

    def observe(self, name: str, labels: Labels, value: float) -> None:
        instrument, names = self._histograms[name]
        attributes = dict(zip(names, labels, strict=True))
        if name == "model_request_duration":
            attributes[OPERATION_NAME] = CHAT
        instrument.record(value, attributes)

    def tokens(self, labels: Labels, prompt: int, completion: int) -> None:
        _, provider, model = labels
        for kind, count in (("input", prompt), ("output", completion)):
            self._tokens.record(
                count,
                {
                    OPERATION_NAME: CHAT,
                    PROVIDER_NAME: provider,
                    REQUEST_MODEL: model,
                    TOKEN_TYPE: kind,
                },
            )


def _reader(
    collector: MetricsCollector, name: str, observation: type[Observation]
) -> Callable[[CallbackOptions], Iterable[Observation]]:
    """The callback reporting counter ``name``'s series as ``collector`` holds them now."""

    names = [attribute(label) for label in BY_NAME[name].labels]

    def read(options: CallbackOptions) -> Iterable[Observation]:
        for labels, value in collector.counter(name):
            yield observation(value, dict(zip(names, labels, strict=True)))

    return read
