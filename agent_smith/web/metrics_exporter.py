"""The metrics exporter: ``/metrics`` served from a shared directory, in a process of its own.

A web app's own ``/metrics`` is answered by the process that runs the
turns: each scrape takes that process's HTTP handling (and, in Python, its
interpreter lock) from the turns. The exporter is a separate process that
serves the sum of the snapshots every agent process publishes into one
directory (:class:`~agent_smith.metrics.shared.SnapshotPublisher`), so a
scraper, however eager, never touches the agents' processes::

    agent-smith metrics-exporter --dir /run/agent-smith/metrics --port 9464

The page is rendered at most once a second (:class:`ScrapePage`); any other
path is a 404, any other method a 405.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from typing import Any

from ..metrics.prometheus import CONTENT_TYPE, ScrapePage
from ..metrics.shared import merged_snapshot
from .http import Response, StartResponse, error_response


class MetricsExporterApp:
    """A WSGI app answering ``GET /metrics`` with the sum of ``directory``'s snapshots."""

    def __init__(self, directory: str | os.PathLike[str], *, interval: float = 1.0) -> None:
        self._page = ScrapePage(functools.partial(merged_snapshot, directory), interval)

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        answer = self._answer(environ)
        start_response(answer.status_line, list(answer.headers))
        return [answer.body]

    def _answer(self, environ: dict[str, Any]) -> Response:
        if environ.get("PATH_INFO") != "/metrics":
            return error_response(404, "the exporter serves /metrics only")
        if environ.get("REQUEST_METHOD", "GET").upper() not in ("GET", "HEAD"):
            return Response(405, b"", (("Allow", "GET, HEAD"),))
        return Response(200, self._page.body(), (("Content-Type", CONTENT_TYPE),))
