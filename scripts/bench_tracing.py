#!/usr/bin/env python3
"""Benchmark: what OpenTelemetry tracing costs an agent turn, off and on.

The turn is bench_agent.py's (user message -> 4 parallel tool calls -> final
answer: two LLM round trips against the scripted server in its own process),
and so is the floor, a minimal hand-written ``requests`` loop.

* Off, in fresh interpreters: the agent turn against the floor, taking turns
  (target: at most 1.5x), where ``opentelemetry`` cannot be imported (the
  extra not installed) and where it is installed but the application does not
  use it. Also, in a hot loop, what one turn's tracing calls cost while off.
* On: in one interpreter with the OpenTelemetry SDK (a ``TracerProvider``, a
  ``SimpleSpanProcessor`` and an ``InMemorySpanExporter``), traced and
  untraced turns taking turns, so the machine's load hits both alike (a
  global provider cannot be unset: "untraced" swaps the library's one gate,
  ``tracer()``, for one that answers None, as it does without a provider).
  The difference of their medians over the spans one turn makes (1
  ``invoke_agent`` + 2 ``chat`` + 4 ``execute_tool``) is the framework time
  per span (target: at most 50 µs), the SDK's own work included. Then, in hot
  loops, each span kind through our handle against the bare SDK calls it
  makes (start, attributes, propagation, end): our own share.

    .venv/bin/python scripts/bench_tracing.py [--turns 300]
"""

from __future__ import annotations

import argparse
import contextvars
import importlib.abc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

TOOLS = 4
SPANS_PER_TURN = 1 + 2 + TOOLS


class _NoOpenTelemetry(importlib.abc.MetaPathFinder):
    """An import hook that makes ``opentelemetry`` look not installed."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:  # type: ignore[override]
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ModuleNotFoundError(f"No module named {name!r}")


# -- children ---------------------------------------------------------------------


def child_floor(url: str, turns: int) -> dict[str, Any]:
    """Floor and agent, taking turns, streamed and not: median wall times (s)."""
    import bench_agent

    from agent_smith import LlmClient, Runtime

    result: dict[str, Any] = {}
    with Runtime() as runtime:
        llm = LlmClient(url, bench_agent.MODEL, runtime=runtime, max_retries=0)
        for stream in (False, True):
            times = bench_agent.per_turn(
                {
                    "floor": bench_agent.make_floor(url, TOOLS, stream),
                    "agent": bench_agent.make_agent_turn(llm, runtime, TOOLS, stream),
                },
                turns,
            )
            key = "streamed" if stream else "not streamed"
            result[key] = {name: statistics.median(wall) for name, (wall, _) in times.items()}
    result["off_cost_us"] = _off_cost()
    result["otel_loaded"] = any(m.split(".")[0] == "opentelemetry" for m in sys.modules)
    return result


def child_traced(url: str, turns: int) -> dict[str, Any]:
    """Traced and untraced turns taking turns in one process (see the module docstring)."""
    import bench_agent
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from agent_smith import LlmClient, Runtime

    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    result: dict[str, Any] = {"costs": _span_costs(provider, exporter)}
    with Runtime() as runtime:
        llm = LlmClient(url, bench_agent.MODEL, runtime=runtime, max_retries=0)
        for stream in (False, True):
            turn = bench_agent.make_agent_turn(llm, runtime, TOOLS, stream)
            spans: list[int] = []

            def traced(turn: Any = turn, spans: list[int] = spans) -> str:
                exporter.clear()
                _tracing(True)
                try:
                    return str(turn())
                finally:
                    _tracing(False)
                    spans.append(len(exporter.get_finished_spans()))

            times = bench_agent.per_turn({"off": turn, "on": traced}, turns)
            key = "streamed" if stream else "not streamed"
            result[key] = {
                name: {"wall": statistics.median(wall), "cpu": statistics.median(cpu)}
                for name, (wall, cpu) in times.items()
            }
            result[key]["spans"] = statistics.mode(spans)
    return result


_GATE: dict[str, Any] = {}


def _tracing(on: bool) -> None:
    """Switch tracing on or off in this process: the one gate, ``tracer()``, in each module.

    A global tracer provider cannot be unset, so "off" puts in a gate that
    always answers None, which is what ``tracer()`` answers without a provider.
    """
    from agent_smith.tracing import agent_span, observer, otel

    modules = (agent_span, observer, otel)
    real = _GATE.setdefault("tracer", otel.tracer)
    for module in modules:
        module.tracer = real if on else _no_tracer  # type: ignore[attr-defined]


def _no_tracer() -> None:
    return None


class _Samples:
    """What one turn's tracing calls take: a request, its body and reply, a tool and a call."""

    def __init__(self) -> None:
        from agent_smith import (
            LlmClient,
            LlmRequest,
            Runtime,
            ToolCall,
            ToolResult,
            UserMessage,
            make_tool,
        )
        from agent_smith.llm.request import LlmResponse
        from agent_smith.messages import AssistantMessage, TokenUsage
        from agent_smith.observer import get_observer

        self.observer = get_observer()

        def tool0(x: int) -> str:
            """A tool."""
            return "r"

        self.runtime = Runtime()
        self.url = "http://127.0.0.1:8080/v1/chat/completions"
        self.llm = LlmClient("http://127.0.0.1:8080", "m", runtime=self.runtime)
        self.request = LlmRequest((UserMessage("hi"),))
        self.body = {"model": "m", "messages": [], "stream": False, "temperature": 0.2}
        usage = TokenUsage(1, 2, 3)
        self.response = LlmResponse(AssistantMessage("x", usage=usage), "stop", "id", "m")
        self.tool = make_tool(tool0)
        self.call = ToolCall("call_0", "tool0", {"x": 1})
        self.result = ToolResult("r")

    def chat(self) -> None:
        """One LLM call's tracing calls, as the client makes them (through the observer seam)."""
        span = self.observer.on_chat_start(self.llm, self.request, self.body)
        with span:
            span.inject({})
            span.finish(self.response)

    def tool_call(self) -> None:
        """One tool call's tracing calls, as the pool and the dispatcher make them."""
        contextvars.copy_context()  # what the pool takes at submit for the worker
        with self.observer.on_tool_start(self.call, self.tool, self.runtime) as span:
            span.finish(self.result)


