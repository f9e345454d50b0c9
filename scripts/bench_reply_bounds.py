#!/usr/bin/env python3
"""Benchmark: what the first-run bounds cost a turn (issue 22).

Three costs, each per unit of work, best of ``--runs`` runs:

* the repetition guard, per streamed token: ``RepetitionDetector.feed`` on
  the library's own source (code and prose, no repetition) cut in
  4-character tokens;
* the written-call hold, per held delta: ``CallText.feed`` over a call's
  text growing to ``CALL_CHARS`` characters in 4-character deltas (the
  whole text is held, and re-read on every delta);
* the context fit, per request once a window is known:
  ``ContextFit.before_sending`` on a 50-message history that fits.

    python scripts/bench_reply_bounds.py [--tokens 20000] [--runs 5]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_smith.agent.call_text import CallText  # noqa: E402
from agent_smith.agent.context_fit import ContextFit  # noqa: E402
from agent_smith.agent.reply_bounds import RepetitionDetector  # noqa: E402
from agent_smith.llm.request import LlmRequest  # noqa: E402
from agent_smith.messages import AssistantMessage, Message, UserMessage  # noqa: E402

#: The length of the call held in the written-call benchmark, in characters (~128 tokens).
CALL_CHARS = 512


def best(runs: int, work: int, fn: object) -> float:
    """Best seconds per unit of ``work`` over ``runs`` calls of ``fn``."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times) / work


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    sources = sorted((ROOT / "agent_smith").rglob("*.py"))
    text = "".join(path.read_text(encoding="utf-8") for path in sources)[: args.tokens * 4]
    tokens = [text[i : i + 4] for i in range(0, len(text), 4)]

    def guard() -> None:
        detector = RepetitionDetector()
        for token in tokens:
            if detector.feed(token) is not None:
                raise AssertionError("prose taken for repetition")

    call = '{"name": "calculator", "arguments": {"expression": "' + "1+" * CALL_CHARS
    call = call[:CALL_CHARS]
    prefixes = [call[end : end + 4] for end in range(0, len(call), 4)]

    def hold() -> None:
        reader = CallText()
        for piece in prefixes:
            if reader.feed(piece):
                raise AssertionError("a call's text shown")

    history: list[Message] = []
    for n in range(25):
        history += [UserMessage(f"question {n} " * 10), AssistantMessage(f"answer {n} " * 20)]
    request = LlmRequest(tuple(history))
    fit = ContextFit(1_000_000, object())

    def fitting() -> None:
        for _ in range(1000):
            fit.before_sending(request)

    print(f"Python {platform.python_version()}, {platform.machine()}, best of {args.runs}")
    print(f"repetition guard: {best(args.runs, len(tokens), guard) * 1e9:8.0f} ns per token")
    print(f"written-call hold: {best(args.runs, len(prefixes), hold) * 1e9:8.0f} ns per held delta")
    print(f"context fit:       {best(args.runs, 1000, fitting) * 1e6:8.1f} µs per request")


if __name__ == "__main__":
    main()
