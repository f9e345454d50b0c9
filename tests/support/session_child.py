"""Session work in a child process, and the parent's handle on it.

Run as ``python -m tests.support.session_child MODE ...``:

* ``append STORE SESSION_ID TAG COUNT`` — after a ``go`` line on stdin (so
  several children start together), append COUNT user messages
  ``TAG-0`` ... to the session, print ``DONE``.
* ``turn URL STORE SESSION_ID LEASE_SECONDS QUESTION`` — one agent turn on the
  session against the LLM at URL, with a tool ``lookup`` that prints
  ``TOOL_STARTED`` and returns only after a ``go`` line on stdin. Prints
  ``DONE <final answer>``, or ``BUSY`` (exit 3) when another turn holds the
  session.

:class:`Child` starts one and reads its stdout lines with a bound, so a
child that misbehaves fails the test instead of hanging it.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Generous bound for a child's next line (it imports agent_smith first).
LINE_TIMEOUT = 60.0


class Child:
    """A running ``session_child``; :meth:`expect` its lines, :meth:`send` it lines."""

    def __init__(self, *args: str | Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.session_child", *map(str, args)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    def expect(self, prefix: str, timeout: float = LINE_TIMEOUT) -> str:
        """The child's next stdout line, which must start with ``prefix``."""
        line = self._readline(timeout)
        assert line.startswith(prefix), f"expected {prefix!r} from the child, got {line!r}"
        return line

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")

    def kill(self) -> int:
        """SIGKILL the child (no cleanup of any kind runs) and reap it."""
        self.proc.send_signal(signal.SIGKILL)
        return self.wait()

    def wait(self, timeout: float = LINE_TIMEOUT) -> int:
        code = self.proc.wait(timeout)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()
        return code

    def close(self) -> None:
        """Kill the child if it is still running (a failed test) and reap it."""
        if self.proc.poll() is None:
            self.kill()
        else:
            self.wait()

    def _readline(self, timeout: float) -> str:
        stdout = self.proc.stdout
        assert stdout is not None
        deadline = time.monotonic() + timeout
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([stdout], [], [], left)[0]:
                raise AssertionError(f"no line from the child within {timeout} s (got {line!r})")
            byte = stdout.read(1)  # unbuffered: nothing is read ahead of the line
            if not byte:
                raise AssertionError(f"the child exited ({self.proc.wait()}) after {line!r}")
            line += byte
        return line.decode().rstrip("\n")


def _append(where: str, session_id: str, tag: str, count: str) -> int:
    from agent_smith import SessionStore, UserMessage

    with SessionStore(where) as store, store.open(session_id) as session:
        print("READY")
        sys.stdin.readline()
        for j in range(int(count)):
            session.append(UserMessage(f"{tag}-{j}"))
    print("DONE")
    return 0


def _turn(url: str, where: str, session_id: str, lease_seconds: str, question: str) -> int:
    from agent_smith import Agent, AgentBusyError, LlmClient, SessionStore, tool

    @tool
    def lookup(city: str) -> str:
        """Look a city up (waits for the parent's go)."""
        print("TOOL_STARTED")
        sys.stdin.readline()
        return f"{city}: sunny"

    with (
        SessionStore(where, lease_seconds=float(lease_seconds)) as store,
        store.open(session_id) as session,
        Agent(LlmClient(url, "test", max_retries=0), tools=[lookup], session=session) as agent,
    ):
        try:
            reply = agent.send(question)
        except AgentBusyError:
            print("BUSY")
            return 3
    print(f"DONE {reply.content}")
    return 0


if __name__ == "__main__":
    modes = {"append": _append, "turn": _turn}
    sys.exit(modes[sys.argv[1]](*sys.argv[2:]))
