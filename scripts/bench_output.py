#!/usr/bin/env python3
"""Benchmark: reading a typed output — JSON text -> validated, converted instance.

Measures the path every typed reply takes (``OutputSchema.read``:
``json.loads``, ``jsonschema`` validation with the validator compiled once per
type, conversion with the converter built once per type) for the ten-field
nested ``Invoice`` of ``tests/support/invoices.py`` (a nested dataclass, a
list of two dataclasses, an Enum, a Literal, Optional and defaulted fields),
and each step alone. For reference, when pydantic is installed, pydantic's
own ``TypeAdapter(Invoice).validate_json`` on the same text (compiled Rust,
not used by agent_smith). The first call (building schema, validator and
converter) is timed separately.

    .venv/bin/python scripts/bench_output.py [--calls 2000] [--runs 30]
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


def per_call_us(fn: Callable[[], Any], calls: int, repeats: int) -> tuple[float, float]:
    """(best, median) of ``repeats`` runs, in µs per call.

    Many short runs: on a shared machine the best one approximates an
    uncontended core, the median shows what the load costs.
    """
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        runs.append((time.perf_counter() - start) / calls * 1e6)
    return min(runs), statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per run")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()

    start = time.perf_counter()
    schema = output_schema(Invoice)
    assert schema.read(INVOICE_JSON) == INVOICE
    first_ms = (time.perf_counter() - start) * 1e3

    data = json.loads(INVOICE_JSON)
    convert = converter(Invoice)
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("read: parse + validate + convert", lambda: schema.read(INVOICE_JSON)),
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
    print("| step | best (µs) | median (µs) |")
    print("|---|---:|---:|")
    bests, medians = [], []
    for name, fn in steps:
        best, median = per_call_us(fn, args.calls, args.runs)
        bests.append(best)
        medians.append(median)
        print(f"| {name} | {best:.1f} | {median:.1f} |")
    print(f"\nFirst read (builds schema, validator, converter): {first_ms:.1f} ms")
    for what, value in (("best", bests[0]), ("median", medians[0])):
        verdict = "meets" if value <= TARGET_US else "misses"
        print(f"read, {what} run: {value:.1f} µs, {verdict} the {TARGET_US:.0f} µs target")


if __name__ == "__main__":
    main()
