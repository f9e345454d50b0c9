"""The event log's contract, run against each store: SQLite and PostgreSQL (one suite)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agent_smith.errors import SessionError, StreamLostError
from agent_smith.sessions.event_log import EventLog, SqliteEventLog
from agent_smith.sessions.lease import new_holder
from tests.support.postgres import PostgresServer

LogFactory = Callable[[], EventLog]


@pytest.fixture(params=["sqlite", "postgres"])
def make_log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LogFactory]:
    """A function opening another handle on one store (a second worker, say)."""
    opened: list[EventLog] = []
    if request.param == "sqlite":

        def make() -> EventLog:
            opened.append(SqliteEventLog(tmp_path / "events.db", poll_seconds=0.02))
            return opened[-1]
    else:
        from agent_smith.sessions.postgres_event_log import PostgresEventLog

        url = request.getfixturevalue("postgres_url")

        def make() -> EventLog:
            opened.append(PostgresEventLog(url, pool_size=4))
            return opened[-1]

    yield make
    for log in opened:
        log.close()


@pytest.fixture
def log(make_log: LogFactory, no_thread_leak: None) -> EventLog:
    return make_log()


def test_events_come_back_numbered_after_the_offset_asked_for(log: EventLog) -> None:
    log.open_stream("s1", conversation="alice/c1", writer=new_holder())
    assert log.append("s1", 1, ["a", "b", "c"])
    assert log.append("s1", 4, ["d"])
    assert log.read("s1", 0).events == ((1, "a"), (2, "b"), (3, "c"), (4, "d"))
    assert log.read("s1", 2).events == ((3, "c"), (4, "d"))
    assert log.read("s1", 4).events == ()
    assert not log.read("s1", 4).closed


def test_an_event_written_twice_is_stored_once_with_its_first_text(log: EventLog) -> None:
    log.open_stream("s1", conversation="alice/c1", writer=new_holder())
    log.append("s1", 1, ["a", "b"])
    log.append("s1", 2, ["B again", "c"])  # a replayed turn rewrites event 2
    assert log.read("s1", 0).events == ((1, "a"), (2, "b"), (3, "c"))


def test_a_closed_stream_says_so_once_every_event_is_read(log: EventLog) -> None:
    log.open_stream("s1", conversation="alice/c1", writer=new_holder())
    log.append("s1", 1, [str(i) for i in range(600)])
    log.close_stream("s1")
    first = log.read("s1", 0)
    assert len(first.events) == 500 and not first.closed
    rest = log.read("s1", 500)
    assert len(rest.events) == 100 and rest.closed
    assert [seq for seq, _ in log.follow("s1", 0)] == list(range(1, 601))


def test_streams_are_kept_apart_and_the_latest_of_a_conversation_is_found(log: EventLog) -> None:
    writer = new_holder()
    log.open_stream("s1", conversation="alice/c1", writer=writer)
    log.open_stream("s2", conversation="alice/c1", writer=writer)
    log.open_stream("s3", conversation="bob/c1", writer=writer)
    log.append("s1", 1, ["one"])
    log.append("s3", 1, ["bob's"])
    assert log.read("s2", 0).events == ()
    latest = log.latest("alice/c1")
    assert latest is not None and latest.stream == "s2"
    info = log.info("s3")
    assert info is not None and (info.conversation, info.writer) == ("bob/c1", writer)
    assert log.info("forged") is None and log.latest("carol/c1") is None


def test_reopening_a_stream_hands_it_to_a_new_writer_and_keeps_its_events(log: EventLog) -> None:
    log.open_stream("s1", conversation="alice/c1", writer="host:1:1:first")
    log.append("s1", 1, ["a"])
    log.open_stream("s1", conversation="alice/c1", writer="host:2:2:second")
    info = log.info("s1")
    assert info is not None and info.writer == "host:2:2:second"
    assert log.read("s1", 0).events == ((1, "a"),)


def test_a_cancelled_stream_tells_its_writer_to_stop(log: EventLog) -> None:
    log.open_stream("s1", conversation="alice/c1", writer=new_holder())
    assert log.append("s1", 1, ["a"])
    log.cancel("s1")
    assert not log.append("s1", 2, ["b"])
    info = log.info("s1")
    assert info is not None and info.cancelled


def test_a_reader_in_another_handle_follows_a_live_writer_to_the_end(
    make_log: LogFactory, no_thread_leak: None
) -> None:
    writer, reader = make_log(), make_log()
    writer.open_stream("s1", conversation="alice/c1", writer=new_holder())
    writer.append("s1", 1, ["a"])
    got: list[tuple[int, str]] = []
    first = threading.Event()

    def read() -> None:
        for event in reader.follow("s1", 0):
            got.append(event)
            first.set()

    thread = threading.Thread(target=read, name="agent_smith-test-reader")
    thread.start()
    assert first.wait(10)
    for seq in range(2, 21):
        writer.append("s1", seq, [f"e{seq}"])
    writer.close_stream("s1")
    thread.join(10)
    assert not thread.is_alive()
    assert got == [(seq, "a" if seq == 1 else f"e{seq}") for seq in range(1, 21)]
    assert reader.waiting_streams() == 0


def test_a_reader_is_told_when_the_writer_process_died_before_the_end(log: EventLog) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead = f"{os.uname().nodename}:{done.stdout.strip()}::gone"
    log.writer_check_seconds = 0.0
    log.open_stream("s1", conversation="alice/c1", writer=dead)
    log.append("s1", 1, ["a"])
    got = []
    with pytest.raises(StreamLostError, match="stopped before the end"):
        for event in log.follow("s1", 0):
            got.append(event)
    assert got == [(1, "a")]


def test_prune_drops_closed_streams_older_than_asked_and_keeps_open_ones(log: EventLog) -> None:
    writer = new_holder()
    log.open_stream("old", conversation="alice/c1", writer=writer)
    log.append("old", 1, ["a"])
    log.close_stream("old")
    log.open_stream("open", conversation="alice/c1", writer=writer)
    log.append("open", 1, ["b"])
    assert log.prune(3600) == 0
    assert log.prune(-1) == 1
    assert log.info("old") is None and log.read("old", 0).events == ()
    assert log.read("open", 0).events == ((1, "b"),)


def test_a_reader_and_a_writer_outlast_postgresql_restarting_between_two_events(
    postgres_url: str, postgres_server: PostgresServer, no_thread_leak: None
) -> None:
    from agent_smith.sessions.postgres_event_log import PostgresEventLog

    with (
        PostgresEventLog(postgres_url, pool_size=2) as writer,
        PostgresEventLog(postgres_url, pool_size=2) as reader,
    ):
        writer.open_stream("s1", conversation="alice/c1", writer=new_holder())
        writer.append("s1", 1, ["before"])
        followed = reader.follow("s1")
        assert next(followed) == (1, "before")
        postgres_server.restart()  # every pooled connection is now broken
        assert writer.outlast("append", lambda: writer.append("s1", 2, ["after"]))
        writer.outlast("close", lambda: writer.close_stream("s1"))
        assert list(followed) == [(2, "after")]


def test_outlast_tries_a_failing_store_again_then_gives_up_with_its_error(
    tmp_path: Path,
) -> None:
    calls: list[int] = []

    def failing() -> None:
        calls.append(1)
        raise SessionError("the server is restarting", store="test")

    with SqliteEventLog(tmp_path / "events.db", retry_seconds=0.3) as log:
        with pytest.raises(SessionError, match="restarting"):
            log.outlast("append", failing)
        assert len(calls) > 1
    calls.clear()
    with pytest.raises(SessionError):  # a closed log is not tried again
        log.outlast("append", failing)
    assert len(calls) == 1


def test_many_threads_appending_to_many_streams_keep_every_stream_whole_and_in_order(
    log: EventLog,
) -> None:
    streams = [f"s{i}" for i in range(24)]
    for stream in streams:
        log.open_stream(stream, conversation=f"c-{stream}", writer=new_holder())
    log.cancel("s3")
    going: dict[str, list[bool]] = {stream: [] for stream in streams}

    def write(stream: str) -> None:
        for seq in range(1, 41, 2):  # two events an append: 1-2, 3-4, ...
            going[stream].append(
                log.append(stream, seq, [f"{stream}.{seq}", f"{stream}.{seq + 1}"])
            )

    threads = [threading.Thread(target=write, args=(stream,)) for stream in streams]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for stream in streams:
        events = log.read(stream, 0).events
        assert events == tuple((seq, f"{stream}.{seq}") for seq in range(1, 41))
        assert going[stream] == [stream != "s3"] * 20
