"""The turn lease: one turn at a time per session id, across threads and processes.

A lease is a row of the ``leases`` table: the session id, the holder
(``host:pid:starttime:tag``: the host, the process id, that process's start
time, and a random tag unique to the turn) and when it expires. A turn takes
it in a write transaction (``BEGIN IMMEDIATE`` serialises the check and the
take across processes), so of two turns started at once exactly one gets it
and the other fails at once with :class:`AgentBusyError`. While the turn
runs, a :class:`LeaseKeeper` thread renews it every third of its duration;
the turn deletes it when it ends.

A holder that dies (``kill -9``, a crashed worker, a power cut) cannot
release its lease. Each store says how it knows a holder is gone (its
``holder_is_dead``), and the next turn takes a dead holder's lease over at
once. SQLite (:func:`holder_is_dead` here): when the holder ran on this host,
no process has its pid, or the process that has it started at another time
(the pid was reused; start times come from ``/proc/<pid>/stat``, so where
there is no ``/proc`` only the pid is checked). PostgreSQL: the holder's own
connection holds a lock that the server drops when that connection ends
(:mod:`.postgres_database`), on any host. A holder that cannot be checked (a
database on a shared disk, another host's process; a host that lost its
network) keeps its lease until it expires. That duration bounds how long a
dead remote worker keeps a conversation locked; it must be longer than the
worst stall of a live one (a renewal that cannot run), or a live turn loses
its lease. Containers that share a SQLite database must have distinct host
names (they have their own pid spaces).

Every write to a session checks the lease in the same transaction (a fence):
a writer that is not the holder of a live lease is refused, and a holder whose
lease was taken over after a stall finds out at its next write instead of
interleaving late messages with the new turn's.

Expiry uses a wall clock, not ``monotonic()``, which restarts at boot: for
SQLite ``time.time()`` (every process sharing a WAL database runs on one
host, so they share that clock), for PostgreSQL the server's clock (one clock
for every host).
"""

from __future__ import annotations

import itertools
import logging
import os
import secrets
import socket
import threading
from collections.abc import Callable

from ..errors import AgentBusyError, AgentSmithError
from .sql import Sql

log = logging.getLogger(__name__)

_keeper_ids = itertools.count()


def new_holder() -> str:
    """A holder id unique to one turn: ``host:pid:starttime:random``."""
    pid = os.getpid()
    started = (_stat(pid) or ("", ""))[1]
    return f"{socket.gethostname()}:{pid}:{started}:{secrets.token_hex(4)}"


def holder_is_dead(holder: str) -> bool:
    """Whether ``holder`` is a process of this host that no longer runs.

    False when that cannot be known: another host, another format, or a pid
    that still runs with the same start time (or whose start time is unknown).
    """
    parts = holder.rsplit(":", 3)
    if len(parts) != 4 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return False
    pid = int(parts[1])
    if pid == os.getpid():
        return False  # another turn of this very process: alive
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        pass  # it exists, owned by another user
    stat = _stat(pid)
    if stat is None:
        return False
    state, started = stat
    return state == "Z" or (bool(parts[2]) and started != parts[2])  # a zombie, or pid reused


def _stat(pid: int) -> tuple[str, str] | None:
    """Process ``pid``'s state letter and start time (clock ticks since boot), from ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            raw = stat.read()
    except OSError:
        return None
    # Fields 3 and 22; the command name (field 2) is in parentheses and may hold spaces.
    fields = raw[raw.rfind(b")") + 2 :].split()
    return (fields[0].decode(), fields[19].decode()) if len(fields) > 19 else None


#: ``dead(sql, holder)``: whether the store knows ``holder`` no longer runs.
HolderIsDead = Callable[[Sql, str], bool]


def check(
    conn: Sql, session_id: str, holder: str | None, *, now: float, dead: HolderIsDead
) -> None:
    """Raise AgentBusyError unless ``holder`` may write ``session_id`` now.

    With a holder (a turn in progress) the lease must still be its own, live
    or lapsed (nobody took a lapsed lease over, so nothing can interleave);
    without one (a write outside any turn) no live lease may exist: one that
    has not expired and whose holder ``dead`` does not know to be gone.
    """
    row = conn.execute(
        "SELECT holder, expires_at FROM leases WHERE session_id = ?", (session_id,)
    ).fetchone()
    if holder is not None:
        if row is None or row[0] != holder:
            raise AgentBusyError(
                f"session {session_id!r}: this turn lost its lease (it stalled past the "
                "lease duration and another turn took the session over)"
            )
        return
    if row is not None and row[1] > now and not dead(conn, row[0]):
        raise AgentBusyError(
            f"session {session_id!r} is running a turn held by {row[0]} "
            f"(lease expires in {row[1] - now:.1f} s); try again when it ends"
        )


def take(
    conn: Sql,
    session_id: str,
    holder: str,
    *,
    now: float,
    duration: float,
    dead: HolderIsDead,
) -> None:
    """Give ``holder`` the lease on ``session_id``, unless another live lease holds it."""
    check(conn, session_id, None, now=now, dead=dead)
    conn.execute(
        "INSERT INTO leases (session_id, holder, expires_at) VALUES (?, ?, ?)"
        " ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder,"
        " expires_at = excluded.expires_at",
        (session_id, holder, now + duration),
    )


def renew(conn: Sql, session_id: str, holder: str, *, now: float, duration: float) -> bool:
    """Push the lease's expiry out; False if ``holder`` no longer holds it."""
    cursor = conn.execute(
        "UPDATE leases SET expires_at = ? WHERE session_id = ? AND holder = ?",
        (now + duration, session_id, holder),
    )
    return cursor.rowcount == 1


def release(conn: Sql, session_id: str, holder: str) -> None:
    """Drop ``holder``'s lease on ``session_id`` (nothing if it was taken over)."""
    conn.execute("DELETE FROM leases WHERE session_id = ? AND holder = ?", (session_id, holder))


class LeaseKeeper:
    """Calls ``renew`` every ``interval`` seconds on its own thread until :meth:`stop`.

    ``renew`` returns False once the lease is lost, which ends the thread;
    a failed renewal (the database busy, say) is logged and retried at the
    next interval. ``on_exit`` runs on the thread as it ends (it closes the
    thread's database connection).
    """

    __slots__ = ("_on_exit", "_renew", "_stop", "_thread", "interval")

    def __init__(
        self,
        renew: Callable[[], bool],
        *,
        interval: float,
        on_exit: Callable[[], None],
        name: str,
    ) -> None:
        self.interval = interval
        self._renew = renew
        self._on_exit = on_exit
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"agent_smith-lease-{name}-{next(_keeper_ids)}"
        )
        # Joined by stop(); daemon only so that a turn abandoned without closing
        # (a stream never finished) cannot hold the interpreter open at exit.
        self._thread.daemon = True
        self._thread.start()

    def stop(self) -> None:
        """Stop renewing and join the thread."""
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join()

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                try:
                    if not self._renew():
                        log.warning("%s: the lease was lost; stopped renewing", self._thread.name)
                        return
                except AgentSmithError as err:
                    log.warning(
                        "%s: renewing the lease failed (%s); retrying", self._thread.name, err
                    )
        finally:
            self._on_exit()
