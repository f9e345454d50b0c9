#!/usr/bin/env python3
"""Benchmark: the agent loop's own cost per turn, parallel tools, and agent size.

One run measures, side by side:

* per turn (user message -> N parallel tool calls -> final answer, two LLM
  round trips), median and p95 wall time, streamed and not:
  ``floor``  a minimal hand-written ``requests.Session`` loop doing the same
             two round trips (tools run inline, no events, no hooks);
  ``agent``  ``Agent.send()`` with the same tools;
* the same turn with a typed output (``output_type=Invoice``, the ten-field
  nested dataclass of tests/support/invoices.py; with tools that is tool
  mode): the second reply is a ``final_result`` call. The floor sends the
  same ``final_result`` tool and builds the ``Invoice`` from its arguments
  by hand (no validation); the agent validates and converts it. A second
  floor also validates the arguments (a compiled ``jsonschema`` validator),
  which shows what the agent adds beyond the validation itself;
* how often the garbage collector ran during each path's turns (a pass
  lands on whichever turn allocates next; a turn that leaves no reference
  cycles does not call for one);
* the same turn with a metrics collector installed (``agent + metrics``:
  installed for its turns only, alternating with the others), against
  ``agent`` without one;
* one turn whose four tools each sleep 0.2 s (they run in parallel);
* building an ``Agent`` with a shared ``LlmClient``: time and memory
  (``tracemalloc``) per agent.

The LLM is the scripted server of tests/support/llm_server.py, run in its own
process (so it does not take our GIL) and answering instantly.

    /work/venv/bin/python scripts/bench_agent.py [--turns 300] [--tools 4]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bench_server  # noqa: E402

from agent_smith import (  # noqa: E402
    Agent,
    AgentRequest,
    LlmClient,
    MetricsCollector,
    Runtime,
    make_tool,
)
from agent_smith.agent.output import FINAL_RESULT as FINAL  # noqa: E402
from agent_smith.agent.output import FinalResultTool  # noqa: E402
from agent_smith.agent.output_type import output_schema  # noqa: E402
from tests.support.invoices import INVOICE, Address, Currency, Invoice, Line  # noqa: E402

MODEL = "bench"


# -- the server process --------------------------------------------------------


def serve(tools: int) -> None:
    """Server process: print the URL, answer until stdin closes.

    A request whose last message is the user's gets ``tools`` parallel calls
    (``tool0`` ... with ``{"x": i}``); one that ends in tool results gets a
    short text answer, or a ``final_result`` call with the invoice when
    that tool is offered.
    """
    from tests.support.invoices import INVOICE_DATA
    from tests.support.llm_server import Calls, Text

    def respond(body: dict[str, Any]) -> Calls | Text:
        names = [t["function"]["name"] for t in body.get("tools") or []]
        if body["messages"][-1]["role"] == "user":
            return Calls(*((names[i % len(names)], {"x": i}) for i in range(tools)))
        if FINAL in names:
            return Calls((FINAL, INVOICE_DATA))
        return Text("All done.")

    bench_server.serve(respond)


def start_server(tools: int) -> tuple[subprocess.Popen[str], str]:
    """This script's server process (see :func:`serve`) and its URL."""
    return bench_server.start(__file__, "--serve", "--tools", str(tools))


# -- the floor: a hand-written loop ------------------------------------------------


def tool_functions(count: int, sleep: float = 0.0) -> list[Callable[[int], str]]:
    def make(i: int) -> Callable[[int], str]:
        def fn(x: int) -> str:
            if sleep:
                time.sleep(sleep)
            return f"result {x}"

        fn.__name__ = f"tool{i}"
        fn.__doc__ = "A benchmark tool."
        return fn

    return [make(i) for i in range(count)]


def invoice_by_hand(data: dict[str, Any]) -> Invoice:
    """What a hand-written loop does with the final_result arguments: no checks."""
    return Invoice(
        number=data["number"],
        customer=data["customer"],
        address=Address(**data["address"]),
        currency=Currency(data["currency"]),
        status=data["status"],
        lines=[Line(x["item"], x["quantity"], float(x["unit_price"])) for x in data["lines"]],
        total=float(data["total"]),
        paid=data["paid"],
        note=data.get("note"),
        tags=data.get("tags", []),
    )


