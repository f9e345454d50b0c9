"""The demo CLI's answer to an MCP server that asks the user to visit a page (URL-mode elicitation).

A server may need the user to do something out of band, in a browser: sign
in somewhere, confirm a payment. It sends ``elicitation/create`` in URL mode
with a message and the page's address. The request reaches the client on a
worker thread (the client's event thread, or at 2026-07-28 the thread of the
tool call that needed it), but only the main thread reads the terminal; so,
as approvals do, the question goes to the REPL through
:meth:`TerminalApprovals.wait_for_answer` and the worker waits for it. On
the main thread the user sees which server asks, its message and the
address (whole, never cut), and is asked:

1. ``Open it in your browser? [y/N]``: only on yes is it opened (the
   ``webbrowser`` module); otherwise, or if no browser could be started, the
   user is told to open the address themselves;
2. ``Done on that page? [y/N]``: yes accepts, anything else declines; the
   server hears the answer only now, after the user is back.

Without a terminal the request is declined without reading stdin (``--yes``
does not change that: nobody could visit the page), and so is an address
that is not ``http(s)`` or holds control characters (a server must not make
the terminal or the browser do anything else). Ctrl-C at a prompt
declines and cancels the reply. Form-mode requests are not offered (they
are declined as before). While the user is away, the call that needed the
page does not time out (``request_timeout`` and the agent's tool timeout
stop counting; :mod:`agent_smith.tools.person_wait`).
"""

from __future__ import annotations

import webbrowser
from collections.abc import Callable
from urllib.parse import urlsplit

from ..mcp.elicitation import Elicitation
from .approval import Read, Status, TerminalApprovals, TerminalQuestion

#: Opens an address in a browser; whether one opened (``webbrowser.open``'s contract).
Opener = Callable[[str], bool]


class UrlQuestion(TerminalQuestion):
    """Server ``server`` asks the user to visit ``url``; settled with :attr:`accepted`."""

    def __init__(
        self, server: str, message: str, url: str, *, opener: Opener, interactive: bool
    ) -> None:
        super().__init__()
        self.server = server
        self.message = message
        self.url = url
        self.accepted = False
        self._opener = opener
        self._interactive = interactive

    def ask(self, *, status: Status, read: Read) -> None:
        who = f"[mcp {self.server}]"
        shown = f"{who} asks you to visit a page: {_printable(self.message) or '(no message)'}"
        refusal = None if self._interactive else "no terminal to ask"
        if refusal is None and not _plain_web_address(self.url):
            refusal = f"not a plain http(s) address: {_printable(self.url)}"
        if refusal is not None:
            status(f"{shown} -> declined: {refusal}")
            self.answered.set()
            return
        status(shown)
        try:
            if _yes(read, f"  {self.url}\nOpen it in your browser? [y/N] "):
                if not self._opener(self.url):
                    status(f"{who} no browser could be started; open the address yourself")
            else:
                status(f"{who} not opened; open the address yourself to go on")
            self.accepted = _yes(read, "Done on that page? [y/N] ")
        except KeyboardInterrupt:
            self.answered.set()  # declined; the REPL goes on to cancel the reply
            raise
        status(f"{who} {'accepted' if self.accepted else 'declined'}")
        self.answered.set()


class TerminalElicitation:
    """URL-mode elicitation handlers for the REPL's MCP servers, asked on the main thread.

    ``opener`` opens an address (default: ``webbrowser.open``; tests give a stand-in).
    """

    def __init__(self, approvals: TerminalApprovals, *, opener: Opener = webbrowser.open) -> None:
        self._approvals = approvals
        self._opener = opener

    def handler(self, server: str) -> Elicitation:
        """The elicitation handler for server ``server``: URL mode only."""
        return Elicitation(form=None, url=lambda message, url: self._ask(server, message, url))

    def _ask(self, server: str, message: str, url: str) -> bool:
        question = UrlQuestion(
            server, message, url, opener=self._opener, interactive=self._approvals.interactive
        )
        return self._approvals.wait_for_answer(question) and question.accepted


def _yes(read: Read, prompt: str) -> bool:
    try:
        reply = read(prompt)
    except EOFError:  # Ctrl-D: no
        return False
    return reply.strip().lower() in ("y", "yes")


def _plain_web_address(url: str) -> bool:
    """An ``http(s)`` URL with a host and nothing a terminal would act on."""
    if not url.isprintable() or any(c.isspace() for c in url):
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _printable(text: str) -> str:
    """``text`` with control characters (escape sequences) shown as spaces."""
    return "".join(c if c.isprintable() else " " for c in text)
