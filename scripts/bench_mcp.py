#!/usr/bin/env python3
"""Benchmark: MCP ``tools/call`` round trips per second over stdio.

Compares agent_smith's blocking McpClient with the official Python SDK's async
``ClientSession``, both calling ``echo`` on the same SDK-written server
(tests/integration/servers/sdk_server.py), sequentially and with 8 callers in
flight at once (8 threads for agent_smith, 8 asyncio tasks for the SDK). Each
figure is the best of ``--repeat`` runs after a warm-up. Prints a Markdown
table for docs/benchmarks.md.

    python scripts/bench_mcp.py [--calls 2000] [--concurrency 8] [--repeat 3] [--protocol auto]

``--protocol`` is agent_smith's ``ServerConfig.protocol``: ``auto`` speaks
2026-07-28 to the SDK 2.x server (``_meta`` on every request), ``legacy``
the handshake generation the SDK's ``ClientSession.initialize()`` uses.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import os
import platform
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "integration" / "servers" / "sdk_server.py"
WARMUP = 50

sys.path.insert(0, str(ROOT))

from agent_smith import McpClient, ServerConfig  # noqa: E402


def ours(calls: int, concurrency: int, repeat: int, protocol: str) -> tuple[float, float]:
    config = ServerConfig(alias="bench", command=(sys.executable, str(SERVER)), protocol=protocol)
    with McpClient.connect(config) as client:
        print(f"agent_smith speaks {client.protocol_version}", file=sys.stderr)
        for _ in range(WARMUP):
            client.call_tool("echo", {"text": "warm"})

        def sequential() -> None:
            for i in range(calls):
                client.call_tool("echo", {"text": f"m{i}"})

        def concurrent() -> None:
            barrier = threading.Barrier(concurrency)

            def worker(n: int) -> None:
                barrier.wait()
                for i in range(calls // concurrency):
                    client.call_tool("echo", {"text": f"t{n}-{i}"})

            threads = [threading.Thread(target=worker, args=(n,)) for n in range(concurrency)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()

        return best(sequential, calls, repeat), best(concurrent, calls, repeat)


def best(run: Callable[[], None], calls: int, repeat: int) -> float:
    rates = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        rates.append(calls / (time.perf_counter() - start))
    return max(rates)


def cpu_per_call(run: Callable[[], tuple[float, float]], calls: int) -> tuple[float, float, float]:
    """Run a benchmark; also return the client's CPU microseconds per call."""
    start = time.process_time()
    seq, conc = run()
    return seq, conc, (time.process_time() - start) * 1e6


def sdk(calls: int, concurrency: int, repeat: int) -> tuple[float, float]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def main() -> tuple[float, float]:
        params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
        with open(os.devnull, "w") as devnull:
            async with stdio_client(params, errlog=devnull) as (read, write):  # noqa: SIM117
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    for _ in range(WARMUP):
                        await session.call_tool("echo", {"text": "warm"})

                    async def sequential() -> None:
                        for i in range(calls):
                            await session.call_tool("echo", {"text": f"m{i}"})

                    async def worker(n: int) -> None:
                        for i in range(calls // concurrency):
                            await session.call_tool("echo", {"text": f"t{n}-{i}"})

                    async def concurrent() -> None:
                        await asyncio.gather(*(worker(n) for n in range(concurrency)))

                    seq, conc = [], []
                    for _ in range(repeat):
                        start = time.perf_counter()
                        await sequential()
                        seq.append(calls / (time.perf_counter() - start))
                    for _ in range(repeat):
                        start = time.perf_counter()
                        await concurrent()
                        conc.append(calls / (time.perf_counter() - start))
                    return max(seq), max(conc)

    return asyncio.run(main())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per measured run")
    parser.add_argument("--concurrency", type=int, default=8, help="callers in flight")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (best kept)")
    parser.add_argument("--protocol", default="auto", help="agent_smith's generation")
    args = parser.parse_args()

    # Client CPU per call counts the warm-up and the startup too; it is a
    # machine-load-independent view of how much work each client does.
    total = 2 * args.calls * args.repeat + WARMUP
    our_seq, our_conc, our_cpu = cpu_per_call(
        lambda: ours(args.calls, args.concurrency, args.repeat, args.protocol), total
    )
    sdk_seq, sdk_conc, sdk_cpu = cpu_per_call(
        lambda: sdk(args.calls, args.concurrency, args.repeat), total
    )
    our_cpu, sdk_cpu = our_cpu / total, sdk_cpu / total
    version = importlib.metadata.version("mcp")
    cpus = os.cpu_count()
    print(f"Python {platform.python_version()}, mcp {version}, {platform.machine()}, {cpus} CPUs")
    print(f"{args.calls} calls per run, best of {args.repeat}, {args.concurrency} in flight\n")
    print("| tools/call over stdio | agent_smith (calls/s) | official SDK (calls/s) | ratio |")
    print("|---|---:|---:|---:|")
    print(f"| sequential | {our_seq:,.0f} | {sdk_seq:,.0f} | {our_seq / sdk_seq:.2f}x |")
    print(
        f"| {args.concurrency} concurrent | {our_conc:,.0f} | {sdk_conc:,.0f} "
        f"| {our_conc / sdk_conc:.2f}x |"
    )
    print(
        f"| client CPU per call (µs) | {our_cpu:,.0f} | {sdk_cpu:,.0f} "
        f"| {sdk_cpu / our_cpu:.2f}x less |"
    )


if __name__ == "__main__":
    main()
