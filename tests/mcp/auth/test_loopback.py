"""The default authorization handler: browser opened, redirect caught on 127.0.0.1 (RFC 8252)."""

from __future__ import annotations

import logging
import socket
import threading
from urllib.parse import urlsplit

import pytest
import requests

from agent_smith import AgentTimeoutError, LoopbackAuthorization


class Browser:
    """Plays the user's browser on its own thread: visits each path on the loopback port."""

    def __init__(self, handler: LoopbackAuthorization, *paths: str) -> None:
        self.handler = handler
        self.paths = paths
        self.statuses: list[int] = []
        self.thread: threading.Thread | None = None

    def __call__(self, url: str) -> bool:
        base = self.handler.redirect_uri.rsplit("/", 1)[0]
        self.thread = threading.Thread(target=self._visit, args=(base,), name="test-browser")
        self.thread.start()
        return True

    def _visit(self, base: str) -> None:
        for path in self.paths:
            self.statuses.append(requests.get(base + path, timeout=10).status_code)

    def join(self) -> None:
        assert self.thread is not None
        self.thread.join(10)


def with_browser(*paths: str, **kw: object) -> tuple[LoopbackAuthorization, Browser]:
    holder: list[Browser] = []
    handler = LoopbackAuthorization(open_browser=lambda url: holder[0](url), **kw)  # type: ignore[arg-type]
    holder.append(Browser(handler, *paths))
    return handler, holder[0]


def test_the_redirect_is_caught_and_stray_requests_get_404() -> None:
    handler, browser = with_browser(
        "/favicon.ico", "/callback?state=s", "/callback?code=c1&state=s"
    )
    uri = handler.redirect_uri
    got = handler("https://auth.example.com/authorize?x=1")
    browser.join()
    assert browser.statuses == [404, 404, 200]
    assert got == f"{uri}?code=c1&state=s"
    assert urlsplit(uri).hostname == "127.0.0.1"


def test_the_port_is_kept_for_the_next_authorization_and_released_between() -> None:
    handler, browser = with_browser("/callback?code=c1&state=s")
    first = handler.redirect_uri
    handler("https://auth/authorize")
    browser.join()
    port = urlsplit(first).port
    assert port is not None
    with socket.socket() as probe:  # released: another listener could take it now
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(("127.0.0.1", port))
    assert handler.redirect_uri == first
    handler.close()


def test_no_redirect_in_time_is_a_timeout(caplog: pytest.LogCaptureFixture) -> None:
    handler = LoopbackAuthorization(timeout=0.2, open_browser=lambda url: False)
    with caplog.at_level(logging.WARNING), pytest.raises(AgentTimeoutError) as info:
        handler("https://auth.example.com/authorize?state=abc")
    assert info.value.budget == 0.2
    # No browser could be opened: the user is shown the URL to open by hand.
    assert "https://auth.example.com/authorize?state=abc" in caplog.text


def test_a_refusal_redirect_is_returned_for_the_caller_to_read() -> None:
    handler, browser = with_browser("/callback?error=access_denied&state=s")
    got = handler("https://auth/authorize")
    browser.join()
    assert "error=access_denied" in got and browser.statuses == [200]


def test_a_port_in_use_is_a_transport_error() -> None:
    from agent_smith import TransportError

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        handler = LoopbackAuthorization(port=taken.getsockname()[1])
        with pytest.raises(TransportError, match="cannot listen"):
            _ = handler.redirect_uri
