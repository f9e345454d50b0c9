"""Run a command in its own process group, bounded in time and output, and leave nothing behind.

The command starts a new session (``start_new_session=True``), so it and
every process it forks share one process group that no other process of
ours is in; stdin is ``/dev/null`` (nothing waits for a keyboard); stdout
and stderr share one pipe read on the calling thread. Output beyond the cap
is dropped from the middle: the head and the tail are kept, as a failing
build prints its error last.

The run ends when the pipe closes and the command exits, or at the timeout,
or when the caller's cancellation token fires (a self-pipe wakes the
``select``, no polling). On timeout or cancellation the group gets SIGTERM,
then, once the command and every holder of the pipe are gone or the grace
period ran out, SIGKILL: a grandchild that ignores SIGTERM dies too. When
the command ends by itself, what it left running in the group (background
jobs) is killed. The command's own process is always reaped. Only a
process that leaves the group on purpose (``setsid``) escapes this; a
container or cgroup is the tool for that.
"""

from __future__ import annotations

import contextlib
import os
import select
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..base.cancellation import CancellationToken

_CHUNK = 65536
_Selector = getattr(selectors, "PollSelector", selectors.SelectSelector)


@dataclass(frozen=True)
class Completed:
    """How a run ended: exit code (None if it was stopped), output, and why it stopped."""

    exit_code: int | None
    output: str
    output_bytes: int
    timed_out: bool = False
    cancelled: bool = False


class _CappedOutput:
    """The first and last ``limit / 2`` bytes of a stream, and its total size."""

    def __init__(self, limit: int) -> None:
        self._half = max(limit // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self._half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self._half:
                del self.tail[: len(self.tail) - self._half]

    def text(self) -> str:
        head = self.head.decode("utf-8", errors="replace")
        dropped = self.total - len(self.head) - len(self.tail)
        if dropped <= 0:
            return head + self.tail.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        return f"{head}\n…[{dropped} bytes of output left out]…\n{tail}"


def run_in_group(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    timeout: float,
    max_output_bytes: int,
    kill_grace: float,
    cancel: CancellationToken | None = None,
) -> Completed:
    """Run ``argv`` as described in the module doc; OSError if it cannot start."""
    # The self-pipe a cancellation writes to, to wake the select (-1: no token, no pipe).
    wake_read, wake_write = os.pipe() if cancel is not None else (-1, -1)
    unregister = cancel.on_cancel(lambda: _wake(wake_write)) if cancel is not None else None
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
        assert proc.stdout is not None
        output = _CappedOutput(max_output_bytes)
        deadline = time.monotonic() + timeout
        # poll(2) rather than epoll: cheaper to set up for two descriptors.
        with proc.stdout, _Selector() as selector:
            selector.register(proc.stdout.fileno(), selectors.EVENT_READ)
            if wake_read >= 0:
                selector.register(wake_read, selectors.EVENT_READ)
            try:
                stopped = not _drain(proc, selector, output, deadline, wake_read)
                if not stopped:
                    stopped = not _wait(proc, deadline - time.monotonic())
            except BaseException:  # KeyboardInterrupt, say: leave no process behind
                _signal_group(proc.pid, signal.SIGKILL)
                proc.wait()
                raise
            if stopped:
                _stop_group(proc, selector, output, kill_grace, wake_read)
            else:
                _kill_leftovers(proc.pid)
        was_cancelled = cancel is not None and cancel.cancelled and stopped
        return Completed(
            None if stopped else proc.returncode,
            output.text(),
            output.total,
            timed_out=stopped and not was_cancelled,
            cancelled=was_cancelled,
        )
    finally:
        if unregister is not None:
            unregister()
        if wake_read >= 0:
            os.close(wake_read)
            os.close(wake_write)


def _drain(
    proc: subprocess.Popen[bytes],
    selector: selectors.BaseSelector,
    output: _CappedOutput,
    deadline: float | None,
    wake: int,
) -> bool:
    """Read the pipe to its end; False if the deadline passed or the wake pipe fired first."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    while True:
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            return False
        for key, _events in selector.select(remaining):
            if key.fd == wake:
                return False
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                return True
            output.add(chunk)


def _wait(proc: subprocess.Popen[bytes], remaining: float) -> bool:
    """Reap ``proc`` if it exits within ``remaining`` seconds; False if it did not."""
    if proc.poll() is not None:
        return True
    try:
        # A pidfd turns readable when the process exits: no sleep-and-poll
        # loop as in Popen.wait(timeout), which costs milliseconds per call.
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        try:
            proc.wait(max(remaining, 0.0))
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        ready, _, _ = select.select([pidfd], [], [], max(remaining, 0.0))
    finally:
        os.close(pidfd)
    if not ready:
        return False
    proc.wait()
    return True


def _stop_group(
    proc: subprocess.Popen[bytes],
    selector: selectors.BaseSelector,
    output: _CappedOutput,
    grace: float,
    wake: int,
) -> None:
    """SIGTERM the group; SIGKILL it once the command and the pipe are done, or at ``grace``."""
    _signal_group(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    if wake >= 0:
        selector.unregister(wake)  # a cancellation must not cut the grace short
    if _drain(proc, selector, output, deadline, wake):
        _wait(proc, deadline - time.monotonic())
    # The command is not reaped yet (or was just now), so its pid, the group's
    # id, is not reused before this signal lands.
    _signal_group(proc.pid, signal.SIGKILL)
    proc.wait()


def _kill_leftovers(pgid: int) -> None:
    """SIGKILL what the finished command left running in its group (nothing, usually)."""
    # The group id cannot be reused while the group has members, so this
    # reaches only processes the command started.
    _signal_group(pgid, signal.SIGKILL)


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _wake(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.write(fd, b"x")
