#!/usr/bin/env python3
"""Benchmark: what the metrics collector costs, per observation and per turn, scraped or not.

* Per observation, in hot loops (best of five): a counter increment and a
  histogram value (target: at most 2 µs each); one LLM call's observation
  (start, reply with usage, end: six numbers recorded under one lock), one
  tool call's (two numbers); the same LLM call's observation with no
  collector installed (the seam's shared no-op); and, as a yardstick of the
  machine's speed at the time, a locked dictionary increment.
* Scraped: the turn of bench_agent.py (user message -> 4 parallel tool calls
  -> final answer, against the scripted server in its own process) with the
  collector installed, while the web app's ``/metrics`` is not scraped,
  while another process scrapes it 1,000 times a second (paced; the rate it
  reached is printed), and while that process GETs a route that answers 404
  as often (what serving HTTP at that rate costs, metrics aside), in
  alternating blocks so the machine's load hits all alike; and the same
  turn with no collector. Target: scraped turns at most 1.05x the unscraped
  ones. And the way to meet it: the turns' process publishes its snapshot
  into a directory once a second (``SnapshotPublisher``) and the exporter,
  a process of its own (``agent-smith metrics-exporter``), is what the
  scraper GETs 1,000 times a second.

With ``--split-cores`` the turns (this process and the scripted server it
starts) run on the first CPU and the scraper and the exporter on the others
(``os.sched_setaffinity``): what "cores of their own" means on a machine of
two.

    .venv/bin/python scripts/bench_metrics.py [--turns 200] [--split-cores]
"""

from __future__ import annotations

import argparse
import http.client
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

import bench_agent  # noqa: E402
import bench_server  # noqa: E402

from agent_smith import LlmClient, MetricsCollector, Runtime  # noqa: E402
from agent_smith.llm.request import LlmResponse  # noqa: E402
from agent_smith.messages import AssistantMessage, TokenUsage, ToolCall  # noqa: E402
from agent_smith.metrics.shared import SnapshotPublisher  # noqa: E402
from agent_smith.observer import Observer  # noqa: E402
from agent_smith.tools.base import ToolResult  # noqa: E402
from agent_smith.web.app import WebApp  # noqa: E402
from agent_smith.web.serve import WebServer  # noqa: E402

BLOCK = 20  # turns per block, scraped and not taking turns
#: The CPUs of the scraper and the exporter (``--split-cores``); None: any.
side_cores: set[int] | None = None


def on_side_cores() -> None:
    """In a child before it runs (``preexec_fn``): keep it to the side cores, if any."""
    if side_cores is not None:
        os.sched_setaffinity(0, side_cores)


def best(fn: Callable[[], None], count: int = 20000) -> float:
    """Best of five: µs per call of ``fn``."""
    times = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(count):
            fn()
        times.append((time.perf_counter() - start) / count * 1e6)
    return min(times)


def observation_costs() -> dict[str, float]:
    collector = MetricsCollector()
    llm = LlmClient("http://127.0.0.1:9/v1", "bench")
    reply = LlmResponse(AssistantMessage("hi", usage=TokenUsage(10, 5, 15)), "stop", "id", "bench")
    call, tool = (
        ToolCall("c1", "tool0", {}),
        bench_agent.make_tool(bench_agent.tool_functions(1)[0]),
    )
    result = ToolResult("ok")
    runtime = llm.runtime
    body: dict[str, Any] = {}

    def chat(observer: Observer) -> Callable[[], None]:
        def one() -> None:
            with observer.on_chat_start(llm, None, body) as span:  # type: ignore[arg-type]
                span.finish(reply)

        return one

    def tool_call() -> None:
        with collector.on_tool_start(call, tool, runtime) as span:  # type: ignore[arg-type]
            span.finish(result)

    labels = ("agent", "openai", "bench")
    lock, counts = threading.Lock(), {labels: 0}

    def reference() -> None:
        with lock:
            counts[labels] += 1

    return {
        "reference: a locked dictionary increment (this machine's speed)": best(reference),
        "LLM call (start, reply, end)": best(chat(collector)),
        "tool call (start, result, end)": best(tool_call),
        "counter increment": best(lambda: collector.add("model_requests", labels)),
        "histogram value": best(lambda: collector.observe("model_request_duration", labels, 0.3)),
        "LLM call, no collector (the no-op)": best(chat(Observer())),
    }


def scraper(url: str) -> None:
    """Scraper process: on each "go" line from stdin, GET ``url`` 1,000 times a second until
    the "stop" line, then print the rate reached; exit at end of input.

    Like Prometheus, it keeps one connection open and reads each page whole. It uses
    ``http.client`` rather than ``requests``: with ``requests`` the scraper itself ran short
    of CPU at 300-460 scrapes a second.
    """
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)

    def get() -> None:
        connection.request("GET", parts.path)
        connection.getresponse().read()

    get()
    print("ready", flush=True)
    stop = threading.Event()
    for line in sys.stdin:
        if line.strip() != "go":
            continue
        stop.clear()
        stopper = threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()))
        stopper.start()
        count, start = 0, time.perf_counter()
        while not stop.is_set():
            get()
            count += 1
            ahead = start + count / 1000 - time.perf_counter()
            if ahead > 0:
                time.sleep(ahead)
        stopper.join()
        print(count / (time.perf_counter() - start), flush=True)