def _best(fn: Any, count: int = 2000, *, clear: Any = None) -> float:
    """CPU µs per call of ``fn`` in this thread, best of 7 runs of ``count``."""
    fastest = float("inf")
    for _ in range(7):
        start = time.thread_time()
        for _ in range(count):
            fn()
        fastest = min(fastest, (time.thread_time() - start) / count)
        if clear is not None:
            clear()
    return fastest * 1e6


def _off_cost() -> float:
    """CPU µs that one turn's tracing calls (1 turn, 2 LLM calls, 4 tools) cost while off."""
    from agent_smith import Agent, LlmClient
    from agent_smith.agent.events import final_message
    from agent_smith.tracing.agent_span import invoke_agent

    samples = _Samples()
    agent = Agent(LlmClient(samples.url), runtime=samples.runtime)

    def turn() -> None:
        invoke_agent(agent, agent._identity, iter(()), None, answer=final_message)
        for _ in range(2):
            samples.chat()
        for _ in range(TOOLS):
            samples.tool_call()

    try:
        return _best(turn)
    finally:
        samples.runtime.close()


def _span_costs(provider: Any, exporter: Any) -> dict[str, tuple[float, float]]:
    """Per span kind, CPU µs of the SDK calls alone and of the same span through our handle.

    Hot loops in one thread: what a span costs when the code is in cache,
    ours against the bare SDK calls it makes.
    """
    from opentelemetry import context, propagate, trace

    sdk = provider.get_tracer("agent_smith")
    samples = _Samples()
    chat_start = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "m",
        "server.address": "127.0.0.1",
        "server.port": 8080,
        "gen_ai.request.temperature": 0.2,
    }
    chat_end = {
        "gen_ai.response.finish_reasons": ["stop"],
        "gen_ai.response.model": "m",
        "gen_ai.response.id": "id",
        "gen_ai.usage.input_tokens": 1,
        "gen_ai.usage.output_tokens": 2,
    }
    tool_start = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "tool0",
        "gen_ai.tool.call.id": "call_0",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "A tool.",
    }

    def sdk_chat() -> None:
        span = sdk.start_span("chat m", kind=trace.SpanKind.CLIENT, attributes=chat_start)
        propagate.inject({}, context=trace.set_span_in_context(span))
        span.set_attributes(chat_end)
        span.end()

    def sdk_tool() -> None:
        span = sdk.start_span("execute_tool tool0", attributes=tool_start)
        token = context.attach(trace.set_span_in_context(span))
        context.detach(token)
        span.end()

    _tracing(True)
    try:
        return {
            "chat": (
                _best(sdk_chat, clear=exporter.clear),
                _best(samples.chat, clear=exporter.clear),
            ),
            "execute_tool": (
                _best(sdk_tool, clear=exporter.clear),
                _best(samples.tool_call, clear=exporter.clear),
            ),
        }
    finally:
        _tracing(False)
        samples.runtime.close()


