"""A dependency-free lexical index (BM25) over a workspace's text files.

For "where is X handled" questions, where the model knows words but not the
exact text: the query's words are scored against every file with Okapi BM25
(``k1 = 1.2``, ``b = 0.75``). Words are split the way code is written
(``retryPolicy`` and ``retry_policy`` both give ``retry`` and ``policy``,
besides the whole word); a file's path counts as words too, twice.

The index lives in memory and is refreshed before a query by the files'
modification times and sizes: only new or changed files are read again, and
deleted ones drop out. Checking costs a walk over the tree's metadata (a
stat per file), so a query skips it when the last check is younger than
``max_age`` seconds (the search toolkit's default: 1 s) — unless
:meth:`LexicalIndex.changed` said the tree changed since (the agent's own
writes, :class:`~agent_smith.toolkits.workspace.WorkspaceChanges`). Building it reads
every text file once (binary files, files over the size cap and links are
skipped); figures in docs/benchmarks.md.
Thread-safe: one lock around refresh and query.
"""

from __future__ import annotations

import functools
import heapq
import math
import os
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..errors import ToolError
from .workspace import FileEntry, Workspace

_WORD = re.compile(r"[A-Za-z0-9_]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_K1 = 1.2
_B = 0.75
_PATH_WEIGHT = 2
_MAX_WORD = 64
_SNIFF_BYTES = 8192
_UNREAD = (-1, -1)  # the stamp of a file to read again whatever its own stamp
# Words that say nothing about where code lives ("where is X handled").
_STOP = frozenset(
    """a an and are as at be by do does for from how i in is it of on or the this to what
    when where which who why with""".split()  # noqa: SIM905 (a word list reads better)
)


def words(text: str) -> list[str]:
    """The index words of ``text``: lower-cased words and their code-style parts."""
    return [part for word in _WORD.findall(text) for part in _parts(word)]


@functools.lru_cache(maxsize=65536)
def _parts(word: str) -> tuple[str, ...]:
    """``word`` lower-cased, then its parts if it has several (code reuses names: cached)."""
    if len(word) > _MAX_WORD:
        return ()
    parts = [p.lower() for chunk in word.split("_") for p in _CAMEL.findall(chunk)]
    return (word.lower(), *parts) if len(parts) > 1 else (word.lower(),)


@dataclass(frozen=True)
class Hit:
    """One file that matches a query: its path, BM25 score and best lines."""

    path: str
    score: float
    lines: tuple[tuple[int, str], ...]


@dataclass
class _Doc:
    stamp: tuple[int, int]
    length: int
    terms: Counter[str]


class LexicalIndex:
    """BM25 over the text files below ``workspace``'s root; see the module doc.

    ``max_file_bytes``: larger files are not indexed. ``max_age``: a query
    checks the tree only if the last check is older than this many seconds
    (0: every query). ``tool`` names the tool in errors.
    """

    def __init__(
        self,
        workspace: Workspace,
        *,
        max_file_bytes: int,
        max_age: float = 0.0,
        tool: str = "search",
    ) -> None:
        self._workspace = workspace
        self._max_file_bytes = max_file_bytes
        self._max_age = max_age
        self._checked_at: float | None = None
        self._norms: dict[str, float] | None = None  # per file, rebuilt after a change
        self._tool = tool
        self._lock = threading.Lock()
        self._docs: dict[str, _Doc] = {}
        self._postings: dict[str, dict[str, int]] = {}
        self._total_length = 0
        self._skipped: dict[str, tuple[int, int]] = {}  # binary or too large, by stamp

    def __len__(self) -> int:
        return len(self._docs)

    def refresh(self) -> int:
        """Bring the index up to date with the tree; how many files were (re)read or dropped.

        A file that is not indexed (binary, too large) is remembered by its
        stamp too, so it is not read again until it changes.
        """
        with self._lock:
            return self._refresh()

    def changed(self, real: str | None) -> None:
        """The file ``real`` (canonical) changed, or anything (None): check before the next query.

        A named file is read again even if its modification time and size
        look the same (a write within the clock's resolution).
        """
        with self._lock:
            self._checked_at = None
            if real is None or not self._workspace.contains(real):
                return
            path = self._workspace.relative(real)
            self._skipped.pop(path, None)
            doc = self._docs.get(path)
            if doc is not None:
                doc.stamp = _UNREAD

    def query(
        self,
        text: str,
        *,
        limit: int = 10,
        accept: Callable[[str], bool] | None = None,
        snippets: int = 3,
    ) -> list[Hit]:
        """The ``limit`` best files for ``text`` (best first), refreshed first.

        ``accept`` filters paths; each hit carries up to ``snippets`` of its
        lines that hold the most query words.
        """
        terms = [t for t in dict.fromkeys(words(text)) if t not in _STOP]
        with self._lock:
            now = time.monotonic()
            if self._checked_at is None or now - self._checked_at >= self._max_age:
                self._refresh()
                self._checked_at = now
            scores = self._score(terms)
        if accept is not None:
            scores = {path: s for path, s in scores.items() if accept(path)}
        best = heapq.nlargest(limit, scores.items(), key=lambda item: (item[1], item[0]))
        return [Hit(path, score, self._lines(path, terms, snippets)) for path, score in best]

    def _score(self, terms: Iterable[str]) -> dict[str, float]:
        count = len(self._docs)
        if not count:
            return {}
        norms = self._norms
        if norms is None:
            average = self._total_length / count or 1.0
            norms = {p: _K1 * (1.0 - _B + _B * d.length / average) for p, d in self._docs.items()}
            self._norms = norms
        scores: dict[str, float] = {}
        get = scores.get
        for term in terms:
            postings = self._postings.get(term)
            if not postings:
                continue
            df = len(postings)
            weight = math.log(1.0 + (count - df + 0.5) / (df + 0.5)) * (_K1 + 1.0)
            for path, tf in postings.items():
                scores[path] = get(path, 0.0) + weight * tf / (tf + norms[path])
        return scores

    def _refresh(self) -> int:
        seen: set[str] = set()
        changed = 0
        for entry in self._workspace.walk(".", tool=self._tool):
            seen.add(entry.path)
            stamp = (entry.info.st_mtime_ns, entry.info.st_size)
            doc = self._docs.get(entry.path)
            if (doc is not None and doc.stamp == stamp) or self._skipped.get(entry.path) == stamp:
                continue
            self._drop(entry.path)
            terms = self._read_terms(entry)
            if terms is None:
                self._skipped[entry.path] = stamp
            else:
                self._add(entry.path, _Doc(stamp, sum(terms.values()), terms))
            changed += 1
        for path in [p for p in (*self._docs, *self._skipped) if p not in seen]:
            self._drop(path)
            changed += 1
        if changed:
            self._norms = None
        return changed

    def _read_terms(self, entry: FileEntry) -> Counter[str] | None:
        if entry.info.st_size > self._max_file_bytes:
            return None
        try:
            data = entry.read(self._max_file_bytes + 1)
        except OSError:
            return None
        if len(data) > self._max_file_bytes or b"\0" in data[:_SNIFF_BYTES]:
            return None
        terms = Counter(words(data.decode("utf-8", errors="replace")))
        for word in words(entry.path):
            terms[word] += _PATH_WEIGHT
        return terms

    def _add(self, path: str, doc: _Doc) -> None:
        self._docs[path] = doc
        self._total_length += doc.length
        for term, tf in doc.terms.items():
            self._postings.setdefault(term, {})[path] = tf

    def _drop(self, path: str) -> None:
        self._skipped.pop(path, None)
        doc = self._docs.pop(path, None)
        if doc is None:
            return
        self._total_length -= doc.length
        for term in doc.terms:
            postings = self._postings[term]
            del postings[path]
            if not postings:
                del self._postings[term]

    def _lines(self, path: str, terms: list[str], limit: int) -> tuple[tuple[int, str], ...]:
        wanted = set(terms)
        try:
            fd, _info = self._workspace.open_read(path, tool=self._tool)
        except ToolError:  # gone or swapped since it was indexed: a hit without lines
            return ()
        with os.fdopen(fd, "rb") as handle:
            text = handle.read(self._max_file_bytes).decode("utf-8", errors="replace")
        ranked = []
        for number, line in enumerate(text.splitlines(), 1):
            lower = line.lower()
            if not any(term in lower for term in wanted):
                continue  # no query word in it: skip splitting it into words
            found = len(wanted.intersection(words(line)))
            if found:
                ranked.append((found, -number, line.strip()))
        best = heapq.nlargest(limit, ranked)
        return tuple(sorted((-neg, line) for _found, neg, line in best))
