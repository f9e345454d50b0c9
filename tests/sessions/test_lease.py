"""The turn lease: one turn per session id at a time, renewed while it runs, taken over."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_smith import AgentBusyError, SessionError, UserMessage
from agent_smith.sessions.lease import LeaseKeeper, new_holder
from tests.sessions.conftest import WAIT, OpenSession, Store, lapse_lease, lease_row, on_threads


def test_a_second_turn_on_the_same_id_fails_at_once(open_session: OpenSession) -> None:
    first, second = open_session(), open_session()
    first.begin_turn()
    started = time.monotonic()
    with pytest.raises(AgentBusyError, match=r"session 's' is running a turn held by .*:\d+:"):
        second.begin_turn()
    assert time.monotonic() - started < 1.0  # fails fast, never waits for the turn
    first.end_turn()
    second.begin_turn()  # free again
    second.end_turn()


def test_one_object_runs_one_turn_at_a_time(open_session: OpenSession) -> None:
    session = open_session()
    session.begin_turn()
    with pytest.raises(AgentBusyError, match="already running a turn through this"):
        session.begin_turn()
    session.end_turn()
    session.end_turn()  # nothing held: does nothing


def test_turns_on_different_ids_run_at_once(open_session: OpenSession) -> None:
    a, b = open_session("a"), open_session("b")
    a.begin_turn()
    b.begin_turn()
    a.end_turn()
    b.end_turn()


def test_of_many_threads_starting_a_turn_at_once_exactly_one_wins(
    open_session: OpenSession,
) -> None:
    sessions = [open_session() for _ in range(8)]
    start = threading.Barrier(8)
    won: list[int] = []
    busy: list[int] = []

    def race(i: int) -> None:
        start.wait(WAIT)
        try:
            sessions[i].begin_turn()
            won.append(i)
        except AgentBusyError:
            busy.append(i)

    on_threads(8, race)
    assert len(won) == 1 and len(busy) == 7
    sessions[won[0]].end_turn()


def test_while_a_turn_runs_nobody_else_may_write(open_session: OpenSession) -> None:
    turn, other = open_session(), open_session()
    turn.begin_turn()
    turn.append(UserMessage("in the turn"))
    for write in (
        lambda: other.append(UserMessage("sneaked in")),
        lambda: other.replace([]),
        other.clear,
        lambda: other.save_paused_turn("{}"),
        lambda: other.delete("s"),
    ):
        with pytest.raises(AgentBusyError, match="is running a turn"):
            write()
    turn.end_turn()
    assert other.messages() == [UserMessage("in the turn")]
    other.append(UserMessage("after the turn"))


def test_the_lease_is_renewed_while_the_turn_runs(open_session: OpenSession, store: Store) -> None:
    session = open_session(lease_seconds=0.3)
    session.begin_turn()
    lease = lease_row(store)
    assert lease is not None
    holder, first_expiry = lease
    renewed = threading.Event()
    deadline = time.monotonic() + WAIT
    while not renewed.is_set() and time.monotonic() < deadline:
        current = lease_row(store)
        if current is not None and current[1] > first_expiry:
            renewed.set()
        else:
            renewed.wait(0.02)  # the keeper renews every 0.1 s
    assert renewed.is_set()
    assert (lease_row(store) or ("", 0))[0] == holder
    with pytest.raises(AgentBusyError):
        open_session().begin_turn()
    session.end_turn()
    assert lease_row(store) is None


def test_an_expired_lease_is_taken_over(open_session: OpenSession, store: Store) -> None:
    dead, successor = open_session(), open_session()
    dead.begin_turn()
    dead.append(UserMessage("the dead turn's question"))
    lapse_lease(store)  # its worker stopped renewing (killed: see the integration tests)
    successor.begin_turn()
    successor.append(UserMessage("the next turn"))
    successor.end_turn()
    assert successor.messages() == [
        UserMessage("the dead turn's question"),
        UserMessage("the next turn"),
    ]
    dead.end_turn()  # releasing a lease someone else holds leaves theirs alone


def test_a_holder_whose_lease_was_taken_over_cannot_write(
    open_session: OpenSession, store: Store
) -> None:
    stalled, successor = open_session(), open_session()
    stalled.begin_turn()
    lapse_lease(store)
    successor.begin_turn()
    with pytest.raises(AgentBusyError, match="this turn lost its lease"):
        stalled.append(UserMessage("too late"))
    successor.append(UserMessage("mine"))
    stalled.end_turn()
    assert lease_row(store) is not None  # the successor's lease survives the late release
    successor.end_turn()
    assert successor.messages() == [UserMessage("mine")]


def test_a_lapsed_lease_nobody_took_still_lets_its_holder_write(
    open_session: OpenSession, store: Store
) -> None:
    session = open_session()
    session.begin_turn()
    lapse_lease(store)
    session.append(UserMessage("nothing interleaved"))
    session.end_turn()
    assert session.messages() == [UserMessage("nothing interleaved")]


def test_close_releases_a_held_lease(open_session: OpenSession, store: Store) -> None:
    session = open_session()
    session.begin_turn()
    session.close()
    assert lease_row(store) is None
    open_session().begin_turn()


def test_the_keeper_renews_every_interval_until_stopped() -> None:
    calls = threading.Semaphore(0)
    exited = threading.Event()

    def renew() -> bool:
        calls.release()
        return True

    keeper = LeaseKeeper(renew, interval=0.01, on_exit=exited.set, name="test")
    for _ in range(3):
        assert calls.acquire(timeout=WAIT)
    keeper.stop()
    assert exited.is_set()


def test_the_keeper_stops_when_the_lease_is_lost_and_retries_failures(
    caplog: pytest.LogCaptureFixture,
) -> None:
    answers: list[bool | Exception] = [SessionError("disk full", store="x"), True, False]
    exited = threading.Event()

    def renew() -> bool:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    keeper = LeaseKeeper(renew, interval=0.01, on_exit=exited.set, name="test")
    assert exited.wait(WAIT)
    keeper.stop()
    assert answers == []
    assert "renewing the lease failed (disk full); retrying" in caplog.text
    assert "the lease was lost" in caplog.text


# -- SQLite: holders that died on this host ---------------------------------------


def start_time(pid: int) -> str:
    raw = Path(f"/proc/{pid}/stat").read_bytes()
    return raw[raw.rfind(b")") + 2 :].split()[19].decode()


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """A live process of this host that holds no lease of ours."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    yield proc
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(WAIT)


