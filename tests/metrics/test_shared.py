"""Metrics of many processes: published into one directory, summed by the web app or by the
exporter process (agent-smith metrics-exporter), read back by prometheus_client's parser."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from agent_smith.metrics import MetricsCollector
from agent_smith.metrics.prometheus import exposition
from agent_smith.metrics.shared import SnapshotPublisher, merge, merged_snapshot
from agent_smith.web.app import WebApp
from agent_smith.web.serve import WebServer
from tests.support.pipes import TIMEOUT, PipeReader
from tests.support.served import REPO

MODEL = ("calc", "openai", "m")

# One worker process: counts, publishes into the directory (argv[1]) and exits.
WORKER = textwrap.dedent(
    """
    import sys
    from agent_smith.metrics import MetricsCollector
    from agent_smith.metrics.shared import SnapshotPublisher

    collector = MetricsCollector()
    requests = int(sys.argv[2])
    for _ in range(requests):
        collector.add("model_requests", ("calc", "openai", "m"))
        collector.observe("model_request_duration", ("calc", "openai", "m"), 0.25)
    collector.add("tool_calls", ("calc", sys.argv[3]))
    with SnapshotPublisher(collector, sys.argv[1]):
        pass
    """
)


def counted(collector: MetricsCollector, requests: int, tool: str) -> MetricsCollector:
    for _ in range(requests):
        collector.add("model_requests", MODEL)
        collector.observe("model_request_duration", MODEL, 0.25)
    collector.add("tool_calls", ("calc", tool))
    return collector


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def run_workers(directory: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for requests_made, tool in ((3, "add"), (4, "mul")):
        subprocess.run(
            [sys.executable, "-c", WORKER, str(directory), str(requests_made), tool],
            check=True,
            env=env,
            timeout=TIMEOUT,
        )


def test_merged_snapshots_equal_one_collector_that_saw_everything() -> None:
    one, other = counted(MetricsCollector(), 3, "add"), counted(MetricsCollector(), 4, "mul")
    everything = counted(counted(MetricsCollector(), 3, "add"), 4, "mul")
    assert samples(exposition(merge([one.snapshot(), other.snapshot()]))) == samples(
        exposition(everything.snapshot())
    )


def test_an_empty_directory_sums_to_every_metric_with_no_series(tmp_path: Path) -> None:
    assert merged_snapshot(tmp_path) == MetricsCollector().snapshot()


def test_a_publisher_writes_on_start_and_its_final_counts_on_close(
    tmp_path: Path, no_thread_leak: None
) -> None:
    collector = counted(MetricsCollector(), 1, "add")
    with SnapshotPublisher(collector, tmp_path, interval=3600) as publisher:
        assert json.loads(publisher.path.read_text()) == collector.snapshot()
        counted(collector, 2, "add")
    assert json.loads(publisher.path.read_text()) == collector.snapshot()
    assert [path.name for path in tmp_path.iterdir()] == [publisher.path.name]  # no .tmp left


def test_a_file_that_is_no_snapshot_is_left_out_with_a_warning_naming_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with SnapshotPublisher(counted(MetricsCollector(), 2, "add"), tmp_path):
        pass
    (tmp_path / "torn.json").write_text('{"counters": {"model_req')
    (tmp_path / "wrong.json").write_text('{"counters": {"model_requests": [{"value": 1}]}}')
    with caplog.at_level(logging.WARNING, logger="agent_smith.metrics.shared"):
        summed = merged_snapshot(tmp_path)
    assert summed == counted(MetricsCollector(), 2, "add").snapshot()
    assert "torn.json" in caplog.text and "wrong shape" in caplog.text


def test_histograms_with_other_buckets_are_not_summed_into_wrong_counts() -> None:
    snapshot = counted(MetricsCollector(), 1, "add").snapshot()
    odd = json.loads(json.dumps(snapshot))
    odd["histograms"]["model_request_duration"][0]["bounds"] = [1.0]
    odd["histograms"]["model_request_duration"][0]["counts"] = [1, 0]
    assert merge([snapshot, odd]) == merge([snapshot])


def test_the_web_app_serves_the_sum_of_every_worker_in_its_directory(tmp_path: Path) -> None:
    run_workers(tmp_path)
    app = WebApp(lambda session: None, sessions=lambda _id: None, metrics_dir=tmp_path)  # type: ignore[arg-type, return-value]
    with WebServer(app).start() as server:
        text = requests.get(server.url + "/metrics", timeout=TIMEOUT).text
    seen = samples(text)
    model = frozenset({"agent": "calc", "provider": "openai", "model": "m"}.items())
    assert seen["agent_smith_model_requests_total", model] == 7
    assert seen["agent_smith_model_request_duration_seconds_count", model] == 7
    assert seen["agent_smith_tool_calls_total", frozenset({("agent", "calc"), ("tool", "mul")})]


def test_the_exporter_process_serves_the_sum_and_nothing_else(tmp_path: Path) -> None:
    run_workers(tmp_path)
    command = ["metrics-exporter", "--dir", str(tmp_path), "--port", "0"]
    exporter = subprocess.Popen(
        [sys.executable, "-m", "agent_smith", *command],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert exporter.stderr is not None
    err = PipeReader(exporter.stderr, "exporter-err")
    try:
        found = re.search(r"(http://\S+)/metrics", err.wait_for("Ctrl-C stops"))
        assert found, err.text()
        text = requests.get(found.group(1) + "/metrics", timeout=TIMEOUT).text
        missing = requests.get(found.group(1) + "/api/chat", timeout=TIMEOUT)
        posted = requests.post(found.group(1) + "/metrics", timeout=TIMEOUT)
    finally:
        exporter.terminate()
        exporter.wait(TIMEOUT)
        exporter.stderr.close()
    model = frozenset({"agent": "calc", "provider": "openai", "model": "m"}.items())
    assert samples(text)["agent_smith_model_requests_total", model] == 7
    assert (missing.status_code, posted.status_code) == (404, 405)