class Scraper:
    """A :func:`scraper` process for ``url``, started once (no fork between blocks)."""

    def __init__(self, url: str) -> None:
        self._process = subprocess.Popen(
            [sys.executable, __file__, "--scrape", url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=on_side_cores,
        )
        assert self._process.stdin is not None and self._process.stdout is not None
        self._stdin, self._stdout = self._process.stdin, self._process.stdout
        assert self._stdout.readline() == "ready\n"

    def block(self, turn: Callable[[], str], times: list[float]) -> float:
        """``BLOCK`` turns into ``times`` while scraping; the rate reached."""
        self._stdin.write("go\n")
        self._stdin.flush()
        time.sleep(0.05)  # the scrapes under way before the first turn
        for _ in range(BLOCK):
            times.append(bench_agent.timed(turn)[0])
        self._stdin.write("stop\n")
        self._stdin.flush()
        return float(self._stdout.readline())

    def close(self) -> None:
        self._stdin.close()
        self._process.wait(30)


def start_exporter(directory: str) -> tuple[subprocess.Popen[str], str]:
    """``agent-smith metrics-exporter`` on ``directory`` in a process of its own; its URL."""
    command = ["metrics-exporter", "--dir", directory, "--port", "0"]
    exporter = subprocess.Popen(
        [sys.executable, "-m", "agent_smith", *command],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=on_side_cores,
    )
    assert exporter.stderr is not None
    line = exporter.stderr.readline()
    return exporter, line.split(": ")[1].split(";")[0]


def scraped_turns(turns: int) -> tuple[dict[str, list[float]], dict[str, float]]:
    proc, url = bench_agent.start_server(4)
    collector = MetricsCollector()
    times: dict[str, list[float]] = {
        "no collector": [],
        "collector": [],
        "collector, /metrics scraped": [],
        "collector, a 404 route scraped": [],
        "collector published, the exporter process scraped": [],
    }
    rates: dict[str, list[float]] = {row: [] for row in list(times)[2:]}
    published = tempfile.TemporaryDirectory()
    exporter = start_exporter(published.name)
    try:
        with Runtime() as runtime, SnapshotPublisher(collector, published.name):
            llm = LlmClient(url, bench_agent.MODEL, runtime=runtime, max_retries=0)
            turn = bench_agent.make_agent_turn(llm, runtime, 4, False)
            for _ in range(20):
                turn()
            app = WebApp(lambda session: None, sessions=lambda _id: None, metrics=collector)  # type: ignore[arg-type, return-value]
            with WebServer(app).start() as server:
                scrapers = {
                    "collector, /metrics scraped": Scraper(server.url + "/metrics"),
                    "collector, a 404 route scraped": Scraper(server.url + "/nothing"),
                    "collector published, the exporter process scraped": Scraper(exporter[1]),
                }
                try:
                    for _ in range(0, turns, BLOCK):
                        for _ in range(BLOCK):
                            times["no collector"].append(bench_agent.timed(turn)[0])
                        collector.install()
                        try:
                            for _ in range(BLOCK):
                                times["collector"].append(bench_agent.timed(turn)[0])
                            for row, scraping in scrapers.items():
                                rates[row].append(scraping.block(turn, times[row]))
                        finally:
                            collector.uninstall()
                finally:
                    for scraping in scrapers.values():
                        scraping.close()
    finally:
        bench_server.stop(proc)
        exporter[0].terminate()
        exporter[0].wait(30)
        published.cleanup()
    return times, {row: statistics.median(values) for row, values in rates.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--split-cores", action="store_true")
    parser.add_argument("--scrape", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.scrape:
        scraper(args.scrape)
        return
    print(f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs")
    if args.split_cores:
        global side_cores
        cores = sorted(os.sched_getaffinity(0))
        if len(cores) < 2:
            parser.error("--split-cores needs at least two CPUs")
        side_cores = set(cores[1:])
        os.sched_setaffinity(0, {cores[0]})  # the scripted server started later inherits it
        print(f"turns on CPU {cores[0]}; scraper and exporter on CPUs {sorted(side_cores)}")
    print("\nPer observation (µs, best of five hot loops of 20,000):\n")
    print("| observation | µs |")
    print("|---|---:|")
    for name, cost in observation_costs().items():
        print(f"| {name} | {cost:.2f} |")
    times, rates = scraped_turns(args.turns)
    base = statistics.median(times["collector"])
    print(f"\nPer turn ({args.turns} turns each, blocks of {BLOCK} alternating):\n")
    print("| turn | median (ms) | p95 (ms) | against the collector unscraped |")
    print("|---|---:|---:|---:|")
    for name, values in times.items():
        median = statistics.median(values)
        print(
            f"| {name} | {median * 1e3:.2f} | {bench_agent.p95(values) * 1e3:.2f} "
            f"| {median / base:.3f}x |"
        )
    print("\nScrape rates reached (per second, median of the blocks):\n")
    for row, rate in rates.items():
        print(f"- {row}: {rate:.0f}")


if __name__ == "__main__":
    main()
