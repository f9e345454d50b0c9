#!/usr/bin/env python3
"""Benchmark: what an eval costs per case beyond the agent's turn, on threads and on Dask.

Threads (``--cases`` cases, ``--concurrency`` in flight, best of
``--repeat``): every case is one turn of a fresh agent on the scripted
in-process model (:class:`~agent_smith.TestModel`: it answers at once, so
the turn is all framework):

* ``floor``: a hand-written pool making a fresh agent per case, sending the
  case's input and checking the answer contains the expected text: the turn
  itself, and the least an eval can do;
* ``evaluate``: :func:`agent_smith.evals.evaluate` on the same factory with
  the same check (``Contains``) plus a tool-call trajectory check and
  limits, without a results file, then with a ``.jsonl`` results file.

The overhead per case is ``(evaluate - floor) / cases`` of wall time; the
driver's CPU time per case is given too (it depends less on the load).

Dask: the same cases against an :class:`~agent_smith.AgentSpec` whose model
is the scripted HTTP server in another process, answering after
``--latency`` seconds (a model's think time), on a ``LocalCluster`` of 1, 2
and 4 worker processes of one thread each (``--dask-cases`` cases, two per
worker in flight): cases per second should grow with the workers.

    .venv/bin/python scripts/bench_evals.py [--cases 1000] [--concurrency 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bench_server  # noqa: E402

from agent_smith import Agent, AgentConfig, AgentSpec, TestModel  # noqa: E402
from agent_smith.evals import Case, Contains, Dataset, Limits, ToolCalls, evaluate  # noqa: E402
from agent_smith.llm.request import LlmRequest  # noqa: E402

CONFIG = AgentConfig(stream=False)


def echo(request: LlmRequest) -> str:
    """The scripted model's answer: the question, repeated."""
    return f"you asked: {request.messages[-1].content}"


def make_agent() -> Agent:
    return Agent(TestModel(respond=echo), config=CONFIG)


def dataset(n: int) -> Dataset:
    cases = tuple(Case(f"c{i}", f"question {i}", expected=f"question {i}") for i in range(n))
    checks = (Contains(), ToolCalls((), only=True), Limits(max_turns=2))
    return Dataset(cases, evaluators=checks, name="bench")


def floor(cases: Dataset, c: int) -> int:
    """What an eval must do at the least: a fresh agent per case, its turn, one check."""

    def one(case: Case) -> bool:
        with make_agent() as agent:
            return str(case.expected) in agent.send(case.input).content

    passed = 0
    with ThreadPoolExecutor(c, thread_name_prefix="bench-floor") as pool:
        in_flight: set[Future[bool]] = set()
        for case in cases.cases:
            in_flight.add(pool.submit(one, case))
            if len(in_flight) >= c:
                done, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
                passed += sum(f.result() for f in done)
        passed += sum(f.result() for f in in_flight)
    return passed


def timed(run: Callable[[], int], expected: int) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    passed = run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert passed == expected, f"{passed} of {expected} passed"
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dask-cases", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--workers", default="1,2,4", help="Dask worker counts ('' skips Dask)")
    args = parser.parse_args()
    if args.serve is not None:
        from tests.support.llm_server import Text

        def slow(body: object) -> Text:
            time.sleep(args.serve)
            return Text("you asked: " + str(body["messages"][-1]["content"]))  # type: ignore[index]

        bench_server.serve(slow)
        return
    n, c = args.cases, args.concurrency
    cases = dataset(n)
    tmp = Path(tempfile.mkdtemp(prefix="bench_evals_"))
    counter = iter(range(10**9))
    rows: list[tuple[str, float, float]] = []

    def eval_run(results: str | None) -> int:
        path = tmp / f"{next(counter)}{results}" if results else None
        report = evaluate(cases, make_agent, concurrency=c, results=path)
        return sum(r.passed for r in report.runs)

    def best(name: str, run: Callable[[], int]) -> None:
        run()  # warm up
        wall, cpu = min(timed(run, n) for _ in range(args.repeat))
        rows.append((name, wall, cpu))
        print(f"  {name}: {wall / n * 1e6:,.0f} µs/case", file=sys.stderr)

    best("floor: fresh agent, turn, check", lambda: floor(cases, c))
    best("evaluate, threads", lambda: eval_run(None))
    best("evaluate, threads, .jsonl results", lambda: eval_run(".jsonl"))
    print(
        f"\nPython {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs; "
        f"{n} cases, concurrency {c}, best of {args.repeat}\n"
    )
    print("| per case | wall (µs) | over the floor (µs) | driver CPU (µs) |")
    print("|---|---:|---:|---:|")
    base = rows[0][1]
    for name, wall, cpu in rows:
        over = "—" if wall == base else f"{(wall - base) / n * 1e6:+,.0f}"
        print(f"| {name} | {wall / n * 1e6:,.0f} | {over} | {cpu / n * 1e6:,.0f} |")
    workers = [int(w) for w in args.workers.split(",") if w]
    if workers:
        dask_scaling(args, workers)


def dask_scaling(args: argparse.Namespace, workers: list[int]) -> None:
    from distributed import Client, LocalCluster

    proc, url = bench_server.start(__file__, "--serve", str(args.latency))
    spec = AgentSpec(url, config=CONFIG)
    cases = dataset(args.dask_cases)
    print(
        f"\nDask: {args.dask_cases} cases, model latency {args.latency * 1000:.0f} ms, "
        "workers of one thread, two cases per worker in flight\n"
    )
    print("| workers | wall (s) | cases/s | per case (ms) |")
    print("|---:|---:|---:|---:|")
    try:
        for count in workers:
            cluster = LocalCluster(
                n_workers=count, threads_per_worker=1, processes=True, dashboard_address=None
            )
            with cluster, Client(cluster) as client:
                executor = client.get_executor()
                evaluate(dataset(count * 2), spec, executor=executor, concurrency=2 * count)
                wall = time.perf_counter()
                report = evaluate(cases, spec, executor=executor, concurrency=2 * count)
                wall = time.perf_counter() - wall
            assert report.pass_rate == 1.0, report.table()
            per = wall / args.dask_cases
            print(f"| {count} | {wall:.1f} | {1 / per:,.1f} | {per * 1000:.1f} |", flush=True)
    finally:
        bench_server.stop(proc)


if __name__ == "__main__":
    main()
