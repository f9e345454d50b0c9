#!/usr/bin/env python3
"""Benchmark: reading a typed output — JSON text -> validated, converted instance.

Measures the path every typed reply takes (``OutputSchema.read``:
``json.loads``, ``jsonschema`` validation with the validator compiled once per
type, conversion with the converter built once per type) for the ten-field
nested ``Invoice`` of ``tests/support/invoices.py`` (a nested dataclass, a
list of two dataclasses, an Enum, a Literal, Optional and defaulted fields),
and each step alone. For reference, when pydantic is installed, pydantic's
own ``TypeAdapter(Invoice).validate_json`` on the same text (compiled Rust,
not used by agent_smith), and a calibration loop (``sum(range(1000))``) to
scale the figures to another machine. The first call (building schema, validator and
converter) is timed separately.

    .venv/bin/python scripts/bench_output.py [--calls 200] [--runs 200]
"""

from __future__ import annotations

import argparse
import json
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

from agent_smith.agent.output_type import output_schema  # noqa: E402
from agent_smith.tools.convert import converter  # noqa: E402
from agent_smith.tools.validation import validation_errors  # noqa: E402
from tests.support.invoices import INVOICE, INVOICE_JSON, Invoice  # noqa: E402

TARGET_US = 200.0


def per_call_us(
    steps: list[tuple[str, Callable[[], Any]]], calls: int, repeats: int
) -> list[tuple[float, float, float]]:
    """Per step (best wall, median wall, median CPU) of ``repeats`` runs, in µs per call.

    Many short runs, the steps taking turns so load hits them alike: on a
    shared machine the best run approximates an uncontended core, the median
    wall time shows what the load costs, and CPU time (this process's own)
    leaves out the time other processes ran.
    """
    walls: list[list[float]] = [[] for _ in steps]
    cpus: list[list[float]] = [[] for _ in steps]
    for _ in range(repeats):
        for index, (_, fn) in enumerate(steps):
            cpu = time.process_time()
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            walls[index].append((time.perf_counter() - start) / calls * 1e6)
            cpus[index].append((time.process_time() - cpu) / calls * 1e6)
    return [
        (min(wall), statistics.median(wall), statistics.median(cpu))
        for wall, cpu in zip(walls, cpus, strict=True)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per run")
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()

    start = time.perf_counter()
    schema = output_schema(Invoice)
    assert schema.read(INVOICE_JSON) == INVOICE
    first_ms = (time.perf_counter() - start) * 1e3

    data = json.loads(INVOICE_JSON)
    convert = converter(Invoice)
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("read: parse + validate + convert", lambda: schema.read(INVOICE_JSON)),
        ("calibration: sum(range(1000)), pure Python", lambda: sum(range(1000))),
        ("json.loads", lambda: json.loads(INVOICE_JSON)),
        ("jsonschema validation", lambda: validation_errors(schema.schema, data)),
        ("conversion to Invoice", lambda: convert(data)),
    ]
    try:
        import pydantic

        adapter = pydantic.TypeAdapter(Invoice)
        assert adapter.validate_json(INVOICE_JSON) == INVOICE
        steps.append(
            (
                "pydantic TypeAdapter.validate_json (reference)",
                lambda: adapter.validate_json(INVOICE_JSON),
            )
        )
    except ImportError:
        pass

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {load}"
    )
    print(f"\n{len(INVOICE_JSON)}-byte Invoice reply, {args.runs} runs of {args.calls} calls\n")
    print("| step | best run (µs) | median run (µs) | median CPU (µs) |")
    print("|---|---:|---:|---:|")
    results = per_call_us(steps, args.calls, args.runs)
    for (name, _), figures in zip(steps, results, strict=True):
        print(f"| {name} | " + " | ".join(f"{x:.1f}" for x in figures) + " |")
    print(f"\nFirst read (builds schema, validator, converter): {first_ms:.1f} ms")
    for what, value in zip(("best run", "median run", "median CPU"), results[0], strict=True):
        verdict = "meets" if value <= TARGET_US else "misses"
        print(f"read, {what}: {value:.1f} µs, {verdict} the {TARGET_US:.0f} µs target")


if __name__ == "__main__":
    main()
