"""What a chat server says of itself beyond chat: the context window of one request.

llama-server answers ``GET /props`` (at the server's root, beside ``/v1``)
with ``default_generation_settings.n_ctx``: the context of one slot, which
is what one request may fill (``--ctx-size`` shared by ``--parallel``
slots). Other servers answer 404 or something else: the window is then
unknown (None), and that is remembered. A request that got no answer (a
dropped keep-alive connection, a timeout) is only logged at DEBUG and asked
again at the next ask, up to :data:`MAX_ASKS` asks in all. Asking never raises.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import NamedTuple
from urllib.parse import urlsplit, urlunsplit

import requests

from .wire_bytes import encode_body

log = logging.getLogger(__name__)

_CHAT = "/chat/completions"

#: How many times a server is asked for its window before what it said (or None) is kept.
MAX_ASKS = 3


class Asked(NamedTuple):
    """A server's answer about its window: the window (None: not said), and whether it is final.

    Not ``final``: the request got no answer, or the window is provisional
    (an Ollama model not loaded yet); :class:`KnownWindow` asks again later.
    """

    window: int | None
    final: bool = True


def props_url(chat_url: str) -> str:
    """llama-server's ``/props`` URL for the server a chat-completions URL points at."""
    parts = urlsplit(chat_url)
    path = parts.path.removesuffix(_CHAT).rstrip("/")
    path = path.removesuffix("/v1")
    return urlunsplit((parts.scheme, parts.netloc, f"{path}/props", "", ""))


def fetch_context_window(
    session: requests.Session, url: str, *, headers: dict[str, str], timeout: float
) -> Asked:
    """The ``n_ctx`` a llama-server at ``url`` (a ``/props`` URL) reports (see the module doc)."""
    try:
        body = get_json(session, url, headers=headers, timeout=timeout)
    except requests.RequestException as err:  # no answer: ask again later
        log.debug("asking %s for the context window failed: %s", url, err)
        return Asked(None, final=False)
    settings = body.get("default_generation_settings") if body is not None else None
    window = settings.get("n_ctx") if isinstance(settings, dict) else None
    return Asked(positive(window))


def get_json(
    session: requests.Session,
    url: str,
    *,
    headers: dict[str, str],
    timeout: float,
    body: dict[str, object] | None = None,
) -> dict[str, object] | None:
    """The JSON object ``url`` answers (POSTing ``body`` if given); None for any other answer.

    Raises :class:`requests.RequestException` when no answer came.
    """
    if body is None:
        response = session.get(url, headers=headers, timeout=timeout)
    else:
        sent = {**headers, "Content-Type": "application/json"}  # a body may carry image bytes
        response = session.post(url, data=encode_body(body), headers=sent, timeout=timeout)
    try:
        if response.status_code != 200:
            log.debug("%s answered HTTP %d", url, response.status_code)
            return None
        data = response.json()
    except ValueError:
        return None
    finally:
        response.close()
    return data if isinstance(data, dict) else None


def positive(value: object) -> int | None:
    """``value`` if it is a positive int (not a bool), else None."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


class KnownWindow:
    """One server's context window as far as it is known: asked until final, or learned.

    Thread-safe. An answer that is not final (no answer, or a provisional
    window) is asked again at the next :meth:`get`, up to :data:`MAX_ASKS`
    asks; then what is known stays.
    """

    __slots__ = ("_asks", "_final", "_lock", "_window")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._window: int | None = None
        self._final = False
        self._asks = 0

    def get(self, ask: Callable[[], Asked] | None) -> int | None:
        """The window; ``ask()`` the server if it is not final yet (None: only what is known)."""
        with self._lock:
            if self._final or ask is None or self._asks >= MAX_ASKS:
                return self._window
            self._asks += 1
        answer = ask()  # outside the lock: a slow server must not block other readers
        with self._lock:
            if not self._final:  # a window learned meanwhile wins
                if answer.window is not None:
                    self._window = answer.window
                self._final = answer.final
            return self._window

    def learn(self, window: int | None) -> None:
        """Remember a window the server named (in a context-overflow answer, say)."""
        if window:
            with self._lock:
                self._window = window
                self._final = True
