"""The stdio transport: a child process speaking newline-delimited JSON-RPC.

Three threads per connection: the caller's (writes, serialised by a lock),
a reader that splits stdout on ``\\n`` and hands each parsed frame to the
JSON-RPC layer, and a drain that copies stderr to the ``agent_smith.mcp``
logger (a chatty server with an undrained stderr pipe blocks on its writes
and never answers). The child runs in its own session so that shutdown's
SIGTERM/SIGKILL reach whatever it spawned too (``npx`` starts ``node``, and a
grandchild holding our pipes open would keep the reader from ever ending).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import threading
from collections import deque
from typing import IO

from .._internal import json_input
from ..errors import TransportError
from ..logs import trace
from .config import ServerConfig
from .transport import CloseHandler, Frame, FrameHandler, Transport, encode_frame, hand_over

log = logging.getLogger(__name__)

#: How long each shutdown step (stdin closed, SIGTERM) waits for the child.
SHUTDOWN_STEP_SECONDS = 2.0
EXIT_GRACE_SECONDS = 1.0  # how long a server that closed stdout gets to exit and flush stderr
STDERR_TAIL_LINES = 5  # the last stderr lines quoted when a server dies


class StdioTransport(Transport):
    """Spawn ``config.command`` and exchange frames over its stdin/stdout."""

    def __init__(self, config: ServerConfig) -> None:
        self.server = config.alias
        self.where = "stdio"
        self._config = config
        self._process: subprocess.Popen[bytes] | None = None
        self._threads: list[threading.Thread] = []
        self._write_lock = threading.Lock()
        self._closing = threading.Event()
        self._stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._stderr_done = threading.Event()
        self._closed_once = threading.Lock()
        self._on_closed: CloseHandler | None = None

    @property
    def pid(self) -> int | None:
        """The child's process id (None before start)."""
        return self._process.pid if self._process is not None else None

    def start(self, on_frame: FrameHandler, on_closed: CloseHandler) -> None:
        env = None
        if self._config.env is not None:
            env = {**os.environ, **self._config.env}
        try:
            self._process = subprocess.Popen(
                list(self._config.command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=self._config.cwd,
                start_new_session=os.name == "posix",
            )
        except (OSError, ValueError) as err:  # ValueError: a NUL byte in argv or env
            raise TransportError(
                f"cannot start MCP server {self.server!r} ({self._config.command[0]}): {err}",
                operation="spawn",
                endpoint_or_server=self.server,
            ) from err
        self._on_closed = on_closed
        log.debug("started MCP server %s (pid %d)", self.server, self._process.pid)
        assert self._process.stdout is not None and self._process.stderr is not None
        stdout, stderr = self._process.stdout, self._process.stderr
        self._threads = [
            threading.Thread(
                target=self._read,
                args=(stdout, on_frame),
                name=f"agent_smith-mcp-reader-{self.server}",
                daemon=True,
            ),
            threading.Thread(
                target=self._drain,
                args=(stderr,),
                name=f"agent_smith-mcp-stderr-{self.server}",
                daemon=True,
            ),
        ]
        for thread in self._threads:
            thread.start()

    def send(self, frame: Frame, *, timeout: float | None = None) -> None:
        """Write one line; ``timeout`` is not needed (the reader thread never blocks a caller)."""
        process = self._process
        if process is None or process.stdin is None:
            raise self._error("send", "transport is not started")
        data = encode_frame(frame, self.server) + b"\n"
        trace(log, f"mcp {self.server} <-", frame)
        with self._write_lock:
            try:
                process.stdin.write(data)
                process.stdin.flush()
            except (OSError, ValueError) as err:  # BrokenPipe, or stdin already closed
                error = self._error("send", f"cannot write to the server: {err}")
                self._ended(error)
                raise error from err

    def close(self) -> None:
        """Close stdin, wait, SIGTERM, wait, SIGKILL; reap the child; join threads."""
        self._closing.set()
        process = self._process
        if process is None:
            return
        if process.stdin is not None:
            # A broken pipe on the final flush means the child is gone already.
            with self._write_lock, contextlib.suppress(OSError):
                process.stdin.close()
        for step in (None, signal.SIGTERM, signal.SIGKILL):
            if step is not None:
                self._signal(process, step)
            try:
                process.wait(timeout=SHUTDOWN_STEP_SECONDS)
                break
            except subprocess.TimeoutExpired:
                continue
        if process.poll() is None:  # SIGKILL cannot be ignored; this is a last resort
            process.wait()
        for thread in self._threads:
            thread.join(SHUTDOWN_STEP_SECONDS)
            if thread.is_alive():
                # Something the child spawned still holds the pipe: end the group.
                self._signal(process, signal.SIGKILL)
                thread.join(SHUTDOWN_STEP_SECONDS)
            if thread.is_alive():
                # A grandchild outside the process group holds the pipe open.
                log.warning("MCP server %s: %s did not stop", self.server, thread.name)
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
        log.debug("MCP server %s exited with %s", self.server, process.returncode)

    # -- threads ------------------------------------------------------------

    def _read(self, stdout: IO[bytes], on_frame: FrameHandler) -> None:
        error: Exception | None = None
        try:
            for line in stdout:
                line = line.strip()
                if not line:
                    continue
                try:
                    frame = json_input.loads(line)
                except ValueError:
                    log.warning(
                        "MCP server %s wrote a non-JSON line to stdout; skipped: %.200r",
                        self.server,
                        line,
                    )
                    continue
                hand_over(on_frame, frame, self.server)
        except (OSError, ValueError) as err:
            error = self._error("read", f"connection lost: reading stdout failed: {err}")
        log.debug("MCP server %s closed its stdout", self.server)
        if error is None and not self._closing.is_set():
            error = self._exit_error()
        self._ended(error)

    def _drain(self, stderr: IO[bytes]) -> None:
        try:
            for raw in stderr:
                line = raw.decode(errors="replace").rstrip()
                log.debug("[%s stderr] %s", self.server, line)
                if line:
                    self._stderr_tail.append(line[:200])
        except (OSError, ValueError):
            pass  # the pipe was closed under us during shutdown
        finally:
            self._stderr_done.set()

    def _exit_error(self) -> TransportError | None:
        """Why stdout ended on its own: the exit status and last stderr lines, if it exited."""
        process = self._process
        if process is None:
            return None
        try:
            status = process.wait(timeout=EXIT_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            return None  # stdout closed but the process lives on: nothing more to say
        self._stderr_done.wait(EXIT_GRACE_SECONDS)
        detail = f"connection lost: the server exited with status {status}"
        if self._stderr_tail:
            detail += "; its last stderr lines: " + " | ".join(self._stderr_tail)
        return self._error("read", detail)

    # -- helpers ------------------------------------------------------------

    def _ended(self, error: Exception | None) -> None:
        """Report the end of the connection once, unless close() ended it."""
        if self._closing.is_set() or not self._closed_once.acquire(blocking=False):
            return
        if self._on_closed is not None:
            self._on_closed(error)

    def _signal(self, process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
        try:
            if os.name == "posix":
                os.killpg(process.pid, sig)
            elif sig == signal.SIGTERM:
                process.terminate()
            else:
                process.kill()
        except (ProcessLookupError, PermissionError):
            pass  # already gone