def make_floor(
    url: str, tools: int, stream: bool, typed: bool = False, validate: bool = False
) -> Callable[[], str]:
    """Two round trips with requests + json, the calls run inline."""
    session = requests.Session()
    chat = url + "/v1/chat/completions"
    fns = {f.__name__: f for f in tool_functions(tools)}
    schemas = [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": "A benchmark tool.",
                "parameters": {
                    "type": "object",
                    "properties": {"x": {"type": "integer"}},
                    "required": ["x"],
                },
            },
        }
        for name in fns
    ]
    if typed:
        parameters = output_schema(Invoice).schema
        schemas.append(FinalResultTool(output_schema(Invoice)).schema.to_openai())
        assert schemas[-1]["function"]["parameters"] is parameters
        checker = jsonschema.Draft202012Validator(parameters)

    def ask(messages: list[dict[str, Any]]) -> dict[str, Any]:
        body = {"model": MODEL, "messages": messages, "tools": schemas, "stream": stream}
        if typed:
            body["tool_choice"] = "required"
        if not stream:
            response = session.post(chat, json=body)
            response.raise_for_status()
            return response.json()["choices"][0]["message"]  # type: ignore[no-any-return]
        content: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        with session.post(chat, json=body, stream=True) as response:
            response.raise_for_status()
            for line in response.iter_lines(chunk_size=None):
                if not line.startswith(b"data: ") or line == b"data: [DONE]":
                    continue
                choices = json.loads(line[6:])["choices"]
                if not choices:
                    continue
                delta = choices[0]["delta"]
                if delta.get("content"):
                    content.append(delta["content"])
                for part in delta.get("tool_calls") or []:
                    call = calls.setdefault(part["index"], {"id": "", "name": "", "arguments": ""})
                    call["id"] = part.get("id") or call["id"]
                    function = part.get("function") or {}
                    call["name"] = function.get("name") or call["name"]
                    call["arguments"] += function.get("arguments") or ""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(content)}
        if calls:
            message["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for _, c in sorted(calls.items())
            ]
        return message

    def turn() -> str:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Run the tools."},
        ]
        while True:
            message = ask(messages)
            messages.append(message)
            if not message.get("tool_calls"):
                return str(message["content"])
            for call in message["tool_calls"]:
                fn = call["function"]
                if fn["name"] == FINAL:
                    data = json.loads(fn["arguments"])
                    if validate and not checker.is_valid(data):
                        return "invalid"
                    invoice = invoice_by_hand(data)
                    return "All done." if invoice == INVOICE else repr(invoice)
                result = fns[fn["name"]](**json.loads(fn["arguments"]))
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})

    return turn


# -- the agent ------------------------------------------------------------------------


def make_agent_turn(
    llm: LlmClient,
    runtime: Runtime,
    tools: int,
    stream: bool,
    sleep: float = 0.0,
    typed: bool = False,
) -> Callable[[], str]:
    agent = Agent(llm, "Be brief.", tool_functions(tools, sleep), runtime=runtime)
    request = AgentRequest("Run the tools.", stream=stream, output_type=Invoice if typed else None)

    def turn() -> str:
        agent.memory.clear()  # same two round trips, same body size, every turn
        reply = agent.send(request)
        if typed:
            return "All done." if reply.output == INVOICE else repr(reply.output)
        return reply.content

    return turn


def with_metrics(turn: Callable[[], str], collector: MetricsCollector) -> Callable[[], str]:
    """``turn`` with ``collector`` installed while it runs (the observer is process-wide)."""

    def measured() -> str:
        collector.install()
        try:
            return turn()
        finally:
            collector.uninstall()

    return measured


def timed(turn: Callable[[], str]) -> tuple[float, float]:
    """(wall time, CPU time of this process) of one turn, in seconds."""
    cpu = time.process_time()
    start = time.perf_counter()
    answer = turn()
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    assert answer == "All done.", answer
    return elapsed, cpu


Times = dict[str, tuple[list[float], list[float]]]


def per_turn(runs: dict[str, Callable[[], str]], turns: int) -> tuple[Times, dict[str, int]]:
    """Wall and CPU time per turn, and garbage collector passes, per path.

    The paths alternate so background load hits all alike.
    """
    for run in runs.values():  # warm up: connections, caches, pool threads
        for _ in range(20):
            run()
    times: Times = {name: ([], []) for name in runs}
    passes = dict.fromkeys(runs, 0)
    running = [""]

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            passes[running[0]] += 1

    gc.callbacks.append(count)
    try:
        for _ in range(turns):
            for name, run in runs.items():
                running[0] = name
                wall, cpu = timed(run)
                times[name][0].append(wall)
                times[name][1].append(cpu)
    finally:
        gc.callbacks.remove(count)
    return times, passes


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, int(len(values) * 0.95) - 1)]


