"""One SQLite file shared by threads and processes: a connection per thread, typed errors.

SQLite connections must not be shared between threads without care, and a
connection inherited across ``fork()`` must never be used by the child, so
each thread of each process opens its own (``check_same_thread=False`` only so
that :meth:`Database.close` can close them all from the owner's thread). The
connections run in autocommit mode and every operation brackets itself in an
explicit, short transaction:

* writes use ``BEGIN IMMEDIATE``, which takes the write lock up front and
  waits for it under ``busy_timeout``. A deferred transaction that reads
  first and then writes can fail with SQLITE_BUSY at once, whatever the
  timeout, when another writer committed in between (SQLite's documented WAL
  behaviour), so no write here starts deferred;
* reads use a deferred ``BEGIN`` so a multi-statement read sees one snapshot;
  in WAL mode readers never wait for the writer;
* the threads of one process queue for a file's write lock on a lock of
  their own first (:func:`_writer_lock`), so each wakes as soon as the one
  before commits. Left to SQLite, waiting writers poll with sleeps of up to
  100 ms and a busy web worker's turns waited up to a second for a lock held
  a millisecond at a time (scripts/bench_scaleout.py); the busy timeout still
  bounds the whole wait, and other processes still meet at SQLite's lock.

Every ``sqlite3`` exception is translated here, once: a lock held past the
busy timeout is :class:`AgentTimeoutError`; anything else (not a database,
corrupt, unwritable, closed) is :class:`SessionError` naming the file.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import AgentSmithError, AgentTimeoutError, SessionError
from . import lease
from .sql import Sql

_BUSY = ("SQLITE_BUSY", "SQLITE_LOCKED")

_writers: dict[str, threading.Lock] = {}
_writers_guard = threading.Lock()
os.register_at_fork(after_in_child=_writers.clear)  # a lock held at fork() stays held


def _is_busy(err: sqlite3.Error) -> bool:
    """Whether ``err`` says another connection holds the lock."""
    name = getattr(err, "sqlite_errorname", "")
    return name in _BUSY or (not name and "is locked" in str(err))


def _writer_lock(path: str) -> threading.Lock:
    """The lock this process's writers of the file ``path`` queue on."""
    with _writers_guard:
        return _writers.setdefault(os.path.abspath(path), threading.Lock())


