"""``agent-smith serve`` as a child process that a test starts, waits for and Ctrl-C's."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.support.pipes import MODEL_TIMEOUT, TIMEOUT, PipeReader
from tests.support.signals import default_sigint

REPO = Path(__file__).resolve().parents[2]
SERVING = re.compile(r"^serving (\S+) at (http://127\.0\.0\.1:\d+) ", re.M)


class Served:
    """An ``agent-smith serve`` child, its output, and the address it printed."""

    def __init__(self, *args: str) -> None:
        env = {
            k: v for k, v in os.environ.items() if k not in ("LLAMA_SERVER_URL", "LLAMA_API_KEY")
        }
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agent_smith", "serve", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,  # a job of its own, as in a terminal
            preexec_fn=default_sigint,  # Ctrl-C reaches it also from a background job
        )
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.out = PipeReader(self.proc.stdout, "serve-out")
        self.err = PipeReader(self.proc.stderr, "serve-err")
        self.url = ""

    def wait_ready(self) -> str:
        found = SERVING.search(self.out.wait_for(" Ctrl-C stops.\n", timeout=MODEL_TIMEOUT))
        assert found, self.err.text()
        self.url = found.group(2)
        return self.url

    def ctrl_c(self) -> int:
        os.killpg(self.proc.pid, signal.SIGINT)  # the terminal's Ctrl-C, to the whole job
        return self.proc.wait(TIMEOUT)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(TIMEOUT)
        for stream in (self.proc.stdout, self.proc.stderr):
            assert stream is not None
            stream.close()


@contextlib.contextmanager
def serving() -> Iterator[Callable[..., Served]]:
    """A starter of ``agent-smith serve`` children, each stopped and reaped on the way out."""
    started: list[Served] = []

    def start(*args: str) -> Served:
        started.append(Served(*args))
        return started[-1]

    try:
        yield start
    finally:
        for served in started:
            served.close()
