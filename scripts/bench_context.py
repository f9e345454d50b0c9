#!/usr/bin/env python3
"""Benchmark: what compaction, usage limits and guardrails cost when they are configured.

Two measurements:

* **The compaction check** when no compaction is due: what the loop does
  before each request of an agent with ``AgentConfig.compaction`` (on by
  default: the gate's incremental count, the window, the threshold), timed
  alone on a history of 200 messages with a known window, and with the
  default's common case, a client whose server said no window; plus the
  per-message ``note`` the loop makes as it records. The target is at most
  20 us per check.
* **Whole turns** (user message -> one tool call -> answer, two LLM round
  trips, not streamed) against the scripted server in its own process, with
  compaction off (nothing configured at all), with the defaults (compaction
  on, no window known: the scripted server has no ``/props``), with usage
  limits and a price table, with one input, one output and one tool-call
  guardrail, with compaction on and a window known (never due),
  and with all of it: fastest and median per turn (a shared machine's
  noise is larger than these features: the fastest turns compare best).
* **A turn's own work** of the usage meter and of three guardrails, timed
  without HTTP. ``scripts/bench_agent.py`` shows the unconfigured turn
  against main's.

Counts are scaled down for a shared two-core machine (``--turns 300``).

    python scripts/bench_context.py [--turns 300] [--checks 20000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bench_server  # noqa: E402

from agent_smith import (  # noqa: E402
    Agent,
    AgentConfig,
    AssistantMessage,
    Compaction,
    Guardrails,
    LlmClient,
    ModelPrice,
    Runtime,
    UsageLimits,
    UserMessage,
    tool,
)
from agent_smith.agent.context_fit import ContextFit  # noqa: E402
from agent_smith.agent.context_gate import ContextGate  # noqa: E402
from agent_smith.llm.server_props import Asked  # noqa: E402
from agent_smith.memory import FullMemory  # noqa: E402

MODEL = "bench"


@tool
def lookup(city: str) -> str:
    """Look a city up."""
    return f"{city}: 2.1 million people"


def allow(_: object) -> None:
    return None


CONFIGS: dict[str, tuple[AgentConfig, Guardrails | None]] = {
    "compaction off": (AgentConfig(compaction=None), None),
    "defaults": (AgentConfig(), None),
    "usage limits + prices": (
        AgentConfig(
            compaction=None,
            usage_limits=UsageLimits(
                max_requests=10**9, max_cost=10.0**9, prices={MODEL: ModelPrice(1.0, 2.0)}
            ),
        ),
        None,
    ),
    "3 guardrails": (
        AgentConfig(compaction=None),
        Guardrails(input=[allow], output=[allow], tool_calls=[allow]),
    ),
    "compaction (not due)": (AgentConfig(compaction=Compaction(), context_window=10**6), None),
}
CONFIGS["all of it"] = (
    AgentConfig(
        usage_limits=CONFIGS["usage limits + prices"][0].usage_limits,
        compaction=Compaction(),
        context_window=10**6,
    ),
    CONFIGS["3 guardrails"][1],
)


def check_cost(checks: int) -> tuple[float, float, float]:
    """Microseconds per compaction check (nothing due; window known, then unknown) and per note.

    The unknown window is a client whose server said it has none (a 404 to
    ``/props``, remembered): the check the default configuration makes there.
    """
    memory = FullMemory()
    for n in range(100):
        memory.append(UserMessage(f"question {n} " + "x" * 200))
        memory.append(AssistantMessage(f"answer {n} " + "y" * 300))
    gate = ContextGate(Compaction())
    fit = ContextFit(128_000, object())
    schemas = lookup.schema, lookup.schema
    prompt = "You are a helpful assistant."
    gate.tokens(memory, prompt, schemas)  # the first check counts the history once
    gate.observed(12_000)
    started = time.perf_counter()
    for _ in range(checks):
        tokens = gate.tokens(memory, prompt, schemas)
        window = fit.window(ask=True)
        assert window is not None and not gate.due(tokens, window)
    per_check = (time.perf_counter() - started) / checks * 1e6
    silent = LlmClient("http://127.0.0.1:9", runtime=None)
    silent._window.get(lambda: Asked(None))  # what a 404 to /props leaves: no window, final
    unknown = ContextFit(None, silent)
    started = time.perf_counter()
    for _ in range(checks):
        tokens = gate.tokens(memory, prompt, schemas)
        assert unknown.window(ask=gate.worth_asking(tokens)) is None
    per_unknown = (time.perf_counter() - started) / checks * 1e6
    message = AssistantMessage("a reply of some length " * 10)
    started = time.perf_counter()
    for _ in range(checks):
        gate.note(message)
    per_note = (time.perf_counter() - started) / checks * 1e6
    return per_check, per_unknown, per_note


def turn_work(count: int) -> tuple[float, float]:
    """Microseconds per turn of the meter's and the guardrails' own work (no HTTP).

    One turn as the benchmark's: two requests, one tool call, two replies
    priced; the three guardrails on the message, the call and the answer.
    """
    from agent_smith import TokenUsage, ToolCall
    from agent_smith.agent.guardrails import TurnGuardrails
    from agent_smith.agent.usage_limits import UsageMeter

    limits = CONFIGS["usage limits + prices"][0].usage_limits
    guards = CONFIGS["3 guardrails"][1]
    assert limits is not None and guards is not None
    usage = TokenUsage(120, 12, 132)
    started = time.perf_counter()
    for _ in range(count):
        meter = UsageMeter(limits)
        meter.before_request()
        meter.spend(usage, MODEL, MODEL)
        meter.before_tool_calls(1)
        meter.before_request()
        meter.spend(usage, MODEL, MODEL)
    metered = (time.perf_counter() - started) / count * 1e6
    user = UserMessage("Where?")
    calling = AssistantMessage("", (ToolCall("c1", "lookup", {"city": "Paris"}),))
    answer = AssistantMessage("Paris: 2.1 million people")
    started = time.perf_counter()
    for _ in range(count):
        turn = TurnGuardrails(guards, "a")
        for _event in turn.check_input(user):
            pass
        for _event in turn.screen(calling, final=True):
            pass
        for _event in turn.screen(answer, final=True):
            pass
    guarded = (time.perf_counter() - started) / count * 1e6
    return metered, guarded


def turns(url: str, runtime: Runtime, count: int) -> dict[str, tuple[float, float]]:
    """Median and p95 milliseconds per turn for each configuration, interleaved."""
    llm = LlmClient(url, MODEL, runtime=runtime, max_retries=0)
    agents = {
        name: Agent(llm, tools=[lookup], config=config, guardrails=guards)
        for name, (config, guards) in CONFIGS.items()
    }
    times: dict[str, list[float]] = {name: [] for name in agents}
    for agent in agents.values():  # warm up
        for _ in range(5):
            agent.memory.clear()
            agent.send("Where?")
    for _ in range(count):
        for name, agent in agents.items():
            agent.memory.clear()
            started = time.perf_counter()
            agent.send("Where?")
            times[name].append((time.perf_counter() - started) * 1000)
    return {name: _median_p95(values) for name, values in times.items()}


def _median_p95(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return ordered[0], statistics.median(ordered)


def _serve() -> None:
    from tests.support.llm_server import echo_tools_responder

    bench_server.serve(echo_tools_responder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--checks", type=int, default=20_000)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        _serve()
        return
    per_check, per_unknown, per_note = check_cost(args.checks)
    print(f"compaction check, nothing due: {per_check:.2f} us per request (target <= 20 us)")
    print(f"  the same, no window known:   {per_unknown:.2f} us per request (the default's case)")
    print(f"counting a recorded message:   {per_note:.2f} us per message")
    metered, guarded = turn_work(args.checks)
    print(f"usage meter, one turn's work:  {metered:.2f} us (2 requests, 1 tool call, 2 replies)")
    print(f"3 guardrails, one turn's work: {guarded:.2f} us (input, tool call, answer)")
    proc, url = bench_server.start(__file__, "--serve")
    try:
        with Runtime(max_workers=4) as runtime:
            results = turns(url, runtime, args.turns)
    finally:
        bench_server.stop(proc)
    base = results["compaction off"][0]  # the fastest turn: the least noise
    print(f"\nturns ({args.turns} each, one tool call, not streamed): fastest / median ms")
    for name, (median, p95) in results.items():
        print(f"  {name:24} {median:6.3f} / {p95:6.3f}   ({(median - base) * 1000:+.0f} us)")


if __name__ == "__main__":
    main()
