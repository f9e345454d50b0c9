"""The demo CLI's URL-mode elicitation: shown whole, opened only on yes, answered when done."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agent_smith.cli.approval import TerminalApprovals
from agent_smith.cli.url_elicitation import TerminalElicitation, UrlQuestion
from tests.support.background import Background
from tests.support.scripted_input import scripted_read

pytestmark = pytest.mark.usefixtures("no_thread_leak")

WAIT = 10.0
URL = "https://example.com/sign-in?session=42&next=%2Fhome"
OPEN = f"  {URL}\nOpen it in your browser? [y/N] "
DONE = "Done on that page? [y/N] "


class Browser:
    """Stands in for ``webbrowser.open``: records the addresses, opens nothing."""

    def __init__(self, *, works: bool = True) -> None:
        self.opened: list[str] = []
        self._works = works

    def __call__(self, url: str) -> bool:
        self.opened.append(url)
        return self._works


def _ask(
    *replies: str | BaseException,
    url: str = URL,
    interactive: bool = True,
    browser: Browser | None = None,
) -> tuple[UrlQuestion, list[str], list[str]]:
    """Ask one question as the REPL would; what was prompted and shown."""
    read, prompts = scripted_read(*replies)
    lines: list[str] = []
    opener = browser if browser is not None else Browser()
    question = UrlQuestion("demo", "Sign in.\x1b[2J", url, opener=opener, interactive=interactive)
    question.ask(status=lines.append, read=read)
    assert question.answered.is_set()
    return question, prompts, lines


def test_yes_opens_the_page_and_done_accepts() -> None:
    browser = Browser()
    question, prompts, lines = _ask("y", "y", browser=browser)
    assert question.accepted
    assert browser.opened == [URL]
    assert prompts == [OPEN, DONE]  # the address whole, on its own line
    # The server's text cannot move the cursor or clear the screen.
    assert lines == ["[mcp demo] asks you to visit a page: Sign in. [2J", "[mcp demo] accepted"]


def test_no_leaves_the_browser_closed_and_says_how_to_go_on() -> None:
    browser = Browser()
    question, _, lines = _ask("", "yes", browser=browser)
    assert question.accepted  # they opened it themselves
    assert browser.opened == []
    assert "[mcp demo] not opened; open the address yourself to go on" in lines


def test_a_browser_that_cannot_start_is_reported() -> None:
    question, _, lines = _ask("y", "n", browser=Browser(works=False))
    assert not question.accepted
    assert "[mcp demo] no browser could be started; open the address yourself" in lines
    assert lines[-1] == "[mcp demo] declined"


@pytest.mark.parametrize("done", ["n", "", "later", EOFError()])
def test_anything_but_yes_when_asked_if_done_declines(done: str | BaseException) -> None:
    question, _, _ = _ask("n", done)
    assert not question.accepted


def test_without_a_terminal_it_declines_without_reading_input() -> None:
    question, prompts, lines = _ask(interactive=False)
    assert not question.accepted and prompts == []
    assert lines[0].endswith("-> declined: no terminal to ask")


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "javascript:alert(1)", "https://x.test/\x1b[2J", "https://"]
)
def test_an_address_that_is_not_plain_http_is_declined_unasked(url: str) -> None:
    browser = Browser()
    question, prompts, lines = _ask(url=url, browser=browser)
    assert not question.accepted and prompts == [] and browser.opened == []
    assert "-> declined: not a plain http(s) address" in lines[0]
    assert "\x1b" not in lines[0]


def test_ctrl_c_at_a_prompt_declines_and_goes_on_to_cancel_the_reply() -> None:
    with pytest.raises(KeyboardInterrupt):
        _ask(KeyboardInterrupt())


def test_the_handler_waits_on_its_thread_for_the_main_threads_answer() -> None:
    approvals = TerminalApprovals(assume_yes=False, interactive=True)
    browser = Browser()
    handler = TerminalElicitation(approvals, opener=browser).handler("demo")
    assert handler.modes == ("url",)  # form mode is not offered
    posted: list[Any] = []
    arrived = threading.Event()

    def post(item: object) -> None:
        posted.append(item)
        arrived.set()

    approvals.bind(post)
    params = {"mode": "url", "message": "Sign in.", "url": URL, "elicitationId": "e1"}
    job = Background(lambda: handler(params), name="test-mcp-events")
    try:
        assert arrived.wait(WAIT)
        assert not job.done.is_set()  # still waiting for the user
        replies = iter(["y", "y"])
        posted[0].ask(status=lambda line: None, read=lambda prompt: next(replies))
        assert job.join(WAIT)
    finally:
        approvals.bind(None)
        job.join(WAIT)
    assert job.result == {"action": "accept"}
    assert browser.opened == [URL]


def test_a_turn_that_ends_first_wakes_the_handler_which_declines() -> None:
    approvals = TerminalApprovals(assume_yes=False, interactive=True)
    handler = TerminalElicitation(approvals, opener=Browser()).handler("demo")
    arrived = threading.Event()
    approvals.bind(lambda item: arrived.set())
    job = Background(lambda: handler({"mode": "url", "url": URL}), name="test-mcp-events")
    try:
        assert arrived.wait(WAIT)
        approvals.bind(None)  # the turn is over (its tool call timed out, say)
        assert job.join(WAIT), "the handler kept waiting after the turn ended"
    finally:
        approvals.bind(None)
        job.join(WAIT)
    assert job.result == {"action": "decline"}


def test_outside_a_turn_nobody_is_asked() -> None:
    approvals = TerminalApprovals(assume_yes=False, interactive=True)
    handler = TerminalElicitation(approvals, opener=Browser()).handler("demo")
    assert handler({"mode": "url", "url": URL}) == {"action": "decline"}
    assert handler({"message": "a form", "requestedSchema": {}}) == {"action": "decline"}
