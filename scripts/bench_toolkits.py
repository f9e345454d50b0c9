#!/usr/bin/env python3
"""Benchmark: the search toolkit on a 5,000-file tree, and the shell tool's overhead.

* ``grep``   one ``SearchToolkit.grep`` over the whole generated tree (a
             pattern that matches a few lines, so every file is read);
* ``index``  the lexical index built once (first refresh), then queries:
             each query walks the tree's metadata to stay fresh and scores
             with BM25 (target: <= 20 ms per query);
* ``shell``  ``ShellToolkit.run("true")`` against a bare ``subprocess.run``
             of the same ``/bin/sh -c true`` with captured output (target:
             <= 1.5x), and against the same with ``start_new_session=True``
             (the tool's own session: on a loaded Linux host, ``setsid``
             creates a scheduler autogroup per call, which costs the
             tool and this column alike), taking turns.

The tree (generated in a temporary folder, removed afterwards): 50 folders
of 100 Python-like files, each about 40 lines drawn from a fixed vocabulary
(seeded, so every run builds the same tree). Counts are kept small for a
shared 2-core machine; raise ``--calls`` on a quiet one.

    .venv/bin/python scripts/bench_toolkits.py [--files 5000] [--queries 50] [--calls 200]
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_smith.toolkits import (  # noqa: E402
    SearchPolicy,
    SearchToolkit,
    ShellPolicy,
    ShellToolkit,
)

DOMAIN = (  # noqa: SIM905 (a word list reads better)
    "request response retry backoff token session cache index query parse render "
    "config policy handler stream buffer socket timeout cancel worker pool schedule "
    "message history memory summary limit budget price usage server client route"
).split()
QUERIES = (
    "where is retry backoff handled",
    "session cache timeout",
    "parse the stream buffer",
    "worker pool schedule cancel",
    "usage price budget limit",
)


def make_tree(root: Path, files: int, seed: int = 7) -> None:
    """``files`` Python-like files in folders of 100, deterministic for ``seed``.

    Identifiers follow a Zipf-like law over 5,000 made-up words plus the
    domain words above, as in real code, where a few names are everywhere
    and most are rare (a 30-word vocabulary would put every query word in
    every file, which no real tree does).
    """
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    made_up = ["".join(rng.choices(letters, k=rng.randint(4, 9))) for _ in range(5000)]
    vocabulary = DOMAIN + made_up
    weights = [1.0 / (rank + 1) for rank in range(len(vocabulary))]
    rng.shuffle(weights)
    for n in range(files):
        folder = root / f"pkg{n // 100:02d}"
        folder.mkdir(exist_ok=True)
        lines = []
        for i in range(40):
            a, b, c = rng.choices(vocabulary, weights, k=3)
            if i % 8 == 0:
                lines.append(f"def {a}_{b}_{i}(self, {c}):  # {a} {c}")
            else:
                lines.append(f"    {a}{b.title()} = {c}({i})")
        if n % 997 == 0:
            lines.append("    raise NeedleError('the rare line')")
        (folder / f"mod{n % 100:02d}.py").write_text("\n".join(lines) + "\n")


def timed(fn, repeat: int) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    print(f"Python {platform.python_version()}, {platform.machine()}")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        make_tree(root, args.files)
        search = SearchToolkit(SearchPolicy(root=root))

        grep = timed(lambda: search.grep("NeedleError"), 5)
        print(
            f"grep over {args.files} files: best {ms(min(grep))}, "
            f"median {ms(statistics.median(grep))}"
        )

        start = time.perf_counter()
        indexed = search.index.refresh()
        build = time.perf_counter() - start
        print(f"index build ({indexed} files): {ms(build)}")
        for label, max_age in (("cached (index_max_age=1 s)", 3600.0), ("fresh (max_age=0)", 0.0)):
            index = SearchToolkit(SearchPolicy(root=root, index_max_age=max_age)).index
            index.refresh()
            index.query("warm up")
            times = []
            for i in range(args.queries):
                query = QUERIES[i % len(QUERIES)]
                times += timed(lambda q=query, i=index: i.query(q), 1)
            times.sort()
            p95 = times[max(int(len(times) * 0.95) - 1, 0)]
            print(f"index query, {label}: median {ms(statistics.median(times))}, p95 {ms(p95)}")

        shell = ShellToolkit(ShellPolicy(root=root))
        argv = ["/bin/sh", "-c", "true"]
        runs: dict[str, list[float]] = {"tool": [], "bare": [], "bare+session": []}
        for _ in range(args.calls):  # taking turns, so load changes hit all three alike
            runs["tool"] += timed(lambda: shell.run("true"), 1)
            runs["bare"] += timed(lambda: subprocess.run(argv, capture_output=True, cwd=root), 1)
            runs["bare+session"] += timed(
                lambda: subprocess.run(argv, capture_output=True, cwd=root, start_new_session=True),
                1,
            )
        tool, bare, session = (statistics.median(runs[k]) for k in runs)
        print(
            f"shell call (median of {args.calls}): tool {ms(tool)}, bare subprocess.run "
            f"{ms(bare)} ({tool / bare:.2f}x), bare with start_new_session {ms(session)} "
            f"({tool / session:.2f}x)"
        )


if __name__ == "__main__":
    main()
