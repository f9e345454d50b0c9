"""Metrics: counters and fixed-bucket histograms of what agents, models and tools do.

:class:`MetricsCollector` implements the observer seam (next to tracing;
both can be installed at once): model requests, tokens, cost, tool calls and
errors, retries, fallbacks, cancellations, approvals, guardrail trips,
compactions and MCP requests are counted; durations, time to first token and
tokens per second go in histograms with the OpenTelemetry GenAI
conventions' buckets; each turn is kept as a timeline (:mod:`.timeline`).
Labels (agent, provider, model, tool...) are bounded (:mod:`.labels`).
Exports: Prometheus text (:mod:`.prometheus`), OpenTelemetry metrics
(:mod:`.otel_export`, the ``otel`` extra). See docs/metrics.md.
"""

from __future__ import annotations

from .collector import MetricsCollector

__all__ = ["MetricsCollector"]
