"""Group commit: appends queued during a write go together in the next transaction."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from agent_smith.errors import AgentTimeoutError, SessionError
from agent_smith.sessions.event_log import SqliteEventLog
from agent_smith.sessions.group_commit import GroupCommit, Row
from agent_smith.sessions.lease import new_holder


def wait_until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


class HeldWrites:
    """A batch writer whose first write waits until released; records every batch."""

    def __init__(self, fail_after_first: Exception | None = None) -> None:
        self.batches: list[list[Row]] = []
        self.release = threading.Event()
        self.fail = fail_after_first
        self.woken: list[str] = []

    def write(self, rows: Sequence[Row], streams: Sequence[str]) -> set[str]:
        self.batches.append(list(rows))
        if len(self.batches) == 1:
            assert self.release.wait(10)
        elif self.fail is not None:
            raise self.fail
        return {stream for stream in streams if stream != "cancelled"}


def start_appends(
    commit: GroupCommit, streams: list[str]
) -> tuple[list[threading.Thread], dict[str, object]]:
    outcomes: dict[str, object] = {}

    def append(stream: str) -> None:
        try:
            outcomes[stream] = commit.append(stream, [(stream, 1, "x"), (stream, 2, "y")])
        except Exception as err:
            outcomes[stream] = err

    threads = [threading.Thread(target=append, args=(stream,)) for stream in streams]
    for thread in threads:
        thread.start()
    return threads, outcomes


def test_appends_arriving_during_a_write_are_written_together_in_the_next() -> None:
    held = HeldWrites()
    commit = GroupCommit(held.write, held.woken.append)
    first, _ = start_appends(commit, ["first"])
    wait_until(lambda: len(held.batches) == 1)
    later = [f"s{i}" for i in range(8)] + ["cancelled"]
    threads, outcomes = start_appends(commit, later)
    wait_until(lambda: len(commit._queue) == len(later))
    held.release.set()
    for thread in first + threads:
        thread.join()
    assert len(held.batches) == 2
    assert sorted(held.batches[1]) == sorted(
        (s, n, d) for s in later for n, d in [(1, "x"), (2, "y")]
    )
    assert outcomes == {**{s: True for s in later[:-1]}, "cancelled": False}
    assert sorted(held.woken) == sorted(["first", *later])


def test_a_failed_batch_fails_every_appender_of_it_with_its_error_and_the_next_goes_on() -> None:
    error = SessionError("disk full", store="x")
    held = HeldWrites(fail_after_first=error)
    commit = GroupCommit(held.write, held.woken.append)
    first, first_outcome = start_appends(commit, ["first"])
    wait_until(lambda: len(held.batches) == 1)
    later = [f"s{i}" for i in range(6)]
    threads, outcomes = start_appends(commit, later)
    wait_until(lambda: len(commit._queue) == len(later))
    held.release.set()
    for thread in first + threads:
        thread.join()
    assert first_outcome == {"first": True}
    assert outcomes == {stream: error for stream in later}
    assert held.woken == ["first"]  # a failed batch wakes no reader


def test_appends_queued_behind_the_file_lock_share_one_sqlite_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "events.db"
    with SqliteEventLog(path) as log:
        streams = [f"s{i}" for i in range(10)]
        for stream in streams:
            log.open_stream(stream, conversation=stream, writer=new_holder())
        log.cancel("s9")
        batches: list[int] = []
        write = log._write_events

        def counted(rows: Sequence[Row], names: Sequence[str]) -> set[str]:
            batches.append(len(rows))
            return write(rows, names)

        monkeypatch.setattr(log._appends, "_write", counted)
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        threads, outcomes = start_appends(log._appends, streams)
        wait_until(lambda: len(batches) == 1 and len(log._appends._queue) == len(streams) - 1)
        other.execute("COMMIT")
        other.close()
        for thread in threads:
            thread.join()
        assert batches == [2, 2 * (len(streams) - 1)]
        assert outcomes == {stream: stream != "s9" for stream in streams}
        for stream in streams:
            assert log.read(stream, 0).events == ((1, "x"), (2, "y"))


def test_a_lock_held_past_the_busy_timeout_fails_every_appender_with_a_timeout(
    tmp_path: Path,
) -> None:
    path = tmp_path / "events.db"
    with SqliteEventLog(path, busy_timeout=0.5) as log:
        log.open_stream("a", conversation="a", writer=new_holder())
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            threads, outcomes = start_appends(log._appends, ["a", "b", "c"])
            for thread in threads:
                thread.join()
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert all(isinstance(outcome, AgentTimeoutError) for outcome in outcomes.values())
        assert log.append("a", 1, ["x"]) is True
        assert log.read("a", 0).events == ((1, "x"),)
