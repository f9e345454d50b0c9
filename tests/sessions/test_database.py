"""SQLite's database layer: a connection per thread, all closed on close() (a store's sessions
share them), lock waits typed."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import pytest

from agent_smith import AgentTimeoutError, SessionStore, UserMessage
from tests.sessions.conftest import WAIT, Store


def _open_fds(path: Path) -> int:
    """How many of this process's file descriptors point at ``path`` (Linux /proc)."""
    fd_dir = Path("/proc/self/fd")
    if not fd_dir.is_dir():
        pytest.skip("needs /proc/self/fd")
    count = 0
    for fd in fd_dir.iterdir():
        try:
            if os.readlink(fd) == str(path):
                count += 1
        except OSError:
            continue
    return count


def test_each_thread_has_its_own_connection_and_close_closes_them_all(
    sqlite_store: Store, db: Path
) -> None:
    session = sqlite_store.open()
    session.append(UserMessage("hi"))
    used = threading.Barrier(5)
    finish = threading.Event()

    def read() -> None:
        session.messages()
        used.wait(WAIT)  # all four connections are open at once
        finish.wait(WAIT)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    used.wait(WAIT)
    assert _open_fds(db) == 5  # the opening thread's and one per reader
    finish.set()
    for thread in threads:
        thread.join(WAIT)
    session.close()
    assert _open_fds(db) == 0


def test_connections_of_ended_threads_do_not_pile_up(sqlite_store: Store, db: Path) -> None:
    session = sqlite_store.open()
    for _ in range(20):  # a web server's short-lived request threads
        thread = threading.Thread(target=session.messages)
        thread.start()
        thread.join(WAIT)
    session.messages()
    assert _open_fds(db) <= 2


def test_sessions_of_one_store_share_its_connections_until_the_store_closes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "sessions.db"
    with SessionStore(path) as store:
        for n in range(20):  # a web app's requests, one session each
            with store.open(f"c{n}") as session:
                session.append(UserMessage("hi"))
        assert _open_fds(path) == 1  # this thread's one connection, kept between sessions
        with store.open("c3") as session:
            assert session.messages() == [UserMessage("hi")]
    assert _open_fds(path) == 0


def test_a_write_lock_held_past_busy_timeout_is_an_agent_timeout_error(
    sqlite_store: Store, db: Path
) -> None:
    session = sqlite_store.open(busy_timeout=0.2)
    session.append(UserMessage("before"))
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another process in the middle of a long write
        with pytest.raises(AgentTimeoutError, match=r"append waited over 0\.2 s") as caught:
            session.append(UserMessage("blocked"))
        assert caught.value.budget == 0.2 and caught.value.operation == "append"
        assert session.messages() == [UserMessage("before")]  # WAL: readers never wait
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    session.append(UserMessage("after"))
    assert session.messages() == [UserMessage("before"), UserMessage("after")]


def test_writers_of_one_process_queue_and_a_forked_child_does_not_inherit_the_queue(
    sqlite_store: Store, db: Path
) -> None:
    from agent_smith.sessions.database import Database, _writer_lock

    database = Database(str(db), busy_timeout=0.2, synchronous="normal")
    session = sqlite_store.open(busy_timeout=0.2)
    session.append(UserMessage("first"))
    writing, done = threading.Event(), threading.Event()

    def hold() -> None:
        with database.write("hold"):
            writing.set()
            done.wait(WAIT)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert writing.wait(WAIT)
        with pytest.raises(AgentTimeoutError, match=r"append waited over 0\.2 s"):
            session.append(UserMessage("blocked"))  # queued behind this process's writer
        child = os.fork()
        if child == 0:  # the writer's thread is not in the child: nothing may hold its lock
            os._exit(0 if _writer_lock(str(db)).acquire(timeout=1) else 1)
        assert os.waitpid(child, 0)[1] == 0
    finally:
        done.set()
        holder.join(WAIT)
        database.close()
    session.append(UserMessage("after"))
    assert session.messages() == [UserMessage("first"), UserMessage("after")]
