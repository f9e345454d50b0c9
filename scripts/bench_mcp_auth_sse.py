#!/usr/bin/env python3
"""Benchmark: what OAuth adds per MCP request once a token is held, and legacy SSE latency.

1. ``OAuthProvider.headers()`` (the header every request asks for) against
   the fixed-bearer-token header, in microseconds per call.
2. ``tools/call`` round trips to an OAuth-protected server on 127.0.0.1
   (tests/support/fake_oauth.py), authorized by OAuth (token already held)
   and by the same token given as ``bearer_token``, taking turns.
3. ``tools/call`` round trips to the official Python SDK's server
   (tests/integration/servers/sdk_server.py) over the legacy HTTP+SSE
   transport and over Streamable HTTP.

Prints Markdown tables for docs/benchmarks.md.

    python scripts/bench_mcp_auth_sse.py [--calls 500] [--header-calls 200000]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "integration" / "servers" / "sdk_server.py"
WARMUP = 30

sys.path.insert(0, str(ROOT))

import requests  # noqa: E402

from agent_smith import (  # noqa: E402
    InMemoryTokenStorage,
    McpClient,
    OAuthConfig,
    OAuthTokens,
    ServerConfig,
)
from agent_smith.mcp.auth.provider import OAuthProvider  # noqa: E402
from agent_smith.mcp.auth.urls import canonical_resource  # noqa: E402
from agent_smith.mcp.http_request import BearerToken  # noqa: E402
from tests.support.fake_oauth import FakeOAuthServer  # noqa: E402


def per_call_us(fn: Callable[[], object], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e6


def header_cost(calls: int) -> tuple[float, float]:
    storage = InMemoryTokenStorage()
    url = "http://127.0.0.1:9/mcp"
    storage.save_tokens(canonical_resource(url), OAuthTokens("tok", expires_at=time.time() + 3600))
    with requests.Session() as session:
        provider = OAuthProvider(
            OAuthConfig(storage=storage), server="bench", url=url, session=session
        )
        bearer = BearerToken("tok")
        best_oauth = min(
            per_call_us(lambda: provider.headers("POST", url), calls) for _ in range(3)
        )
        best_bearer = min(per_call_us(lambda: bearer.headers("POST", url), calls) for _ in range(3))
    return best_oauth, best_bearer


def latencies(client: McpClient, calls: int) -> list[float]:
    for _ in range(WARMUP):
        client.call_tool("echo", {"text": "warm"})
    times = []
    for i in range(calls):
        start = time.perf_counter()
        client.call_tool("echo", {"text": f"m{i}"})
        times.append((time.perf_counter() - start) * 1e3)
    return times


def summary(times: list[float]) -> tuple[float, float]:
    return statistics.median(times), statistics.quantiles(times, n=20)[18]


def oauth_vs_bearer(calls: int) -> dict[str, tuple[float, float]]:
    results: dict[str, list[float]] = {"OAuth (token held)": [], "bearer_token": []}
    with FakeOAuthServer() as fake:
        fake.clients["bench"] = "s"
        oauth = OAuthConfig(grant="client_credentials", client_id="bench", client_secret="s")
        with McpClient.connect(ServerConfig(alias="o", url=fake.mcp_url, auth=oauth)) as warm:
            warm.call_tool("echo", {})  # authorized once; the token is held from here on
            token = next(iter(fake.tokens))
            plain = ServerConfig(alias="b", url=fake.mcp_url, bearer_token=token)
            with McpClient.connect(plain) as fixed:
                for _ in range(3):  # taking turns, so load changes hit both alike
                    results["OAuth (token held)"] += latencies(warm, calls // 3)
                    results["bearer_token"] += latencies(fixed, calls // 3)
    return {k: summary(v) for k, v in results.items()}


@contextmanager
def sdk_server(*flags: str) -> Iterator[int]:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), *flags, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "Uvicorn running" in line:
                break
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


def transports(calls: int) -> dict[str, tuple[float, float, float]]:
    out: dict[str, tuple[float, float, float]] = {}
    for name, flags, path, transport in (
        ("HTTP+SSE (2024-11-05)", ("--sse",), "/sse", "sse"),
        ("Streamable HTTP, SSE answers", ("--http",), "/mcp", "streamable-http"),
        ("Streamable HTTP, JSON answers", ("--http", "--json"), "/mcp", "streamable-http"),
    ):
        with sdk_server(*flags) as port:
            config = ServerConfig(
                alias="bench", url=f"http://127.0.0.1:{port}{path}", transport=transport
            )
            with McpClient.connect(config) as client:
                cpu = time.process_time()
                times = latencies(client, calls)
                cpu_us = (time.process_time() - cpu) / (calls + WARMUP) * 1e6
            out[name] = (*summary(times), cpu_us)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--header-calls", type=int, default=200_000)
    args = parser.parse_args()
    print(f"Python {platform.python_version()}, {platform.machine()}\n")
    oauth_us, bearer_us = header_cost(args.header_calls)
    print("| headers() per request | µs per call |\n|---|---:|")
    print(f"| OAuth provider, token held | {oauth_us:.2f} |")
    print(f"| fixed bearer_token | {bearer_us:.2f} |\n")
    print("| tools/call, protected server | median (ms) | p95 (ms) |\n|---|---:|---:|")
    for name, (median, p95) in oauth_vs_bearer(args.calls).items():
        print(f"| {name} | {median:.2f} | {p95:.2f} |")
    print()
    print(
        "| tools/call, SDK server | median (ms) | p95 (ms) | client CPU per call (µs) |\n"
        "|---|---:|---:|---:|"
    )
    for name, (median, p95, cpu_us) in transports(args.calls).items():
        print(f"| {name} | {median:.2f} | {p95:.2f} | {cpu_us:.0f} |")


if __name__ == "__main__":
    main()
