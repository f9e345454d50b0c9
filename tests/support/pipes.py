"""Reading what a child process writes, so a test can wait for some text to arrive."""

from __future__ import annotations

import os
import threading
from typing import IO

#: Generous bound for text to arrive (a bug fails, never hangs).
TIMEOUT = 60.0
#: The same for a child that runs a real model: loading it and writing a reply
#: take minutes on a loaded two-core machine.
MODEL_TIMEOUT = 600.0


class PipeReader:
    """Collects what a child writes to one pipe, on a thread of its own."""

    def __init__(self, stream: IO[bytes], name: str) -> None:
        self._stream = stream
        self._text = ""
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._pump, name=f"test-pipe-{name}", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        for chunk in iter(lambda: os.read(self._stream.fileno(), 4096), b""):
            with self._changed:
                self._text += chunk.decode("utf-8", "replace")
                self._changed.notify_all()

    def wait_for(self, fragment: str, *, timeout: float = TIMEOUT) -> str:
        """Block until ``fragment`` was written (at most ``timeout`` s); everything so far."""
        with self._changed:
            found = self._changed.wait_for(lambda: fragment in self._text, timeout=timeout)
            assert found, f"{fragment!r} never arrived; got {self._text!r}"
            return self._text

    def text(self) -> str:
        """Everything written, once the pipe is closed."""
        self._thread.join(TIMEOUT)
        return self._text
