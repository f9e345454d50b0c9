"""The JSON Lines results sink: one result object per line, fsynced as written.

Each result is one ``os.write`` of a whole line followed by ``fsync``. A
process killed in the middle of a write can leave a last line without its
newline; opening the file again cuts that fragment off (with a warning), so
the file stays a valid JSON Lines file and the input is simply run again.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from .._internal import json_input
from ..errors import ParseError, ResultsError
from .result import BatchResult
from .sink import ResultSink, lock_exclusively, results_closed, results_failure

log = logging.getLogger("agent_smith.batch")


class JsonlSink(ResultSink):
    """Appends results to a ``.jsonl`` file (created if missing)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._fd: int | None = None
        created = not path.exists()
        with self._opening():
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
            lock_exclusively(self._fd, path)
            if created:
                _fsync_directory(path)
            self._ok = {r.id: r.ok for r in _read(path, repair=self._fd)}

    def recorded(self) -> dict[str, bool]:
        return dict(self._ok)

    def write(self, result: BatchResult) -> None:
        if self._fd is None:
            raise results_closed(self.path)
        view = memoryview(_line(result).encode("utf-8"))
        try:
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            os.fsync(self._fd)
        except OSError as err:
            raise results_failure("write to", self.path, err) from err
        self._ok[result.id] = result.ok

    def drop_failed(self) -> int:
        if all(self._ok.values()):
            return 0
        kept = [r for r in read_jsonl(self.path) if r.ok]
        # Rewritten beside the original and renamed over it: a crash leaves one or the other.
        temp = self.path.with_name(self.path.name + ".rewrite")
        data = "".join(_line(r) for r in kept)
        try:
            with open(temp, "w", encoding="utf-8") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            new_fd = os.open(temp, os.O_RDWR | os.O_APPEND)
            lock_exclusively(new_fd, temp)
            os.replace(temp, self.path)
            _fsync_directory(self.path)
        except OSError as err:
            raise results_failure("rewrite", self.path, err) from err
        old_fd, self._fd = self._fd, new_fd
        if old_fd is not None:
            os.close(old_fd)
        dropped = sum(not ok for ok in self._ok.values())
        self._ok = {r.id: True for r in kept}
        return dropped

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def read_jsonl(path: Path) -> list[BatchResult]:
    """Every complete result line of ``path``, in order."""
    try:
        return _read(path, repair=None)
    except OSError as err:
        raise results_failure("read", path, err) from err


def _read(path: Path, *, repair: int | None) -> list[BatchResult]:
    """Parse the file; with ``repair`` (its open descriptor) cut off a torn last line."""
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        if repair is not None:
            log.warning(
                "results file %s ends in an incomplete line (an interrupted write); "
                "dropping it, that input runs again",
                path,
            )
            os.ftruncate(repair, end)
            os.fsync(repair)
        data = data[:end]
    results: list[BatchResult] = []
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            results.append(BatchResult.from_dict(json_input.loads(line)))
        except (json.JSONDecodeError, ParseError) as err:
            message = f"{path}:{number}: not a batch result ({err})"
            raise ResultsError(message, path=str(path)) from err
    return results


def _line(result: BatchResult) -> str:
    return json.dumps(result.to_dict(), ensure_ascii=False) + "\n"


def _fsync_directory(path: Path) -> None:
    """Make a created or renamed file's directory entry durable too."""
    try:
        fd = os.open(path.parent, os.O_RDONLY)
    except OSError:  # e.g. no directory descriptors on this platform
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
