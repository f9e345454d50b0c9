#!/usr/bin/env python3
"""Benchmark: the web app under concurrent SSE clients, with an instant fake model.

The app (``WebApp`` on a SQLite session store, served by ``WebServer``:
waitress with ``--threads`` worker threads) runs in a process of its own with
an in-process fake model that streams ``--words`` tokens at once, so the
figures are the web layer's and the agent's own cost, not a model's. The
measuring process runs ``--clients`` threads; each posts turns to
``/api/chat`` back to back (``http.client``, one connection per turn like a
browser's fetch), reading each UI message stream to its end, and starts a new
conversation every ``--per-conversation`` turns (so the workload is steady:
histories do not grow with the run).

Reported: time to first byte (request sent -> first body byte, the stream's
``start`` frame) p50/p99, whole-turn latency p50/p99, turns per second, the
server's thread count (max while loaded: the worker threads, plus one lease
keeper per running turn) and its RSS after a warm-up, at each quarter and at
the end (flat: no growth per turn). Set ``MALLOC_ARENA_MAX`` in the
environment to see how much of the RSS is glibc's per-thread arenas.

    python scripts/bench_web.py [--clients 50] [--turns 2000] [--threads 64] [--words 20]

On the shared 2-core development machine, keep the defaults (already the
issue's 50 clients and 2,000 turns) or scale --turns down when it is busy.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


# -- the server process --------------------------------------------------------


def serve(store: str, threads: int, words: int) -> None:
    """Server mode: print the URL, serve until stdin closes."""
    from agent_smith import Agent, Session, WebApp, WebServer
    from agent_smith.llm.events import Finished, StreamEvent, TokenDelta
    from agent_smith.llm.request import LlmRequest, LlmResponse
    from agent_smith.messages import AssistantMessage, TokenUsage

    reply = [("word" if i == 0 else " word") for i in range(words)]
    message = AssistantMessage("".join(reply), usage=TokenUsage(10, words, 10 + words))

    class InstantModel:
        """Streams the same reply at once (what Agent needs of an LLM client)."""

        def stream(self, request: LlmRequest, *, cancel: Any = None) -> Iterator[StreamEvent]:
            for piece in reply:
                yield TokenDelta(piece)
            yield Finished("stop", message.usage, LlmResponse(message, "stop"))

        def complete(self, request: LlmRequest, *, cancel: Any = None) -> LlmResponse:
            return LlmResponse(message, "stop")

    model = InstantModel()

    def build(session: Session) -> Agent:
        return Agent(model, "You help.", session=session)  # type: ignore[arg-type]

    with WebServer(WebApp(build, sessions=store), threads=threads).start() as server:
        print(server.url, flush=True)
        sys.stdin.read()


# -- the measuring process -----------------------------------------------------


def status(pid: int) -> dict[str, int]:
    """Threads and VmRSS (KiB) of process ``pid``, from /proc."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("Threads", "VmRSS"):
            out[key] = int(value.split()[0])
    return out


