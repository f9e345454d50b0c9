"""The ```python blocks of the README and the docs pages, with where they are."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: A block preceded (last non-blank line) by this comment is not run; the
#: comment must say why, e.g. ``<!-- snippet: skip (needs a hosted OAuth server) -->``.
SKIP = re.compile(r"^<!--\s*snippet:\s*skip\s*\((?P<reason>[^)]+)\)\s*-->$")
_FENCE = re.compile(r"^(?P<indent>\s*)(?P<ticks>`{3,})(?P<info>[^`]*)$")


@dataclass(frozen=True)
class Block:
    """One fenced code block: its page, first code line (1-based), language and code."""

    page: Path
    line: int
    language: str
    code: str
    skip_reason: str | None = None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    """README.md and every Markdown page under docs/, in a stable order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page`` (fences may be indented, as in lists)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    previous = ""  # the last non-blank line outside a block
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            if lines[i].strip():
                previous = lines[i].strip()
            i += 1
            continue
        indent, ticks = opening["indent"], opening["ticks"]
        body: list[str] = []
        i += 1
        while i < len(lines) and lines[i].strip() != ticks:
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise ValueError(f"{page}: the block opened at line {i - len(body)} never closes")
        skip = SKIP.match(previous)
        code = textwrap.dedent("\n".join(line.removeprefix(indent) for line in body))
        first_line = i - len(body) + 1  # 1-based line of the first code line
        found.append(
            Block(page, first_line, opening["info"].strip(), code, skip and skip["reason"])
        )
        previous = ""
        i += 1
    return found


def python_blocks(page: Path) -> list[Block]:
    return [b for b in blocks(page) if b.language == "python"]
