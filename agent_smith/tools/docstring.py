"""Docstrings split into a description and per-parameter text, for tool schemas.

Understands Google style (an ``Args:`` section of indented ``name (type):
text`` lines) and NumPy style (a ``Parameters`` section underlined with
dashes, then ``name : type`` with the text indented below).
"""

from __future__ import annotations

import dataclasses
import inspect
import re

_GOOGLE_SECTIONS = ("args", "arguments", "parameters", "params", "keyword args")
_NUMPY_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_GOOGLE_PARAM = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_PARAM = re.compile(r"^(\*{0,2}\w+)\s*(?::.*)?$")


@dataclasses.dataclass(frozen=True)
class Docstring:
    """A docstring split into the description and per-parameter text."""

    description: str
    params: dict[str, str]


def parse_docstring(doc: str) -> Docstring:
    """Split a cleaned docstring into its first paragraph and parameter descriptions.

    Understands Google style (``Args:`` then indented ``name (type): text``)
    and NumPy style (``Parameters`` underlined with dashes, then ``name : type``
    with the text indented below).
    """
    lines = inspect.cleandoc(doc).splitlines()
    paragraph: list[str] = []
    for index, line in enumerate(lines):
        if not line.strip():
            if paragraph:
                break
            continue
        if _is_section_start(lines, index):
            break
        paragraph.append(line.strip())
    params: dict[str, str] = {}
    i = 0
    while i < len(lines):
        header = lines[i].strip().lower()
        if header.rstrip(":") in _GOOGLE_SECTIONS and header.endswith(":"):
            i = _google_params(lines, i + 1, params)
        elif (
            header in ("parameters", "other parameters")
            and i + 1 < len(lines)
            and _NUMPY_UNDERLINE.match(lines[i + 1])
        ):
            i = _numpy_params(lines, i + 2, params)
        else:
            i += 1
    return Docstring(" ".join(paragraph), params)


def _is_section_start(lines: list[str], index: int) -> bool:
    header = lines[index].strip().lower()
    if header.endswith(":") and header.rstrip(":") in (*_GOOGLE_SECTIONS, "returns", "raises"):
        return True
    return index + 1 < len(lines) and bool(_NUMPY_UNDERLINE.match(lines[index + 1]))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _google_params(lines: list[str], i: int, params: dict[str, str]) -> int:
    base: int | None = None
    name: str | None = None
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        indent = _indent(line)
        if base is None:
            base = indent
        if indent == 0 or indent < base:
            break
        match = _GOOGLE_PARAM.match(line.strip()) if indent == base else None
        if match:
            name = match.group(1).lstrip("*")
            params[name] = match.group(2).strip()
        elif name is not None:
            params[name] = f"{params[name]} {line.strip()}".strip()
        i += 1
    return i


def _numpy_params(lines: list[str], i: int, params: dict[str, str]) -> int:
    name: str | None = None
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if _indent(line) == 0:
            if i + 1 < len(lines) and _NUMPY_UNDERLINE.match(lines[i + 1]):
                break  # the next section
            match = _NUMPY_PARAM.match(line.strip())
            if match is None:
                break
            name = match.group(1).lstrip("*")
            params[name] = ""
        elif name is not None:
            params[name] = f"{params[name]} {line.strip()}".strip()
        i += 1
    return i
