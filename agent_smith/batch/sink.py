"""Results sinks: where a batch records each result durably, and what resume reads.

A sink is opened on a path: ``.sqlite``, ``.sqlite3`` and ``.db`` are SQLite
databases (:class:`~agent_smith.batch.sqlite.SqliteSink`), anything else a
JSON Lines file (:class:`~agent_smith.batch.jsonl.JsonlSink`). Opening reads
the results already recorded there, so a rerun skips their ids; ``write``
returns only once the result is on disk (fsync, or a SQLite commit with
``synchronous=FULL``), so a crash loses at most the results still in flight,
never one already reported. A sink holds an exclusive lock on its file while
open: two batches writing one file would record ids twice.
"""

from __future__ import annotations

import contextlib
import logging
import os
from abc import abstractmethod
from collections.abc import Iterator
from pathlib import Path

from .._internal.closing import Closeable
from ..errors import ResultsError
from .result import BatchResult

log = logging.getLogger("agent_smith.batch")

SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")


class ResultSink(Closeable):
    """A results file: the results already in it, and a durable ``write``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @abstractmethod
    def recorded(self) -> dict[str, bool]:
        """Ids of the results in the file, each mapped to whether it succeeded."""

    @abstractmethod
    def write(self, result: BatchResult) -> None:
        """Append ``result``; when this returns it survives a crash."""

    @abstractmethod
    def drop_failed(self) -> int:
        """Remove the failed results (to run those inputs again); return how many."""

    @contextlib.contextmanager
    def _opening(self) -> Iterator[None]:
        """Around opening: a failure closes what was opened; an OSError is a ResultsError."""
        try:
            yield
        except OSError as err:
            self.close()
            raise results_failure("open", self.path, err) from err
        except BaseException:
            self.close()
            raise


def open_sink(path: str | os.PathLike[str]) -> ResultSink:
    """Open (or create) the results file at ``path``; ResultsError if it cannot be used."""
    target = Path(path)
    if target.suffix.lower() in SQLITE_SUFFIXES:
        from .sqlite import SqliteSink

        return SqliteSink(target)
    from .jsonl import JsonlSink

    return JsonlSink(target)


def read_results(path: str | os.PathLike[str]) -> list[BatchResult]:
    """The results recorded at ``path``, in the order they were written."""
    target = Path(path)
    if not target.exists():
        raise ResultsError(f"no results file at {os.fspath(path)!r}", path=os.fspath(path))
    if target.suffix.lower() in SQLITE_SUFFIXES:
        from .sqlite import read_sqlite

        return read_sqlite(target)
    from .jsonl import read_jsonl

    return read_jsonl(target)


def results_failure(what: str, path: Path, err: Exception) -> ResultsError:
    """The error for a results file that could not be opened, read or written."""
    return ResultsError(f"cannot {what} results file {str(path)!r}: {err}", path=str(path))


def results_closed(path: Path) -> ResultsError:
    """The error for a results file used after its sink was closed."""
    return ResultsError(f"results file {str(path)!r} is closed", path=str(path))


def lock_exclusively(fd: int, path: Path) -> None:
    """Take an advisory lock on an open file so a second batch on it fails at once."""
    try:
        import fcntl
    except ImportError:  # not on POSIX: no lock, as documented
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        name = os.fspath(path)
        raise ResultsError(f"results file {name!r} is in use by another batch", path=name) from err
