"""Benchmark: import time and memory of ``agent_smith`` against its own dependencies.

Each measurement is a fresh interpreter (``python -c``) so nothing is cached
in-process; we take the best of several runs. Bytecode is cached for every
module alike in a temporary ``PYTHONPYCACHEPREFIX`` (an environment with
``PYTHONDONTWRITEBYTECODE`` would otherwise recompile our sources on every
import while the installed dependencies load their ``.pyc`` files). The baseline imports what the
library cannot avoid: ``requests``, ``sseclient`` and ``dataclasses_json``
together. Target: ``import agent_smith`` at most 1.15x the baseline.

    /work/venv/bin/python scripts/bench_import.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

PROBE = """
import json, resource, sys, time
start = time.perf_counter()
{statement}
elapsed = time.perf_counter() - start
rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"seconds": elapsed, "rss_kib": rss_kib, "modules": len(sys.modules)}}))
"""

TARGETS = {
    "nothing (interpreter)": "import json",
    "requests + sseclient + dataclasses_json": "import requests, sseclient, dataclasses_json",
    "agent_smith": "import agent_smith",
    "agent_smith: Agent, LlmClient, tool": "from agent_smith import Agent, LlmClient, tool",
}


def probe(statement: str, env: dict[str, str]) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(statement=statement)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    result: dict[str, float] = json.loads(out.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory(prefix="bench-import-") as cache:
        env["PYTHONPYCACHEPREFIX"] = cache
        for statement in TARGETS.values():  # warm up: write the bytecode cache
            probe(statement, env)
        best = measure(args.repeat, env)
    report(best, args.repeat)


def measure(repeat: int, env: dict[str, str]) -> dict[str, dict[str, float]]:
    best: dict[str, dict[str, float]] = {}
    for _ in range(repeat):
        for name, statement in TARGETS.items():  # interleaved: load hits all alike
            sample = probe(statement, env)
            if name not in best or sample["seconds"] < best[name]["seconds"]:
                rss = min(sample["rss_kib"], best.get(name, sample)["rss_kib"])
                best[name] = {**sample, "rss_kib": rss}
    return best


def report(best: dict[str, dict[str, float]], repeat: int) -> None:
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}")
    print(f"python {platform.python_version()}; best of {repeat} fresh interpreters\n")
    print(f"{'import':42} {'ms':>7} {'max RSS MiB':>12} {'modules':>8}")
    for name, sample in best.items():
        print(
            f"{name:42} {sample['seconds'] * 1000:7.1f} {sample['rss_kib'] / 1024:12.1f}"
            f" {int(sample['modules']):8d}"
        )
    deps = best["requests + sseclient + dataclasses_json"]
    print()
    for name in ("agent_smith", "agent_smith: Agent, LlmClient, tool"):
        ours = best[name]
        print(
            f"{name}: time {ours['seconds'] / deps['seconds']:.2f}x the deps (target <= 1.15x),"
            f" memory {ours['rss_kib'] / deps['rss_kib']:.2f}x (max RSS)"
        )


if __name__ == "__main__":
    main()
