"""The collector's snapshot in the Prometheus text exposition format (version 0.0.4).

Counter ``tokens`` is ``agent_smith_tokens_total``; histogram
``tool_duration`` is ``agent_smith_tool_duration_seconds`` with cumulative
``_bucket{le=...}`` series, ``_sum`` and ``_count``. Label values are escaped
(backslash, double quote, newline). What a web app serves at ``/metrics``,
through :class:`ScrapePage`: rendered at most once a second however often
it is scraped, so a scraper gone wild costs the turns little.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from .catalog import BY_NAME

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
PREFIX = "agent_smith_"
_UNITS = {"s": "_seconds"}


def exposition(snapshot: dict[str, Any]) -> str:
    """The text a Prometheus server scrapes, from :meth:`MetricsCollector.snapshot`'s data."""
    lines: list[str] = []
    for name, series in snapshot["counters"].items():
        metric = BY_NAME[name]
        full = f"{PREFIX}{name}"
        lines.append(f"# HELP {full}_total {_help(metric.help)}")
        lines.append(f"# TYPE {full}_total counter")
        for one in series:
            lines.append(f"{full}_total{_labels(one['labels'])} {_number(one['value'])}")
    for name, series in snapshot["histograms"].items():
        metric = BY_NAME[name]
        full = f"{PREFIX}{name}{_UNITS.get(metric.unit, '')}"
        lines.append(f"# HELP {full} {_help(metric.help)}")
        lines.append(f"# TYPE {full} histogram")
        for one in series:
            cumulative = 0
            for bound, count in zip([*one["bounds"], "+Inf"], one["counts"], strict=True):
                cumulative += count
                le = {**one["labels"], "le": bound if bound == "+Inf" else _number(bound)}
                lines.append(f"{full}_bucket{_labels(le)} {cumulative}")
            lines.append(f"{full}_sum{_labels(one['labels'])} {_number(one['sum'])}")
            lines.append(f"{full}_count{_labels(one['labels'])} {one['count']}")
    return "\n".join(lines) + "\n"


class ScrapePage:
    """The exposition of what ``snapshot()`` returns, as bytes, rendered again only
    ``interval`` seconds after the last rendering (scrapes in between get the same bytes).

    ``snapshot`` is a collector's
    :meth:`~agent_smith.metrics.MetricsCollector.snapshot`, or the
    sum of many processes' (:func:`~agent_smith.metrics.shared.merged_snapshot`).
    """

    def __init__(self, snapshot: Callable[[], dict[str, Any]], interval: float = 1.0) -> None:
        self._snapshot = snapshot
        self._interval = interval
        self._lock = threading.Lock()
        self._rendered_at = float("-inf")
        self._body = b""

    def body(self) -> bytes:
        if time.monotonic() - self._rendered_at < self._interval:
            return self._body
        with self._lock:  # one thread renders; the others wait for its bytes
            if time.monotonic() - self._rendered_at >= self._interval:
                self._body = exposition(self._snapshot()).encode("utf-8")
                self._rendered_at = time.monotonic()
            return self._body


def _labels(labels: dict[str, Any]) -> str:
    if not labels:
        return ""
    inner = ",".join(f'{key}="{_escape(str(value))}"' for key, value in labels.items())
    return "{" + inner + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _number(value: float) -> str:
    return repr(float(value)) if isinstance(value, float) else str(value)
