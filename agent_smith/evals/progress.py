"""The progress bar of an eval run: in the notebook cell under Jupyter, else on stderr.

Under an IPython kernel one output of the cell is updated in place (an HTML
``<progress>`` element and the counts); elsewhere one line is redrawn on
standard error when it is a terminal, and nothing is written when it is
not (a CI log gets the report instead). Only :func:`~.run.run_eval` with
``progress=True`` makes one: the library writes nothing unasked. No
dependency: IPython is imported only when a kernel is already running.
"""

from __future__ import annotations

import html
import sys
import time
from typing import Any, TextIO

_WIDTH = 30


class ProgressBar:
    """Counts finished runs out of ``total`` (``done`` already) and shows it."""

    def __init__(self, total: int, *, done: int = 0, stream: TextIO | None = None) -> None:
        self.total = total
        self.done = done
        self.passed = 0
        self._started = time.monotonic()
        self._stream = stream if stream is not None else sys.stderr
        self._handle = _notebook_output()
        self._tty = self._handle is None and self._stream.isatty()
        self._draw()

    def advance(self, passed: bool) -> None:
        """One more run finished."""
        self.done += 1
        self.passed += passed
        self._draw()

    def close(self) -> None:
        """End the line (on a terminal)."""
        if self._tty:
            self._stream.write("\n")
            self._stream.flush()
            self._tty = False

    def line(self) -> str:
        """The status as one line of text."""
        share = self.done / self.total if self.total else 1.0
        filled = round(share * _WIDTH)
        elapsed = time.monotonic() - self._started
        return (
            f"[{'#' * filled}{'.' * (_WIDTH - filled)}] {self.done}/{self.total} runs, "
            f"{self.passed} passed, {elapsed:.1f} s"
        )

    def _draw(self) -> None:
        if self._handle is not None:
            self._handle.update(_Html(self))
        elif self._tty:
            self._stream.write("\r" + self.line())
            self._stream.flush()


class _Html:
    """What the notebook shows: a progress element and the status line."""

    def __init__(self, bar: ProgressBar) -> None:
        self._html = (
            f'<progress value="{bar.done}" max="{max(bar.total, 1)}" style="width:20em"></progress>'
            f" <code>{html.escape(bar.line().split('] ', 1)[1])}</code>"
        )

    def _repr_html_(self) -> str:
        return self._html


def _notebook_output() -> Any:
    """A new output of the running notebook cell, or None outside an IPython kernel."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return None
    shell = ipython.get_ipython()
    if shell is None or not hasattr(shell, "kernel"):
        return None
    from IPython.display import display

    return display(_Blank(), display_id=True)  # type: ignore[no-untyped-call]


class _Blank:
    """The output's first content, replaced by the bar at once."""

    def _repr_html_(self) -> str:
        return ""
