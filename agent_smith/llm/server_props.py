"""What a chat server says of itself beyond chat: the context window of one request.

llama-server answers ``GET /props`` (at the server's root, beside ``/v1``)
with ``default_generation_settings.n_ctx``: the context of one slot, which
is what one request may fill (``--ctx-size`` shared by ``--parallel``
slots). Other servers answer 404 or something else: the window is then
unknown (None). Asking never raises; a failure is logged at DEBUG.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from urllib.parse import urlsplit, urlunsplit

import requests

log = logging.getLogger(__name__)

_CHAT = "/chat/completions"


def props_url(chat_url: str) -> str:
    """llama-server's ``/props`` URL for the server a chat-completions URL points at."""
    parts = urlsplit(chat_url)
    path = parts.path.removesuffix(_CHAT).rstrip("/")
    path = path.removesuffix("/v1")
    return urlunsplit((parts.scheme, parts.netloc, f"{path}/props", "", ""))


def fetch_context_window(
    session: requests.Session, url: str, *, headers: dict[str, str], timeout: float
) -> int | None:
    """The ``n_ctx`` a llama-server at ``url`` (a ``/props`` URL) reports, else None."""
    try:
        response = session.get(url, headers=headers, timeout=timeout)
        try:
            if response.status_code != 200:
                log.debug("%s answered HTTP %d: context window unknown", url, response.status_code)
                return None
            body = response.json()
        finally:
            response.close()
    except (requests.RequestException, ValueError) as err:
        log.debug("asking %s for the context window failed: %s", url, err)
        return None
    settings = body.get("default_generation_settings") if isinstance(body, dict) else None
    window = settings.get("n_ctx") if isinstance(settings, dict) else None
    if isinstance(window, int) and not isinstance(window, bool) and window > 0:
        return window
    return None


class KnownWindow:
    """One server's context window as far as it is known: asked once, or learned (thread-safe)."""

    __slots__ = ("_asked", "_lock", "_window")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._window: int | None = None
        self._asked = False

    def get(self, ask: Callable[[], int | None] | None) -> int | None:
        """The window; if unknown and never asked, ``ask()`` it once (None: only what is known)."""
        with self._lock:
            if self._window is not None or self._asked or ask is None:
                return self._window
        window = ask()  # outside the lock: a slow server must not block other readers
        with self._lock:
            self._asked = True
            if self._window is None:
                self._window = window
            return self._window

    def learn(self, window: int | None) -> None:
        """Remember a window the server named (in a context-overflow answer, say)."""
        if window:
            with self._lock:
                self._window = window
