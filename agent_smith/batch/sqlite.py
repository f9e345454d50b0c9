"""The SQLite results sink: one row per result in a ``results`` table.

WAL journal with ``synchronous=FULL``: each insert is its own transaction and
is on disk when it returns. The id is the primary key, so the database itself
refuses a second result for one id. Columns are plain values for querying
(``SELECT id, content FROM results WHERE ok = 1``); ``output`` is JSON text.
An input of parts (images, documents, audio) keeps its text in ``input`` and
the parts, in the stored JSON form of a history, in ``input_parts``. The
schema version is kept in a ``meta`` table.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from .._internal import json_input
from ..base.parts import content_from_json, content_text, content_to_json
from ..errors import ParseError, PartError, ResultsError
from ..messages import TokenUsage
from .result import BatchResult, ItemError
from .sink import ResultSink, lock_exclusively, results_closed, results_failure

SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results (
    id TEXT PRIMARY KEY,
    input TEXT NOT NULL,
    ok INTEGER NOT NULL,
    content TEXT,
    output TEXT,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    total_tokens INTEGER NOT NULL,
    error_type TEXT,
    error_message TEXT,
    attempts INTEGER NOT NULL,
    seconds REAL NOT NULL,
    cost REAL,
    input_parts TEXT,
    details TEXT
);
"""
_COLUMNS = (
    "id, input, ok, content, output, prompt_tokens, completion_tokens, total_tokens, "
    "error_type, error_message, attempts, seconds, cost, input_parts, details"
)
_INSERT = f"INSERT INTO results ({_COLUMNS}) VALUES ({', '.join('?' * 15)})"


class SqliteSink(ResultSink):
    """Inserts results into a SQLite database (created if missing)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._lock_fd: int | None = None
        self._db: sqlite3.Connection | None = None
        with self._opening():
            self._db = _connect(path)
            # The advisory lock sits on the database file itself, beside SQLite's own locks.
            self._lock_fd = os.open(path, os.O_RDONLY)
            lock_exclusively(self._lock_fd, path)

    def recorded(self) -> dict[str, bool]:
        rows = self._run("read", "SELECT id, ok FROM results").fetchall()
        return {ident: bool(ok) for ident, ok in rows}

    def write(self, result: BatchResult) -> None:
        self._run("write to", _INSERT, _row(result))

    def drop_failed(self) -> int:
        return self._run("rewrite", "DELETE FROM results WHERE ok = 0").rowcount

    def close(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            db.close()
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            os.close(fd)

    def _run(self, what: str, sql: str, args: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        """One statement in its own transaction, committed (and synced) before returning."""
        db = self._db
        if db is None:
            raise results_closed(self.path)
        try:
            with db:
                return db.execute(sql, args)
        except sqlite3.Error as err:
            raise results_failure(what, self.path, err) from err


def read_sqlite(path: Path) -> list[BatchResult]:
    """Every result in the database at ``path``, in the order they were inserted."""
    db = _connect(path)
    try:
        rows = db.execute(f"SELECT {_COLUMNS} FROM results ORDER BY rowid").fetchall()
    except sqlite3.Error as err:
        raise results_failure("read", path, err) from err
    finally:
        db.close()
    try:
        return [_result(row) for row in rows]
    except (json.JSONDecodeError, ParseError, PartError) as err:
        raise results_failure("read", path, err) from err


def _connect(path: Path) -> sqlite3.Connection:
    try:
        # The driver may be resumed from another thread than the one that opened it.
        db = sqlite3.connect(path, check_same_thread=False)
    except sqlite3.Error as err:
        raise results_failure("open", path, err) from err
    try:
        db.execute("PRAGMA busy_timeout = 5000")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = FULL")
        with db:
            db.executescript(_SCHEMA)
            db.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
                (SCHEMA_VERSION,),
            )
            columns = {row[1] for row in db.execute("PRAGMA table_info(results)")}
            if "cost" not in columns:  # written before results had a cost
                db.execute("ALTER TABLE results ADD COLUMN cost REAL")
            if "input_parts" not in columns:  # written before inputs had parts
                db.execute("ALTER TABLE results ADD COLUMN input_parts TEXT")
            if "details" not in columns:  # written before a task could add details
                db.execute("ALTER TABLE results ADD COLUMN details TEXT")
        (version,) = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if version != SCHEMA_VERSION:
            raise ResultsError(
                f"results file {str(path)!r} has schema version {version}, "
                f"this agent_smith writes {SCHEMA_VERSION}",
                path=str(path),
            )
    except sqlite3.Error as err:
        db.close()
        raise results_failure("use", path, err) from err
    except ResultsError:
        db.close()
        raise
    return db


def _row(result: BatchResult) -> tuple[Any, ...]:
    error = result.error
    parts = None if isinstance(result.input, str) else content_to_json(result.input)
    return (
        result.id,
        content_text(result.input),
        int(result.ok),
        result.content,
        None if result.output is None else json.dumps(result.output, ensure_ascii=False),
        result.usage.prompt,
        result.usage.completion,
        result.usage.total,
        None if error is None else error.type,
        None if error is None else error.message,
        result.attempts,
        result.seconds,
        result.usage.cost,
        None if parts is None else json.dumps(parts),
        None if result.details is None else json.dumps(result.details, ensure_ascii=False),
    )


def _result(row: tuple[Any, ...]) -> BatchResult:
    ident, text, ok, content, output, prompt, completion, total = row[:8]
    error_type, error_message, attempts, seconds, cost, parts, details = row[8:]
    return BatchResult(
        id=ident,
        input=text if parts is None else content_from_json(json_input.loads(parts), "input_parts"),
        content=content,
        output=None if output is None else json_input.loads(output),
        usage=TokenUsage(prompt, completion, total, cost=cost),
        error=None if ok else ItemError(error_type or "", error_message or ""),
        attempts=attempts,
        seconds=seconds,
        details=None if details is None else json_input.loads(details),
    )
