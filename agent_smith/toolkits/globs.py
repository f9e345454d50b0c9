"""Glob patterns over workspace paths: ``*``, ``?``, ``[...]`` and ``**``.

``*`` and ``?`` never cross a ``/``; ``**`` as a whole component matches any
number of folders (none included), so ``src/**/*.py`` finds ``src/a.py`` and
``src/x/y/a.py``. A pattern without a ``/`` matches a file's name at any
depth (``*.py``), as in ripgrep and .gitignore.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from ..errors import ToolError

#: Longest glob pattern accepted.
MAX_PATTERN_CHARS = 500


def glob_matcher(pattern: str, *, tool: str) -> Callable[[str], bool]:
    """A predicate over ``/``-separated relative paths; ToolError for a malformed pattern."""
    if not pattern or len(pattern) > MAX_PATTERN_CHARS or "\0" in pattern:
        raise ToolError(
            f"the glob pattern must be 1-{MAX_PATTERN_CHARS} characters", tool_name=tool
        )
    try:
        regex = _compile(pattern.removeprefix("./"))
    except re.error as err:
        raise ToolError(f"bad glob pattern {pattern!r}: {err}", tool_name=tool) from err
    if "/" in pattern.strip("/"):
        return lambda path: regex.fullmatch(path) is not None
    return lambda path: regex.fullmatch(path.rsplit("/", 1)[-1]) is not None


@functools.lru_cache(maxsize=64)
def _compile(pattern: str) -> re.Pattern[str]:
    parts = pattern.strip("/").split("/")
    out: list[str] = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        out.append(_component(part) + ("" if last else "/"))
    return re.compile("".join(out), re.DOTALL)


def _component(part: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(part):
        char = part[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = part.find("]", i + 2 if part[i + 1 : i + 2] in ("!", "]") else i + 1)
            if end < 0:
                out.append(re.escape(char))
            else:
                body = part[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)
