"""Recorded provider replies kept under ``tests/llm/fixtures`` (sources in its SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).parent.parent / "llm" / "fixtures"


def recorded(name: str) -> bytes:
    """A recording's bytes, as the provider sent them."""
    return (FIXTURES / name).read_bytes()


def payloads(name: str) -> list[str]:
    """The recorded ``data:`` payloads of a ``*.chunks.txt`` file, one a line."""
    return [line for line in recorded(name).decode().splitlines() if line.strip()]


def framed(lines: list[str], *, done: bool = True, end: str = "\n") -> bytes:
    """``lines`` as an SSE body of ``data:`` events, with a closing ``[DONE]`` if ``done``."""
    body = "".join(f"data: {line}{end}{end}" for line in lines)
    if done:
        body += f"data: [DONE]{end}{end}"
    return body.encode()
