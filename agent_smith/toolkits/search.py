"""The search toolkit: regex grep with context lines, and a lexical (BM25) index.

``grep`` runs a Python regular expression over the workspace's text files
(the tree walk of :class:`~agent_smith.toolkits.workspace.Workspace`: no
links followed, skipped folders, binary and oversized files passed over) and
shows ``path:line:text`` for each match with ``path-line-text`` context lines,
stopping at the policy's caps. It checks the call's cancellation between
files, so a tool timeout stops it. ``search_code`` asks the cached
:class:`~agent_smith.toolkits.lexical_index.LexicalIndex` for the files that
best match some words, with their best lines.

Python's ``re`` backtracks: a pathological pattern on a long line can take
long. Lines longer than ``max_line_chars`` are cut before matching, which
bounds the work per line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..errors import ConfigError, ToolError
from ..tools.base import Tool, ToolContext
from ._tool import toolkit_tool
from .globs import glob_matcher
from .lexical_index import LexicalIndex
from .workspace import DEFAULT_SKIP_DIRS, FileEntry, Workspace, WorkspaceChanges

_SNIFF_BYTES = 8192
_MAX_PATTERN_CHARS = 1000
_MAX_CONTEXT = 10


@dataclass(frozen=True)
class SearchPolicy:
    """Where and how much the search toolkit searches.

    ``max_matches`` caps the matches one grep shows, ``max_line_chars`` the
    length of a line (longer ones are cut before matching and showing),
    ``max_file_bytes`` the size of a file searched or indexed, and
    ``max_results`` the files ``search_code`` returns. ``index_max_age``:
    the index checks the tree for changes when its last check is older than
    this (seconds; 0 checks before every query).
    """

    root: str | os.PathLike[str]
    max_matches: int = 100
    max_line_chars: int = 400
    max_file_bytes: int = 1024 * 1024
    max_results: int = 10
    index_max_age: float = 1.0
    allow_hard_links: bool = False
    skip_dirs: frozenset[str] = field(default=DEFAULT_SKIP_DIRS)

    def __post_init__(self) -> None:
        for name in ("max_matches", "max_line_chars", "max_file_bytes", "max_results"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"SearchPolicy.{name} must be positive")
        if self.index_max_age < 0:
            raise ConfigError("SearchPolicy.index_max_age must not be negative")


class SearchToolkit:
    """``grep`` and ``search_code`` over the text files below ``policy.root``.

    ``changes``: the files and shell toolkits of the same agent report their
    writes there, and the index reads them on the next ``search_code``
    (other changes are seen after ``index_max_age``).
    """

    def __init__(self, policy: SearchPolicy, *, changes: WorkspaceChanges | None = None) -> None:
        self.policy = policy
        self.workspace = Workspace(
            policy.root,
            allow_hard_links=policy.allow_hard_links,
            skip_dirs=policy.skip_dirs,
            changes=changes,
        )
        self.index = LexicalIndex(
            self.workspace,
            max_file_bytes=policy.max_file_bytes,
            max_age=policy.index_max_age,
            tool="search_code",
        )
        self.workspace.changes.listen(self.index.changed)

    def tools(self) -> list[Tool]:
        """The toolkit's tools (both read only)."""
        return [
            toolkit_tool(self.grep, name="grep", read_only=True),
            toolkit_tool(self.search_code, name="search_code", read_only=True),
        ]

    def grep(
        self,
        pattern: str,
        path: str = ".",
        glob: str | None = None,
        context: int = 0,
        ignore_case: bool = False,
        ctx: ToolContext | None = None,
    ) -> str:
        """Search the workspace's text files for a regular expression; shows path:line:text.

        Args:
            pattern: A Python regular expression.
            path: The folder (or file) to search, relative to the workspace.
            glob: Only files whose name (or path, if it has a '/') matches this glob.
            context: Lines to show before and after each match (0-10).
            ignore_case: Match letters in either case.
        """
        tool = "grep"
        regex = _compile(pattern, ignore_case, tool)
        if not 0 <= context <= _MAX_CONTEXT:
            raise ToolError(f"context must be 0-{_MAX_CONTEXT}", tool_name=tool)
        accept = glob_matcher(glob, tool=tool) if glob else None
        out: list[str] = []
        matches = files = 0
        for entry in self._files(path, tool):
            if ctx is not None:
                ctx.cancel.raise_if_cancelled("grep")
            if accept is not None and not accept(entry.path):
                continue
            lines = self._text_lines(entry)
            if lines is None:
                continue
            found = [i for i, line in enumerate(lines) if regex.search(line)]
            if not found:
                continue
            files += 1
            room = self.policy.max_matches - matches
            matches += min(len(found), room)
            out.extend(_show(entry.path, lines, found[:room], context))
            if matches >= self.policy.max_matches:
                out.append(f"…[stopped at {matches} matches; narrow the pattern, path or glob]")
                break
        if not matches:
            return f"no match for {pattern!r}"
        return f"{matches} match(es) in {files} file(s)\n" + "\n".join(out)

    def search_code(self, query: str, glob: str | None = None) -> str:
        """Find the files that best match some words, for questions like where X is handled.

        Args:
            query: The words to look for.
            glob: Only files whose name (or path, if it has a '/') matches this glob.
        """
        tool = "search_code"
        if not query.strip():
            raise ToolError("the query is empty", tool_name=tool)
        accept = glob_matcher(glob, tool=tool) if glob else None
        hits = self.index.query(query, limit=self.policy.max_results, accept=accept)
        if not hits:
            return f"no file matches {query!r}"
        cut = self.policy.max_line_chars
        blocks = []
        for hit in hits:
            lines = "".join(f"\n  {number}: {text[:cut]}" for number, text in hit.lines)
            blocks.append(f"{hit.path} (score {hit.score:.2f}){lines}")
        return "\n".join(blocks)

    def _files(self, path: str, tool: str) -> Iterator[FileEntry]:
        real = self.workspace.resolve(path, tool=tool)
        if os.path.isdir(real):
            yield from self.workspace.walk(path, tool=tool)
            return
        wanted = self.workspace.relative(real)
        for entry in self.workspace.walk(self.workspace.relative(os.path.dirname(real)), tool=tool):
            if entry.path == wanted:
                yield entry
                return

    def _text_lines(self, entry: FileEntry) -> list[str] | None:
        limit = self.policy.max_file_bytes
        if entry.info.st_size > limit:
            return None
        try:
            data = entry.read(limit + 1)
        except OSError:
            return None
        if len(data) > limit or b"\0" in data[:_SNIFF_BYTES]:
            return None
        cut = self.policy.max_line_chars
        return [line[:cut] for line in data.decode("utf-8", errors="replace").splitlines()]


def _compile(pattern: str, ignore_case: bool, tool: str) -> re.Pattern[str]:
    if not pattern or len(pattern) > _MAX_PATTERN_CHARS:
        raise ToolError(f"the pattern must be 1-{_MAX_PATTERN_CHARS} characters", tool_name=tool)
    try:
        return re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as err:
        raise ToolError(f"bad regular expression {pattern!r}: {err}", tool_name=tool) from err


def _show(path: str, lines: list[str], found: list[int], context: int) -> list[str]:
    """Matches (``path:n:text``) with context (``path-n-text``), groups split by ``--``."""
    out: list[str] = []
    hits = set(found)
    shown_until = -1
    for index in found:
        start = max(index - context, shown_until + 1)
        if context and out and start > shown_until + 1:
            out.append("--")
        for i in range(start, min(index + context, len(lines) - 1) + 1):
            sep = ":" if i in hits else "-"
            out.append(f"{path}{sep}{i + 1}{sep}{lines[i]}")
        shown_until = max(shown_until, min(index + context, len(lines) - 1))
    return out
