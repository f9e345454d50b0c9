"""Child processes that a test interrupts as a terminal's Ctrl-C would."""

from __future__ import annotations

import signal


def default_sigint() -> None:
    """``preexec_fn`` for a child the test sends SIGINT: give it the default disposition.

    A shell starts a background job with SIGINT ignored, and an ignored signal
    stays ignored across ``exec``: Python then installs no KeyboardInterrupt
    handler, and a child that a test Ctrl-C's would never notice. A user at a
    terminal always has SIGINT delivered, so the child is given that.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
