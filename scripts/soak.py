"""The long soak: rounds of many agents through injected faults; resources after each round.

Each round runs ``--agents`` agents on threads for ``--turns`` turns against a
loopback server that answers with tool calls, answers, 503s, stalled and cut
streams, while their tools answer, raise or hang and another thread cancels
random turns (``tests/support/soak.py``). After each round everything is
closed; the threads, open files and resident memory printed must stay flat
from round to round, and no history may be inconsistent.

    PYTHONPATH=. python scripts/soak.py --rounds 10 --agents 16 --turns 50

The figures in docs/hardening.md came from a smaller run (the machine is
shared): ``--rounds 6 --agents 8 --turns 30``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.soak import soak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print("round  turns  seconds  threads  open_files  rss_MiB  outcomes")
    failures = 0
    for round_ in range(args.rounds):
        report = soak(agents=args.agents, turns=args.turns, seed=args.seed + round_)
        before, after = report.before, report.after
        assert before is not None and after is not None
        if round_ == 0:
            print(
                f"start      -        -  {before.threads:7d}  {before.open_files:10d}"
                f"  {before.rss_kib / 1024:7.1f}"
            )
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(report.outcomes.items()))
        print(
            f"{round_:5d}  {report.turns:5d}  {report.seconds:7.1f}  {after.threads:7d}"
            f"  {after.open_files:10d}  {after.rss_kib / 1024:7.1f}  {outcomes}",
            flush=True,
        )
        for problem in report.inconsistent:
            print(f"       INCONSISTENT: {problem}")
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
