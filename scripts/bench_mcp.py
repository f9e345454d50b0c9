#!/usr/bin/env python3
"""Benchmark: MCP ``tools/call`` round trips per second over stdio.

Compares agent_smith's blocking McpClient with the official Python SDK's async
``ClientSession``, both calling ``echo`` on the same server, sequentially and
with 8 callers in
flight at once (8 threads for agent_smith, 8 asyncio tasks for the SDK). Each
figure is the best of ``--repeat`` runs after a warm-up. Prints a Markdown
table for docs/benchmarks.md.

    python scripts/bench_mcp.py [--calls 2000] [--concurrency 8] [--repeat 3]
                                [--protocol auto|legacy] [--server sdk|echo]

``--server sdk`` (the default) is the SDK-written server of the interop
tests (tests/integration/servers/sdk_server.py), which costs about a
millisecond of CPU per call and so sets the pace once several calls are in
flight; ``--server echo`` is scripts/mcp_echo_server.py, which does almost
nothing, so the clients set the pace.

``--protocol`` picks the generation both clients speak, so the server does
the same work for each: ``auto`` negotiates 2026-07-28 with the SDK 2.x server
(agent_smith's ``ServerConfig(protocol="auto")``, the SDK's
``Client(mode="auto")``: ``server/discover``, then ``_meta`` on every request),
``legacy`` pins the ``initialize`` handshake on both. The SDK side calls its
leanest path, the ``ClientSession`` under ``Client``.
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
SERVERS = {
    "sdk": ROOT / "tests" / "integration" / "servers" / "sdk_server.py",
    "echo": ROOT / "scripts" / "mcp_echo_server.py",
}
WARMUP = 50

sys.path.insert(0, str(ROOT))

from agent_smith import McpClient, ServerConfig  # noqa: E402


def server_cpu() -> float:
    """CPU seconds used so far by this process's live children (the server; Linux, else 0)."""
    total = 0.0
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # exited meanwhile
        if int(fields[1]) == os.getpid():
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def ours(
    server: Path, calls: int, concurrency: int, repeat: int, protocol: str
) -> tuple[float, float, float]:
    config = ServerConfig(alias="bench", command=(sys.executable, str(server)), protocol=protocol)
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

        before = server_cpu()
        seq, conc = best(sequential, calls, repeat), best(concurrent, calls, repeat)
        return seq, conc, server_cpu() - before


def best(run: Callable[[], None], calls: int, repeat: int) -> float:
    rates = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        rates.append(calls / (time.perf_counter() - start))
    return max(rates)


def cpu_per_call(
    run: Callable[[], tuple[float, float, float]], calls: int
) -> tuple[float, float, float, float]:
    """Run a benchmark; also return the client's CPU microseconds per call."""
    start = time.process_time()
    seq, conc, server = run()
    return seq, conc, (time.process_time() - start) * 1e6, server


def sdk(
    server: Path, calls: int, concurrency: int, repeat: int, protocol: str
) -> tuple[float, float, float]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def main() -> tuple[float, float, float]:
        params = StdioServerParameters(command=sys.executable, args=[str(server)])
        mode = "legacy" if protocol == "legacy" else "auto"
        with open(os.devnull, "w") as devnull:
            async with Client(stdio_client(params, errlog=devnull), mode=mode) as client:
                session = client.session
                print(f"the SDK speaks {session.protocol_version}", file=sys.stderr)
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
                before = server_cpu()
                for _ in range(repeat):
                    start = time.perf_counter()
                    await sequential()
                    seq.append(calls / (time.perf_counter() - start))
                for _ in range(repeat):
                    start = time.perf_counter()
                    await concurrent()
                    conc.append(calls / (time.perf_counter() - start))
                return max(seq), max(conc), server_cpu() - before

    return asyncio.run(main())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per measured run")
    parser.add_argument("--concurrency", type=int, default=8, help="callers in flight")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (best kept)")
    parser.add_argument(
        "--protocol", default="auto", choices=("auto", "legacy"), help="both clients' generation"
    )
    parser.add_argument(
        "--server", default="sdk", choices=tuple(SERVERS), help="the SDK-written or minimal server"
    )
    args = parser.parse_args()

    # Client CPU per call counts the warm-up and the startup too; it is a
    # machine-load-independent view of how much work each client does. The
    # server's CPU per measured call shows what the server's generation costs.
    total = 2 * args.calls * args.repeat + WARMUP
    server = SERVERS[args.server]
    our_seq, our_conc, our_cpu, our_server = cpu_per_call(
        lambda: ours(server, args.calls, args.concurrency, args.repeat, args.protocol), total
    )
    sdk_seq, sdk_conc, sdk_cpu, sdk_server = cpu_per_call(
        lambda: sdk(server, args.calls, args.concurrency, args.repeat, args.protocol), total
    )
    our_cpu, sdk_cpu = our_cpu / total, sdk_cpu / total
    measured = 2 * args.calls * args.repeat
    our_server, sdk_server = our_server * 1e6 / measured, sdk_server * 1e6 / measured
    version = importlib.metadata.version("mcp")
    cpus = os.cpu_count()
    print(f"Python {platform.python_version()}, mcp {version}, {platform.machine()}, {cpus} CPUs")
    print(
        f"{args.calls} calls per run, best of {args.repeat}, {args.concurrency} in flight, "
        f"{args.server} server, protocol {args.protocol}\n"
    )
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
    print(f"| server CPU per call (µs) | {our_server:,.0f} | {sdk_server:,.0f} | — |")


if __name__ == "__main__":
    main()
