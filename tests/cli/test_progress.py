from __future__ import annotations

import io

from agent_smith import BatchResult, ItemError
from agent_smith.cli.progress import Progress

OK = BatchResult("a", "q")
FAILED = BatchResult("b", "q", error=ItemError("LlmApiError", "HTTP 400"))


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_status_counts_done_and_failed_with_rate_and_eta() -> None:
    clock = Clock()
    progress = Progress(10, stream=io.StringIO(), tty=False, clock=clock)
    clock.now += 2.0
    for result in (OK, OK, OK, FAILED):
        progress.add(result)
    assert progress.status() == "4/10 done, 1 failed, 2.0/s, ETA 0:03"
    clock.now += 3600
    assert progress.status() == "4/10 done, 1 failed, 0.1/min, ETA 1:30:03"


def test_without_a_terminal_a_plain_line_comes_at_most_every_interval() -> None:
    clock, out = Clock(), io.StringIO()
    progress = Progress(3, stream=out, tty=False, interval=5.0, clock=clock)
    progress.add(OK)
    assert out.getvalue() == ""
    clock.now += 5.0
    progress.add(FAILED)
    progress.add(OK)
    progress.finish()
    assert out.getvalue().splitlines() == [
        "[failed] b: LlmApiError: HTTP 400",
        "2/3 done, 1 failed, 24.0/min, ETA 0:03",
        "3/3 done, 1 failed, 36.0/min, ETA 0:00",
    ]


def test_on_a_terminal_the_bar_is_redrawn_in_place_and_failures_get_their_own_line() -> None:
    clock, out = Clock(), io.StringIO()
    progress = Progress(2, stream=out, tty=True, clock=clock)
    clock.now += 1.0
    progress.add(OK)
    progress.add(FAILED)
    progress.finish()
    text = out.getvalue()
    assert text.startswith("\r\x1b[K[############............] 1/2 done, 0 failed, 1.0/s, ETA 0:01")
    assert "\r\x1b[K[failed] b: LlmApiError: HTTP 400\n" in text
    assert text.endswith("[########################] 2/2 done, 1 failed, 2.0/s, ETA 0:00\n")
    assert "\n" not in text.split("[failed]")[0]  # redrawn, not one line per result


def test_an_empty_batch_shows_a_full_bar() -> None:
    out = io.StringIO()
    progress = Progress(0, stream=out, tty=True)
    progress.finish()
    assert "[########################] 0/0 done, 0 failed" in out.getvalue()