def construction(llm: LlmClient, runtime: Runtime, count: int) -> tuple[float, float, float]:
    """(µs per bare agent, µs per agent with two tools, bytes per bare agent)."""
    prebuilt = [make_tool(f) for f in tool_functions(2)]
    gc.collect()
    best_bare = best_tools = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(count):
            Agent(llm, "Be brief.", runtime=runtime)
        best_bare = min(best_bare, (time.perf_counter() - start) / count)
        start = time.perf_counter()
        for _ in range(count):
            Agent(llm, "Be brief.", prebuilt, runtime=runtime)
        best_tools = min(best_tools, (time.perf_counter() - start) / count)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    kept = [Agent(llm, "Be brief.", runtime=runtime) for _ in range(1000)]
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    size = sum(s.size_diff for s in after.compare_to(before, "filename")) / len(kept)
    return best_bare * 1e6, best_tools * 1e6, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--tools", type=int, default=4)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.tools)
        return

    proc, url = start_server(args.tools)
    try:
        with Runtime() as runtime:
            llm = LlmClient(url, MODEL, runtime=runtime, max_retries=0)
            rows: list[tuple[bool, bool, Times, dict[str, int]]] = []
            for typed in (False, True):
                for stream in (False, True):
                    runs = {
                        "floor": make_floor(url, args.tools, stream, typed),
                        "agent": make_agent_turn(llm, runtime, args.tools, stream, typed=typed),
                    }
                    if typed:
                        runs["checking floor"] = make_floor(url, args.tools, stream, True, True)
                    else:
                        runs["agent + metrics"] = with_metrics(
                            make_agent_turn(llm, runtime, args.tools, stream), MetricsCollector()
                        )
                    rows.append((typed, stream, *per_turn(runs, args.turns)))
            sleepy = make_agent_turn(llm, runtime, 4, False, sleep=0.2)
            sleepy()
            sleepy_times = [timed(sleepy)[0] for _ in range(10)]
            bare_us, tools_us, size = construction(llm, runtime, 2000)
    finally:
        bench_server.stop(proc)

    print(f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs")
    what = f"user -> {args.tools} parallel tool calls -> final answer"
    print(f"\nPer turn: {what} ({args.turns} turns)\n")
    print(
        "| turn | floor median (ms) | agent median (ms) | ratio | floor p95 (ms) "
        "| agent p95 (ms) | framework time (ms) | CPU per turn, floor / agent (ms) "
        "| GC passes per 100 turns, floor / agent |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for typed, stream, times, passes in rows:
        (floor, floor_cpu), (agent, agent_cpu) = times["floor"], times["agent"]
        fm, am = statistics.median(floor), statistics.median(agent)
        kind = ("streamed" if stream else "not streamed") + (", typed output" if typed else "")
        print(
            f"| {kind} | {fm * 1e3:.2f} | {am * 1e3:.2f} "
            f"| {am / fm:.2f}x | {p95(floor) * 1e3:.2f} | {p95(agent) * 1e3:.2f} "
            f"| {(am - fm) * 1e3:.2f} | {statistics.median(floor_cpu) * 1e3:.2f} / "
            f"{statistics.median(agent_cpu) * 1e3:.2f} "
            f"| {passes['floor'] * 100 / args.turns:.1f} / "
            f"{passes['agent'] * 100 / args.turns:.1f} |"
        )
    print("\nTyped output against a floor that validates too (compiled jsonschema):\n")
    print("| turn | checking floor median (ms) | agent median (ms) | ratio |")
    print("|---|---:|---:|---:|")
    for typed, stream, times, _passes in rows:
        if typed:
            cm, am = (
                statistics.median(times["checking floor"][0]),
                statistics.median(times["agent"][0]),
            )
            kind = "streamed" if stream else "not streamed"
            print(f"| {kind}, typed output | {cm * 1e3:.2f} | {am * 1e3:.2f} | {am / cm:.2f}x |")
    print("\nMetrics collector on against off (same turn, alternating):\n")
    print(
        "| turn | agent median (ms) | agent + metrics median (ms) | ratio "
        "| p95 off / on (ms) | CPU per turn off / on (ms) | CPU ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for typed, stream, times, _passes in rows:
        if not typed:
            (off, off_cpu), (on, on_cpu) = times["agent"], times["agent + metrics"]
            om, mm = statistics.median(off), statistics.median(on)
            oc, mc = statistics.median(off_cpu), statistics.median(on_cpu)
            kind = "streamed" if stream else "not streamed"
            print(
                f"| {kind} | {om * 1e3:.2f} | {mm * 1e3:.2f} | {mm / om:.3f}x "
                f"| {p95(off) * 1e3:.2f} / {p95(on) * 1e3:.2f} "
                f"| {oc * 1e3:.2f} / {mc * 1e3:.2f} | {mc / oc:.3f}x |"
            )
    print(
        f"\nFour tools sleeping 0.2 s each, one turn: median "
        f"{statistics.median(sleepy_times):.3f} s, max {max(sleepy_times):.3f} s"
    )
    print(
        f"\nAgent construction (shared client): {bare_us:.1f} µs bare, "
        f"{tools_us:.1f} µs with two prebuilt tools; {size / 1024:.2f} KiB per agent"
    )


if __name__ == "__main__":
    main()