class Database:
    """One SQLite file: a connection per thread, short transactions, typed errors."""

    __slots__ = (
        "_closed",
        "_connections",
        "_local",
        "_lock",
        "busy_timeout",
        "path",
        "synchronous",
    )

    def __init__(self, path: str, *, busy_timeout: float, synchronous: str) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        self.synchronous = synchronous
        self._local = threading.local()
        self._lock = threading.Lock()
        # Keyed by process and thread: after a fork() the parent's connections are
        # neither used nor closed by the child (SQLite forbids carrying them over).
        self._connections: dict[tuple[int, threading.Thread], sqlite3.Connection] = {}
        self._closed = False

    @contextmanager
    def read(self, operation: str) -> Iterator[sqlite3.Connection]:
        """A read transaction on this thread's connection: one snapshot of the file."""
        with self._transaction(operation, "BEGIN") as conn:
            yield conn

    @contextmanager
    def write(
        self, operation: str, session_id: str = ""
    ) -> Iterator[tuple[sqlite3.Connection, float]]:
        """A write transaction holding the file's write lock (so no other write of any
        session interleaves), and the time it began; rolled back if the block raises."""
        with self._writer(operation), self._transaction(operation, "BEGIN IMMEDIATE") as conn:
            yield conn, time.time()

    @contextmanager
    def alone(self, operation: str) -> Iterator[sqlite3.Connection]:
        """This thread's connection outside a transaction, holding the file's write lock:
        for a statement that needs the file to itself, such as a journal mode change.
        Run without the lock, two threads of one process switching a new file to WAL
        while a third writes deadlock in SQLite, and one fails at once as busy."""
        with self._writer(operation), self.errors(operation):
            yield self.connection()

    @property
    def name(self) -> str:
        """The database file."""
        return self.path

    def holder_is_dead(self, conn: Sql, holder: str) -> bool:
        """Whether ``holder`` was a process of this host that no longer runs."""
        return lease.holder_is_dead(holder)

    def claim(self, holder: str) -> None:
        """Nothing to do: a holder's process id shows that it runs."""

    def release(self, holder: str) -> None:
        """Nothing to do (see :meth:`claim`)."""

    @contextmanager
    def errors(self, operation: str) -> Iterator[None]:
        """Translate any ``sqlite3`` error raised in the block (see the module doc)."""
        try:
            yield
        except sqlite3.Error as err:
            raise self._translate(err, operation) from err

    def connection(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use (call inside :meth:`errors`)."""
        state = getattr(self._local, "state", None)
        if state is not None and state[0] == os.getpid() and not self._closed:
            conn: sqlite3.Connection = state[1]
            return conn
        return self._open()

    def close_thread(self) -> None:
        """Close the calling thread's connection (a worker thread that is about to end)."""
        state = getattr(self._local, "state", None)
        self._local.state = None
        if state is None or state[0] != os.getpid():
            return
        with self._lock:
            self._connections.pop((state[0], threading.current_thread()), None)
        state[1].close()

    def close(self) -> None:
        """Close every connection this process opened; later use raises SessionError."""
        pid = os.getpid()
        with self._lock:
            self._closed = True
            ours = [key for key in self._connections if key[0] == pid]
            connections = [self._connections.pop(key) for key in ours]
        for conn in connections:
            conn.close()

    @contextmanager
    def _writer(self, operation: str) -> Iterator[None]:
        writer = _writer_lock(self.path)
        if not writer.acquire(timeout=self.busy_timeout):
            raise self._waited_too_long(operation)
        try:
            yield
        finally:
            writer.release()

    @contextmanager
    def _transaction(self, operation: str, begin: str) -> Iterator[sqlite3.Connection]:
        with self.errors(operation):
            conn = self.connection()
            conn.execute(begin)
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _open(self) -> sqlite3.Connection:
        with self._lock:
            if self._closed:
                raise SessionError(f"session store {self.path} is closed", store=self.path)
            pid = os.getpid()
            ended = [k for k in self._connections if k[0] == pid and not k[1].is_alive()]
            for key in ended:
                self._connections.pop(key).close()  # its thread ended without close_thread
            conn = sqlite3.connect(
                self.path,
                timeout=self.busy_timeout,
                isolation_level=None,
                check_same_thread=False,
            )
            try:
                conn.execute(f"PRAGMA synchronous = {self.synchronous}")
            except BaseException:
                conn.close()
                raise
            self._connections[(pid, threading.current_thread())] = conn
            self._local.state = (pid, conn)
            return conn

    def _waited_too_long(self, operation: str) -> AgentTimeoutError:
        return AgentTimeoutError(
            f"session store {self.path}: {operation} waited over {self.busy_timeout} s "
            "for the database lock",
            operation=operation,
            budget=self.busy_timeout,
        )

    def _translate(self, err: sqlite3.Error, operation: str) -> AgentSmithError:
        name = getattr(err, "sqlite_errorname", "")
        text = str(err)
        store = self.path
        if self._closed:
            return SessionError(f"session store {store} is closed", store=store)
        if _is_busy(err):
            return self._waited_too_long(operation)
        if name == "SQLITE_NOTADB" or "not a database" in text:
            return SessionError(f"{store} is not a SQLite database", store=store)
        if name == "SQLITE_CORRUPT" or "malformed" in text:
            return SessionError(
                f"session store {store} is corrupt ({text}); restore it from a backup",
                store=store,
            )
        return SessionError(f"session store {store}: {operation} failed: {text}", store=store)