def test_holder_ids_name_host_pid_start_time_and_turn() -> None:
    host, pid, started, tag = new_holder().rsplit(":", 3)
    assert (host, int(pid)) == (socket.gethostname(), os.getpid())
    if Path("/proc/self/stat").exists():
        assert started == start_time(int(pid))
    assert len(tag) == 8 and new_holder() != new_holder()


def test_a_lease_whose_holder_process_is_gone_is_taken_over_at_once(sqlite_store: Store) -> None:
    sqlite_store.open().append(UserMessage("before"))
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True
    )
    pid = int(gone.stdout)
    sqlite_store.hold(f"{socket.gethostname()}:{pid}:1:dead0001")
    successor = sqlite_store.open()
    successor.begin_turn()  # not after an hour: the holder's pid is gone
    successor.append(UserMessage("after"))
    successor.end_turn()
    assert [m.content for m in successor.messages()] == ["before", "after"]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="start times come from /proc")
def test_a_pid_now_used_by_a_newer_process_is_a_dead_holder(
    sqlite_store: Store, sleeper: subprocess.Popen[bytes]
) -> None:
    host = socket.gethostname()
    sqlite_store.hold(f"{host}:{sleeper.pid}:{start_time(sleeper.pid)}:live0001")
    with pytest.raises(AgentBusyError, match="live0001"):
        sqlite_store.open().begin_turn()  # the holder runs: it keeps its lease
    sqlite_store.hold(f"{host}:{sleeper.pid}:{int(start_time(sleeper.pid)) - 1}:dead0002")
    successor = sqlite_store.open()
    successor.begin_turn()  # same pid, another start time: the holder died
    successor.end_turn()


def test_a_lease_held_on_another_host_waits_for_its_expiry(sqlite_store: Store) -> None:
    sqlite_store.hold("another-host.example:1:1:far00001")
    with pytest.raises(AgentBusyError, match=r"another-host\.example"):
        sqlite_store.open().begin_turn()
    lapse_lease(sqlite_store)
    successor = sqlite_store.open()
    successor.begin_turn()
    successor.end_turn()


def test_a_lease_of_an_older_holder_format_waits_for_its_expiry(sqlite_store: Store) -> None:
    sqlite_store.hold(f"{socket.gethostname()}:999999999:abcd1234")  # no start time
    with pytest.raises(AgentBusyError):
        sqlite_store.open().begin_turn()
