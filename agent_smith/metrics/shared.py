"""Metrics of many processes through one directory: each publishes its snapshot, a reader sums.

A web app on gunicorn runs several worker processes, each counting in its
own collector: a scrape of one worker's ``/metrics`` would see only its
share. With a shared directory, every process runs a
:class:`SnapshotPublisher`, which writes its collector's snapshot to
``<host>-<pid>.json`` in the directory (atomically, at most once per
``interval`` and once more on close), and any reader — the web app's
``/metrics`` of any worker, or the stand-alone exporter process
(``agent-smith metrics-exporter``, which keeps scrapes out of the agents'
processes altogether) — sums the files with :func:`merged_snapshot`.

A file stays after its process ends, so totals never go down when a worker
is replaced; start each deployment with an empty directory (as
``prometheus_client``'s multiprocess mode asks). A file that cannot be read
as a snapshot is left out of the sum with a warning naming it.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .catalog import COUNTERS, HISTOGRAMS

if TYPE_CHECKING:
    from .collector import MetricsCollector

_log = logging.getLogger(__name__)
_JOIN_SECONDS = 30.0


class SnapshotPublisher:
    """Writes ``collector``'s snapshot into ``directory`` every ``interval`` seconds, from a
    thread of its own (:meth:`start`), and once more on :meth:`close`."""

    def __init__(
        self,
        collector: MetricsCollector,
        directory: str | os.PathLike[str],
        *,
        interval: float = 1.0,
    ) -> None:
        self._collector = collector
        self._directory = Path(directory)
        self._directory.mkdir(parents=True, exist_ok=True)
        self.path = self._directory / f"{socket.gethostname()}-{os.getpid()}.json"
        self._interval = interval
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> SnapshotPublisher:
        """Publish now, then every ``interval`` seconds until :meth:`close`; return self."""
        self.publish()
        self._thread = threading.Thread(target=self._run, name="agent_smith-metrics-publisher")
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stopping.wait(self._interval):
            self.publish()

    def publish(self) -> None:
        """Write the snapshot now (to a temporary file renamed over the last one)."""
        partial = self.path.with_suffix(".tmp")
        partial.write_text(json.dumps(self._collector.snapshot()), encoding="utf-8")
        os.replace(partial, self.path)

    def close(self) -> None:
        """Stop the thread, join it and publish the final counts."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(_JOIN_SECONDS)
            self._thread = None
        self.publish()

    def __enter__(self) -> SnapshotPublisher:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def merged_snapshot(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """The sum of every snapshot published in ``directory``, in the collector's snapshot shape."""
    snapshots = []
    for path in sorted(Path(directory).glob("*.json")):
        try:
            snapshots.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as err:
            _log.warning("metrics snapshot %s left out: %s", path, err)
    return merge(snapshots)


def merge(snapshots: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Sum snapshots series by series: counters' values; histograms' counts, sums and totals.

    A snapshot of the wrong shape (or a histogram whose buckets differ from
    the others') is left out with a warning; the rest still add up.
    """
    counters: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {m.name: {} for m in COUNTERS}
    histograms: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {m.name: {} for m in HISTOGRAMS}
    for snapshot in snapshots:
        try:
            _add(snapshot, counters, histograms)
        except (KeyError, TypeError, ValueError) as err:
            _log.warning("a metrics snapshot of the wrong shape left out: %r", err)
    return {
        "counters": {name: list(series.values()) for name, series in counters.items()},
        "histograms": {name: list(series.values()) for name, series in histograms.items()},
    }


def _add(
    snapshot: dict[str, Any],
    counters: dict[str, dict[tuple[Any, ...], dict[str, Any]]],
    histograms: dict[str, dict[tuple[Any, ...], dict[str, Any]]],
) -> None:
    """Add one snapshot into the sums; checked whole before anything is added."""
    counted = [
        (counters[name], _key(one), one)
        for name, series in snapshot["counters"].items()
        for one in series
        if name in counters
    ]
    timed = [
        (histograms[name], _key(one), one)
        for name, series in snapshot["histograms"].items()
        for one in series
        if name in histograms
    ]
    for sums, key, one in timed:
        if len(one["counts"]) != len(one["bounds"]) + 1 or (
            key in sums and sums[key]["bounds"] != one["bounds"]
        ):
            raise ValueError(f"histogram buckets differ: {one['bounds']!r}")
    for sums, key, one in counted:
        total = sums.setdefault(key, {"labels": dict(one["labels"]), "value": 0})
        total["value"] += one["value"]
    for sums, key, one in timed:
        if key not in sums:
            sums[key] = {**one, "labels": dict(one["labels"]), "counts": list(one["counts"])}
            continue
        total = sums[key]
        total["counts"] = [a + b for a, b in zip(total["counts"], one["counts"], strict=True)]
        total["sum"] += one["sum"]
        total["count"] += one["count"]


def _key(series: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(sorted(series["labels"].items()))