# -- the parent -------------------------------------------------------------------


def _argv(mode: str, url: str, *extra: str) -> list[str]:
    return [sys.executable, __file__, "--child", mode, "--url", url, *extra]


def run_child(mode: str, url: str, turns: int, *, block: bool = False) -> dict[str, Any]:
    """``mode`` in a fresh interpreter; its JSON result."""
    extra = ["--turns", str(turns), *(["--block-otel"] if block else [])]
    out = subprocess.run(
        _argv(mode, url, *extra), capture_output=True, text=True, cwd=ROOT, check=False
    )
    if out.returncode != 0:
        raise SystemExit(out.stderr)
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--child", choices=("floor", "traced"), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--block-otel", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        if args.block_otel:
            sys.meta_path.insert(0, _NoOpenTelemetry())
        child = child_floor if args.child == "floor" else child_traced
        print(json.dumps(child(args.url, args.turns)))
        return

    import bench_agent

    proc, url = bench_agent.start_server(TOOLS)
    try:
        blocked = run_child("floor", url, args.turns, block=True)
        assert not blocked["otel_loaded"]
        unused = run_child("floor", url, args.turns)
        assert not unused["otel_loaded"]
        traced = run_child("traced", url, args.turns)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(10)

    print(f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs")
    print(f"\nTracing off: agent turn vs the floor ({TOOLS} parallel tools, {args.turns} turns)\n")
    print("| opentelemetry | turn | floor median (ms) | agent median (ms) | ratio |")
    print("|---|---|---:|---:|---:|")
    for label, result in (("not installed", blocked), ("installed, unused", unused)):
        for key in ("not streamed", "streamed"):
            floor, agent = result[key]["floor"], result[key]["agent"]
            print(
                f"| {label} | {key} | {floor * 1e3:.2f} | {agent * 1e3:.2f} "
                f"| {agent / floor:.2f}x |"
            )
    print(
        "\nOne turn's tracing calls while off, in a hot loop (CPU): "
        f"{blocked['off_cost_us']:.1f} µs not installed, {unused['off_cost_us']:.1f} µs unused"
    )
    print("\nTracing on (SDK, SimpleSpanProcessor, InMemorySpanExporter) vs off, taking turns\n")
    print(
        "| turn | spans | off, median (ms) | on, median (ms) "
        "| framework time per span, wall (µs) | per span, CPU (µs) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for key in ("not streamed", "streamed"):
        result = traced[key]
        spans = result["spans"]
        assert spans == SPANS_PER_TURN, spans
        off, on = result["off"], result["on"]
        print(
            f"| {key} | {spans} | {off['wall'] * 1e3:.2f} | {on['wall'] * 1e3:.2f} "
            f"| {(on['wall'] - off['wall']) / spans * 1e6:.1f} "
            f"| {(on['cpu'] - off['cpu']) / spans * 1e6:.1f} |"
        )
    print("\nOne span in a hot loop (thread CPU time, best of 7): the SDK calls alone and ours\n")
    print("| span | SDK calls alone (µs) | through agent_smith (µs) | ours on top (µs) |")
    print("|---|---:|---:|---:|")
    for kind, (bare, ours) in traced["costs"].items():
        print(f"| {kind} | {bare:.1f} | {ours:.1f} | {ours - bare:.1f} |")


if __name__ == "__main__":
    main()
