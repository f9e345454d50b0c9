"""Build the scripted test model (tests/support/scripted_model.py) once, and say what it cost.

    .venv/bin/python scripts/build_test_model.py [--force] [OUT.gguf]

Without OUT it builds into the model cache under a name keyed by the
builder's hash (what the tests use; scripts/test.sh runs this), and does
nothing when that version is already there unless ``--force``. It prints the
build's wall time and the file's size: the figures in docs/benchmarks.md.
The tokenizer comes from the default local model, fetched once if missing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.scripted_model import build, cached_path  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, help="where to write (default: the cache)")
    parser.add_argument("--force", action="store_true", help="build even when cached")
    args = parser.parse_args()
    path: Path = args.out or cached_path()
    if path.is_file() and not args.force and args.out is None:
        print(f"scripted test model: {path} (cached)")
        return
    report = build(path)
    print(
        f"scripted test model: {report.path} built in {report.seconds:.1f} s, "
        f"{report.size / 1e6:.1f} MB"
    )


if __name__ == "__main__":
    main()
