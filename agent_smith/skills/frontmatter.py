"""The small YAML subset found in ``SKILL.md`` front matter, parsed by hand.

A ``SKILL.md`` file starts with a ``---`` line, then ``key: value`` lines,
then a closing ``---`` line; everything after it is the body. Supported, as
real skill folders use them:

* plain values (``name: pdf-tools``; a `` #`` starts a comment), folded
  onto one line when continued on indented lines;
* ``"double"`` (with ``\\"``, ``\\\\``, ``\\n``, ``\\t``, ``\\uXXXX`` escapes) and
  ``'single'`` (``''`` for a quote) quoted values;
* block scalars ``|`` (lines kept) and ``>`` (lines folded), with optional
  ``-``/``+`` chomping (trailing newlines are dropped either way);
* comment and blank lines.

Nested mappings, lists and flow collections (``[a, b]``) are accepted for
keys we do not read (``metadata``, ``allowed-tools``, ...) and come back as
``None``, like an empty value. No YAML library is needed for this much.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import ParseError

_KEY = re.compile(r"([A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+(.*)|[ \t]*)")
_BLOCK = re.compile(r"[|>][-+]?")
_ErrorFactory = Callable[[str], ParseError]
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "n": "\n", "t": "\t", "r": "\r", "0": "\0"}


@dataclass(frozen=True)
class FrontMatter:
    """The parsed fields (``None`` for empty or non-text values) and the body."""

    fields: dict[str, str | None]
    body: str


@dataclass
class _Entry:
    key: str
    line: int
    style: str  # "plain", "quoted", "|", ">", "none" (empty or collection)
    head: str  # the value on the key's own line
    more: list[str]  # continuation lines, indentation removed


def parse_front_matter(text: str) -> FrontMatter:
    """Split ``SKILL.md`` text into front-matter fields and body.

    Raises :class:`ParseError` whose message names the line (1-based) and
    whose ``offset`` is the character offset of that line.
    """
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)

    def error(index: int, problem: str) -> ParseError:
        return ParseError(f"line {index + 1}: {problem}", offset=offsets[index])

    if lines[0].rstrip() != "---":
        raise error(0, "expected '---' to open the front matter")
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        raise error(len(lines) - 1, "front matter is not closed by a '---' line")

    entries: list[_Entry] = []
    for i in range(1, end):
        line = lines[i]
        current = entries[-1] if entries else None
        if line[:1] in (" ", "\t") or line.startswith("- ") or line.rstrip() == "-":
            if current is None:
                if not line.strip() or line.strip().startswith("#"):
                    continue
                raise error(i, "indented line before any key")
            if current.style == "quoted" and line.strip() and not line.strip().startswith("#"):
                raise error(i, f"unexpected continuation of the quoted value of {current.key!r}")
            current.more.append(line)
            continue
        if not line.strip():
            if current is not None:
                current.more.append("")
            continue
        if line.startswith("#"):
            continue
        match = _KEY.fullmatch(line.rstrip())
        if match is None:
            raise error(i, "expected 'key: value'")
        key, raw = match.group(1), (match.group(2) or "").strip()
        if any(e.key == key for e in entries):
            raise error(i, f"duplicate key {key!r}")
        style, head = _head(raw, functools.partial(error, i))
        entries.append(_Entry(key, i, style, head, []))

    fields = {e.key: _value(e) for e in entries}
    body = "\n".join(lines[end + 1 :]).strip()
    return FrontMatter(fields, body)


def _head(raw: str, error: _ErrorFactory) -> tuple[str, str]:
    """Classify the value on a key's line: (style, text)."""
    if not raw or raw.startswith(("[", "{", "&", "*", "!")):
        return "none", ""
    if raw.startswith('"'):
        return "quoted", _double_quoted(raw, error)
    if raw.startswith("'"):
        return "quoted", _single_quoted(raw, error)
    if _BLOCK.fullmatch(raw):
        return raw[0], ""
    comment = raw.find(" #")
    return "plain", (raw if comment < 0 else raw[:comment]).rstrip()


def _rest_is_empty(rest: str) -> bool:
    rest = rest.strip()
    return not rest or rest.startswith("#")


def _double_quoted(raw: str, error: _ErrorFactory) -> str:
    out: list[str] = []
    i = 1
    while i < len(raw):
        ch = raw[i]
        if ch == '"':
            if not _rest_is_empty(raw[i + 1 :]):
                raise error("text after the closing quote")
            return "".join(out)
        if ch == "\\":
            nxt = raw[i + 1 : i + 2]
            if nxt == "u" and re.fullmatch(r"[0-9A-Fa-f]{4}", raw[i + 2 : i + 6]):
                out.append(chr(int(raw[i + 2 : i + 6], 16)))
                i += 6
                continue
            if nxt not in _ESCAPES:
                raise error(f"unknown escape '\\{nxt}' in a double-quoted value")
            out.append(_ESCAPES[nxt])
            i += 2
            continue
        out.append(ch)
        i += 1
    raise error("double-quoted value is not closed on its line")


def _single_quoted(raw: str, error: _ErrorFactory) -> str:
    out: list[str] = []
    i = 1
    while i < len(raw):
        ch = raw[i]
        if ch == "'":
            if raw[i + 1 : i + 2] == "'":
                out.append("'")
                i += 2
                continue
            if not _rest_is_empty(raw[i + 1 :]):
                raise error("text after the closing quote")
            return "".join(out)
        out.append(ch)
        i += 1
    raise error("single-quoted value is not closed on its line")


def _value(entry: _Entry) -> str | None:
    more = _dedent(entry.more)
    if entry.style == "none":
        # An empty value, or a nested mapping/list/flow collection: not text.
        return None
    if entry.style == "quoted":
        return entry.head
    if entry.style == "|":
        return "\n".join(more).strip("\n")
    if entry.style == ">":
        return _fold(more)
    return _fold([entry.head, *(line.strip() for line in more)])


def _dedent(lines: list[str]) -> list[str]:
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:].rstrip() for line in lines]


def _fold(lines: list[str]) -> str:
    """YAML folding: lines joined by spaces, a blank line becomes a newline."""
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            paragraphs[-1].append(line.strip())
        elif paragraphs[-1]:
            paragraphs.append([])
    return "\n".join(" ".join(p) for p in paragraphs if p)