def one_turn(host: str, port: int, conversation: str, n: int) -> tuple[float, float]:
    """Post one turn; return (time to first byte, whole turn) in seconds."""
    message = {"id": f"u{n}", "role": "user", "parts": [{"type": "text", "text": f"turn {n}"}]}
    body = json.dumps({"id": conversation, "messages": [message]})
    conn = http.client.HTTPConnection(host, port, timeout=60)
    start = time.perf_counter()
    try:
        conn.request("POST", "/api/chat", body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status}: {response.read()[:200]!r}")
        first = response.read1(65536)
        ttfb = time.perf_counter() - start
        data = first
        while b"data: [DONE]" not in data[-64:]:
            more = response.read1(65536)
            if not more:
                break
            data += more
        if b'"type":"finish"' not in data:
            raise RuntimeError(f"turn did not finish: {data[-300:]!r}")
        return ttfb, time.perf_counter() - start
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--turns", type=int, default=2000, help="turns in all (after warm-up)")
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--threads", type=int, default=64, help="the server's worker threads")
    parser.add_argument("--words", type=int, default=20, help="tokens per reply")
    parser.add_argument(
        "--per-conversation",
        type=int,
        default=10,
        help="turns per conversation before a client starts a new one (a steady workload)",
    )
    parser.add_argument("--serve", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve[0], int(args.serve[1]), int(args.serve[2]))
        return

    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "bench.db")
        server = subprocess.Popen(
            [sys.executable, __file__, "--serve", store, str(args.threads), str(args.words)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert server.stdin is not None and server.stdout is not None
        try:
            url = server.stdout.readline().strip()
            host, port = url.removeprefix("http://").split(":")
            results = run(args, host, int(port), server.pid)
        finally:
            server.stdin.close()
            server.wait(60)
    report(args, results)


def run(args: argparse.Namespace, host: str, port: int, pid: int) -> dict[str, Any]:
    lock = threading.Lock()
    samples: list[tuple[float, float]] = []
    counter = {"next": 0}
    total = args.warmup + args.turns
    rss: dict[str, int] = {}
    max_threads = [0]
    errors: list[str] = []

    def take() -> int | None:
        with lock:
            n = counter["next"]
            if n >= total:
                return None
            counter["next"] = n + 1
            if n == args.warmup:
                rss["after warm-up"] = status(pid)["VmRSS"]
                start_time[0] = time.perf_counter()
            for quarter in (1, 2, 3):
                if n == args.warmup + args.turns * quarter // 4:
                    rss[f"{quarter}/4"] = status(pid)["VmRSS"]
            return n

    start_time = [0.0]

    def client(index: int) -> None:
        done = 0
        while (n := take()) is not None:
            conversation = f"bench-{index}-{done // args.per_conversation}"
            done += 1
            try:
                timing = one_turn(host, port, conversation, n)
            except (OSError, RuntimeError) as err:
                with lock:
                    errors.append(str(err))
                continue
            if n >= args.warmup:
                with lock:
                    samples.append(timing)

    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(0.05):
            max_threads[0] = max(max_threads[0], status(pid)["Threads"])

    idle_threads = status(pid)["Threads"]
    watcher = threading.Thread(target=watch)
    watcher.start()
    workers = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - start_time[0]
    stop.set()
    watcher.join()
    rss["end"] = status(pid)["VmRSS"]
    return {
        "samples": samples,
        "elapsed": elapsed,
        "rss": rss,
        "idle_threads": idle_threads,
        "max_threads": max_threads[0],
        "errors": errors,
    }


def quantile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q * 100) - 1]


def report(args: argparse.Namespace, results: dict[str, Any]) -> None:
    samples = results["samples"]
    ttfb = [s[0] * 1000 for s in samples]
    turn = [s[1] * 1000 for s in samples]
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores")
    print(
        f"{args.clients} clients, {len(samples)} turns measured after {args.warmup} warm-up, "
        f"{args.words} tokens per reply, {args.per_conversation} turns per conversation, "
        f"{args.threads} server threads"
    )
    print(f"TTFB ms:  p50 {quantile(ttfb, 0.5):.1f}  p99 {quantile(ttfb, 0.99):.1f}")
    print(f"turn ms:  p50 {quantile(turn, 0.5):.1f}  p99 {quantile(turn, 0.99):.1f}")
    print(f"turns/s:  {len(samples) / results['elapsed']:.0f}")
    print(
        f"server threads: {results['idle_threads']} idle, {results['max_threads']} max under load"
    )
    rss = results["rss"]
    print("server RSS MiB: " + ", ".join(f"{k} {v / 1024:.1f}" for k, v in rss.items()))
    if results["errors"]:
        print(f"errors: {len(results['errors'])}, first: {results['errors'][0]}")


if __name__ == "__main__":
    main()
