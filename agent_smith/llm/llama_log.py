"""What the llama.cpp server child writes: its handshake on stdout, its log on stderr.

Read by :class:`~agent_smith.llm.local_server.LocalLlamaServer`'s two reader
threads. Every log line goes to the ``agent_smith.llm.local_server`` logger
(DEBUG); a start failure quotes llama.cpp's own error lines.
"""

from __future__ import annotations

import collections
import json
import logging
import queue
from typing import IO, Any

from .local_child import HANDSHAKE

log = logging.getLogger("agent_smith.llm.local_server")


def read_stdout(stream: IO[bytes], handshake: queue.Queue[dict[str, Any] | None]) -> None:
    """Put the child's handshake (or None, if it exits without one) on ``handshake``."""
    answered = False
    for raw in stream:
        line = raw.decode("utf-8", "replace").rstrip()
        if not answered and line.startswith(HANDSHAKE):
            answered = True
            try:
                handshake.put(json.loads(line[len(HANDSHAKE) :]))
            except ValueError:
                handshake.put({"error": f"bad handshake {line!r}"})
        elif line:
            log.debug("llama.cpp: %s", line)
    if not answered:
        handshake.put(None)


def read_stderr(stream: IO[bytes], tail: collections.deque[str]) -> None:
    """Log llama.cpp's log lines, keeping the last ones in ``tail``."""
    for raw in stream:
        line = raw.decode("utf-8", "replace").rstrip()
        if line:
            tail.append(line)
            log.debug("llama.cpp: %s", line)


def error_lines(lines: list[str]) -> str:
    """llama.cpp's own error lines (level ``E``), newest last, on one line."""
    errors = [line for line in lines if _level(line) == "E"]
    if not errors:  # older llama.cpp logs carry no level column
        errors = [line for line in lines if "error" in line.lower() or "fail" in line.lower()]
    picked = errors[-2:] if errors else lines[-1:]
    return " | ".join(_strip_prefix(line) for line in picked)[:400]


def _level(line: str) -> str:
    parts = line.split(maxsplit=2)
    return parts[1] if len(parts) > 1 else ""


def _strip_prefix(line: str) -> str:
    # "0.01.436.081 E srv  start: couldn't bind ..." -> "srv  start: couldn't bind ..."
    parts = line.split(maxsplit=2)
    if len(parts) == 3 and len(parts[1]) == 1:
        return " ".join(parts[2].split())
    return line.strip()
