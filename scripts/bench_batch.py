#!/usr/bin/env python3
"""Benchmark: what a batch costs per input beyond the LLM call, on threads and on Dask.

Every input is one chat completion against an instant scripted server (run in
its own process, so it does not take our GIL). Rows, each timed over
``--items`` inputs with ``--concurrency`` in flight, best of ``--repeat``:

* ``floor``: a hand-written loop keeping as many inputs in flight on the same
  executor, each posted with ``requests`` (a session per thread) and its JSON
  read: the HTTP round trip and the executor alone;
* ``agent per thread``: the same pool calling ``Agent.send`` on an agent
  built once per thread: the agent's own cost;
* ``run_batch``: ``run_batch`` on its default local threads, without a
  results file, then with ``.jsonl`` and ``.sqlite`` results (fsync per
  input);
* the floor and ``run_batch`` again on a 2-worker ``LocalCluster`` (worker
  processes), through ``Client.get_executor()``.

Per input it reports wall time (wall / items) and the overhead over the
matching floor, plus the driver process's CPU time per input, which depends
less on the machine's load.

    .venv/bin/python scripts/bench_batch.py [--items 2000] [--concurrency 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bench_server  # noqa: E402

from agent_smith import Agent, AgentConfig, AgentSpec, run_batch  # noqa: E402

CONFIG = AgentConfig(stream=False)  # the floor reads one JSON body too


_local = threading.local()


def post_one(url: str, text: str) -> str:
    """The floor: one chat completion with a per-thread session (module level: Dask ships it)."""
    session = getattr(_local, "session", None)
    if session is None:
        session = _local.session = requests.Session()
    body = {"model": "", "messages": [{"role": "user", "content": text}]}
    response = session.post(f"{url}/v1/chat/completions", json=body, timeout=60)
    response.raise_for_status()
    return str(response.json()["choices"][0]["message"]["content"])


def timed(run: Callable[[], int]) -> tuple[float, float]:
    """Wall and driver-CPU seconds of ``run`` (which returns how many inputs it did)."""
    wall, cpu = time.perf_counter(), time.process_time()
    done = run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert done > 0
    return wall, cpu


def pool_run(executor: Executor, fn: Callable[[str], object], items: list[str], c: int) -> int:
    """Run ``fn`` on every item with at most ``c`` in flight, as ``run_batch`` does."""
    todo = iter(items)
    in_flight: set[Future[object]] = set()
    done = 0
    for text in todo:
        in_flight.add(executor.submit(fn, text))
        if len(in_flight) >= c:
            finished, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in finished:
                future.result()
                done += 1
    for future in in_flight:
        future.result()
        done += 1
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.serve:
        from tests.support.llm_server import Text

        bench_server.serve(lambda body: Text("done"))
        return
    proc, url = bench_server.start(__file__, "--serve")
    spec = AgentSpec(url, config=CONFIG)
    items = [f"input {i}" for i in range(args.items)]
    rows: list[tuple[str, str, float, float]] = []  # (what, floor name, wall, cpu)
    tmp = Path(tempfile.mkdtemp(prefix="bench_batch_"))
    c = args.concurrency

    def best(name: str, floor: str, run: Callable[[], int]) -> None:
        run()  # warm up: connections, agents, imports
        results = [timed(run) for _ in range(args.repeat)]
        wall, cpu = min(results)
        rows.append((name, floor, wall, cpu))
        print(f"  {name}: {wall / args.items * 1e6:.0f} µs/input", file=sys.stderr)

    def batch(executor: Executor | None, results: str | None = None) -> Callable[[], int]:
        counter = iter(range(10**9))

        def run() -> int:
            path = None
            if results is not None:
                path = tmp / f"{next(counter)}{results}"  # a fresh file: nothing to skip
            with run_batch(spec, items, executor=executor, concurrency=c, results=path) as b:
                return sum(1 for r in b if r.ok)

        return run

    try:
        with ThreadPoolExecutor(c) as pool:
            best("floor, threads", "", lambda: pool_run(pool, lambda t: post_one(url, t), items, c))
            agents = threading.local()

            def send(text: str) -> str:
                agent = getattr(agents, "agent", None)
                if agent is None:
                    agent = agents.agent = Agent(spec.make_llm(), config=CONFIG)
                agent.memory.clear()
                return agent.send(text).content

            by_hand = lambda: pool_run(pool, send, items, c)  # noqa: E731
            best("agent per thread, threads", "floor, threads", by_hand)
        best("run_batch, threads", "floor, threads", batch(None))
        best("run_batch, threads, .jsonl results", "floor, threads", batch(None, ".jsonl"))
        best("run_batch, threads, .sqlite results", "floor, threads", batch(None, ".sqlite"))
        from distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=2,
            threads_per_worker=max(1, c // 2),
            processes=True,
            dashboard_address=None,
        )
        # Imported by name, so Dask ships it by reference (the workers import
        # this file from sys.path) rather than pickling the thread-local state.
        import bench_batch

        with cluster, Client(cluster) as client:
            dask = client.get_executor()
            floor = bench_batch.Post(url)
            best("floor, Dask 2 workers", "", lambda: pool_run(dask, floor, items, c))
            best("run_batch, Dask 2 workers", "floor, Dask 2 workers", batch(dask))
    finally:
        bench_server.stop(proc)
    report(rows, args)


class Post:
    """``post_one`` bound to a URL, for Dask workers."""

    def __init__(self, url: str) -> None:
        self.url = url

    def __call__(self, text: str) -> str:
        return post_one(self.url, text)


def report(rows: list[tuple[str, str, float, float]], args: Any) -> None:
    import distributed

    n = args.items
    walls = {name: wall for name, _, wall, _ in rows}
    print(
        f"\nPython {platform.python_version()}, distributed {distributed.__version__}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs; {n} inputs, "
        f"concurrency {args.concurrency}, best of {args.repeat}\n"
    )
    print("| per input | wall (µs) | over its floor (µs) | driver CPU (µs) |")
    print("|---|---:|---:|---:|")
    for name, floor, wall, cpu in rows:
        over = f"{(wall - walls[floor]) / n * 1e6:+,.0f}" if floor else "—"
        print(f"| {name} | {wall / n * 1e6:,.0f} | {over} | {cpu / n * 1e6:,.0f} |")


if __name__ == "__main__":
    main()
