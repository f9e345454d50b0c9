"""What the metrics collector counts: every counter and histogram, its labels, unit and buckets.

One table read by the collector (which series exist), the Prometheus text
(:mod:`.prometheus`: ``agent_smith_{name}``, ``_total`` on counters) and
the OpenTelemetry export (:mod:`.otel_export`). Histogram buckets are fixed:
the OpenTelemetry GenAI semantic conventions' recommended boundaries where
they give some (operation durations, time to first chunk), powers of two
for tokens per second.
"""

from __future__ import annotations

from dataclasses import dataclass

#: gen_ai.client.operation.duration's recommended boundaries, in seconds.
DURATION_BUCKETS = (
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
)  # fmt: skip
#: gen_ai.client.operation.time_to_first_chunk's (the server's time to first token's), seconds.
FIRST_TOKEN_BUCKETS = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
)  # fmt: skip
#: gen_ai.client.token.usage's recommended boundaries, in tokens.
TOKEN_BUCKETS = (
    1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
)  # fmt: skip
#: Output tokens per second of a reply.
RATE_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)

MODEL = ("agent", "provider", "model")


@dataclass(frozen=True)
class Metric:
    """One counter or histogram: ``labels`` name its series, ``buckets`` a histogram's bounds."""

    name: str
    unit: str
    help: str
    labels: tuple[str, ...]
    buckets: tuple[float, ...] = ()

    @property
    def is_histogram(self) -> bool:
        return bool(self.buckets)


COUNTERS = (
    Metric("model_requests", "{request}", "LLM requests (retries within one not counted)", MODEL),
    Metric("model_errors", "{request}", "LLM requests that failed", (*MODEL, "error")),
    Metric(
        "tokens", "{token}", "Tokens by type: input, output, cached, reasoning", (*MODEL, "type")
    ),
    Metric("cost", "1", "What turns cost, in the price table's currency", ("agent",)),
    Metric("tool_calls", "{call}", "Tool calls (refused ones included)", ("agent", "tool")),
    Metric(
        "tool_errors",
        "{call}",
        "Failed tool calls by kind: result, raised, timeout, cancelled, rejected",
        ("agent", "tool", "kind"),
    ),
    Metric("retries", "{retry}", "LLM requests sent again after a failure", MODEL),
    Metric("fallbacks", "{fallback}", "Models that failed and handed over to the next", MODEL[1:]),
    Metric(
        "turns",
        "{turn}",
        "Agent turns by outcome: ok, error, cancelled, paused",
        ("agent", "outcome"),
    ),
    Metric("cancellations", "{turn}", "Turns that ended cancelled", ("agent",)),
    Metric(
        "approvals",
        "{call}",
        "Approval decisions: asked, granted, denied",
        ("agent", "tool", "decision"),
    ),
    Metric(
        "guardrail_trips",
        "{verdict}",
        "Guardrail verdicts other than allow",
        ("stage", "guardrail"),
    ),
    Metric("compactions", "{compaction}", "History compactions", ("agent",)),
    Metric("mcp_requests", "{request}", "MCP requests", ("server", "method")),
    Metric("mcp_errors", "{request}", "MCP requests that failed", ("server", "method")),
)

HISTOGRAMS = (
    Metric(
        "time_to_first_token",
        "s",
        "Time to a streamed reply's first chunk",
        MODEL,
        FIRST_TOKEN_BUCKETS,
    ),
    Metric(
        "model_request_duration",
        "s",
        "LLM request duration, retries included",
        MODEL,
        DURATION_BUCKETS,
    ),
    Metric("tool_duration", "s", "Tool call duration", ("agent", "tool"), DURATION_BUCKETS),
    Metric("turn_duration", "s", "Agent turn duration", ("agent",), DURATION_BUCKETS),
    Metric(
        "tokens_per_second", "{token}/s", "Output tokens per second of a reply", MODEL, RATE_BUCKETS
    ),
)

BY_NAME = {metric.name: metric for metric in (*COUNTERS, *HISTOGRAMS)}
#: Every label name any metric has; each has its own bounded set of values.
LABELS = tuple(sorted({label for metric in BY_NAME.values() for label in metric.labels}))
