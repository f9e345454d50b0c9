#!/usr/bin/env python3
"""Benchmark: what approving tool calls costs a turn.

Per turn (user message -> N parallel tool calls -> final answer: two LLM
round trips, not streamed) against the instant scripted server of
``bench_agent.py`` (its own process), the paths taking turns:

* ``unmarked``   no tool needs approval (the approval step's fast path);
* ``predicate``  every tool marked with a predicate that says "no need";
* ``approver``   every tool marked ``requires_approval=True``, an approver
                 that approves at once;
* ``pause``      no approver: ``send()`` pauses, the state goes to JSON and
                 back, ``resume()`` approves every call.

Then the approval step on its own (no HTTP): ``decide_round`` over N calls,
and ``PausedTurn.to_json`` / ``from_json`` for a round of N calls.

    .venv/bin/python scripts/bench_approvals.py [--turns 300] [--tools 4]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_agent import MODEL, start_server, tool_functions  # noqa: E402

from agent_smith import (  # noqa: E402
    Agent,
    AgentConfig,
    AgentRequest,
    ApprovalRequired,
    CancellationSource,
    LlmClient,
    PausedTurn,
    Runtime,
    ToolCall,
    make_tool,
)
from agent_smith.agent.approval_gate import decide_round  # noqa: E402
from agent_smith.agent.tree import AgentTree  # noqa: E402
from agent_smith.agent.turn import Turn  # noqa: E402

REQUEST = AgentRequest("Run the tools.", stream=False)


def make_tools(count: int, marker: Any) -> list[Any]:
    return [make_tool(fn, requires_approval=marker) for fn in tool_functions(count)]


def make_turn(llm: LlmClient, runtime: Runtime, tools: int, path: str) -> Callable[[], str]:
    marker: Any = {"unmarked": False, "predicate": lambda args: False}.get(path, True)
    approver = (lambda request: True) if path == "approver" else None
    agent = Agent(llm, "Be brief.", make_tools(tools, marker), runtime=runtime, approver=approver)

    def turn() -> str:
        agent.memory.clear()  # same two round trips, same body size, every turn
        if path != "pause":
            return agent.send(REQUEST).content
        try:
            agent.send(REQUEST)
        except ApprovalRequired as paused:
            state = PausedTurn.from_json(paused.state.to_json())
            return agent.resume(state, dict.fromkeys(state.waiting, True)).content
        raise AssertionError("the turn did not pause")

    return turn


def per_turn(runs: dict[str, Callable[[], str]], turns: int) -> dict[str, tuple[list[float], ...]]:
    """Wall and CPU seconds per turn; the paths alternate so background load hits all alike."""
    for run in runs.values():  # warm up: connections, caches, pool threads
        for _ in range(20):
            run()
    times: dict[str, tuple[list[float], ...]] = {name: ([], []) for name in runs}
    for _ in range(turns):
        for name, run in runs.items():
            cpu, start = time.process_time(), time.perf_counter()
            answer = run()
            times[name][0].append(time.perf_counter() - start)
            times[name][1].append(time.process_time() - cpu)
            assert answer == "All done.", answer
    return times


def best_of(fn: Callable[[], object], count: int) -> float:
    """Best of 5 runs of ``count`` calls, in µs per call."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(count):
            fn()
        best = min(best, (time.perf_counter() - start) / count)
    return best * 1e6


def step_alone(llm: LlmClient, runtime: Runtime, tools: int, marker: Any) -> float:
    """µs per ``decide_round`` over ``tools`` calls (approver says yes), no HTTP."""
    agent = Agent(llm, tools=make_tools(tools, marker), runtime=runtime, approver=lambda r: True)
    registry = agent._tools.registry()
    calls = [ToolCall(f"call_{i}", f"tool{i}", {"x": i}) for i in range(tools)]
    config = AgentConfig()
    turn = Turn("agent", AgentTree(config.tree_max_iterations), CancellationSource(), config)

    def once() -> object:
        step = decide_round(agent, turn, calls, registry)
        try:
            next(step)
        except StopIteration as done:
            return done.value
        raise AssertionError("the step yielded an event")

    try:
        return best_of(once, 20000)
    finally:
        turn.finish()


def json_round_trip(llm: LlmClient, runtime: Runtime, url: str, tools: int) -> tuple[float, float]:
    """(µs to_json, µs from_json) of a real paused round of ``tools`` calls."""
    agent = Agent(llm, tools=make_tools(tools, True), runtime=runtime)
    try:
        agent.send(REQUEST)
    except ApprovalRequired as paused:
        state = paused.state
    else:
        raise AssertionError("the turn did not pause")
    text = state.to_json()
    return best_of(state.to_json, 20000), best_of(lambda: PausedTurn.from_json(text), 20000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--tools", type=int, default=4)
    args = parser.parse_args()

    proc, url = start_server(args.tools)
    try:
        with Runtime() as runtime:
            llm = LlmClient(url, MODEL, runtime=runtime, max_retries=0)
            paths = ("unmarked", "predicate", "approver", "pause")
            times = per_turn({p: make_turn(llm, runtime, args.tools, p) for p in paths}, args.turns)
            unmarked_us = step_alone(llm, runtime, args.tools, False)
            marked_us = step_alone(llm, runtime, args.tools, True)
            to_us, from_us = json_round_trip(llm, runtime, url, args.tools)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(10)

    print(f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs")
    print(f"\nPer turn: user -> {args.tools} parallel tool calls -> answer ({args.turns} turns)\n")
    print("| path | median (ms) | vs unmarked (ms) | p95 (ms) | CPU median (ms) |")
    print("|---|---:|---:|---:|---:|")
    base = statistics.median(times["unmarked"][0])
    for path in paths:
        wall, cpu = times[path]
        median = statistics.median(wall)
        p95 = sorted(wall)[max(0, int(len(wall) * 0.95) - 1)]
        print(
            f"| {path} | {median * 1e3:.2f} | {(median - base) * 1e3:+.2f} | {p95 * 1e3:.2f} "
            f"| {statistics.median(cpu) * 1e3:.2f} |"
        )
    print(f"\nThe approval step alone, {args.tools} calls (best of 5 x 20,000):")
    print(f"  unmarked: {unmarked_us:.1f} µs; marked, approver says yes: {marked_us:.1f} µs")
    print(f"PausedTurn of {args.tools} calls: to_json {to_us:.1f} µs, from_json {from_us:.1f} µs")


if __name__ == "__main__":
    main()
