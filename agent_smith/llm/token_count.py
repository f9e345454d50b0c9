"""Exact prompt token counts, where the server offers them (llama-server).

llama-server renders a chat request with the model's own template
(``POST /apply-template``, the chat-completions body in, ``{"prompt": ...}``
out) and tokenizes text (``POST /tokenize``); together they count a
request's prompt exactly as the server will, before it is sent. Other
servers answer 404 or something else: :class:`TokenCounter` then remembers
that the server does not count and answers None from then on (callers fall
back to the ~4 characters per token estimate,
:func:`agent_smith.memory.estimate_tokens`); a failed connection is only
logged, and asked again next time. Counting never raises.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import requests

from .server_props import props_url

log = logging.getLogger(__name__)


class TokenCounter:
    """Counts a chat body's prompt tokens on one llama-server; None once it cannot (thread-safe)."""

    __slots__ = ("_base", "_lock", "_unsupported")

    def __init__(self, chat_url: str) -> None:
        self._base = props_url(chat_url).removesuffix("/props")
        self._lock = threading.Lock()
        self._unsupported = False

    def count(
        self,
        session: requests.Session,
        body: dict[str, Any],
        *,
        headers: dict[str, str],
        timeout: float,
    ) -> int | None:
        """The prompt tokens of ``body`` (a chat-completions body), or None if not counted."""
        with self._lock:
            if self._unsupported:
                return None
        wanted: dict[str, Any] = {k: body[k] for k in ("messages", "tools") if k in body}
        try:
            prompt = self._post(session, "/apply-template", wanted, headers, timeout)
            text = prompt.get("prompt") if prompt is not None else None
            if isinstance(text, str):
                payload = {"content": text, "add_special": False}
                tokenized = self._post(session, "/tokenize", payload, headers, timeout)
                tokens = tokenized.get("tokens") if tokenized is not None else None
                if isinstance(tokens, list):
                    return len(tokens)
        except requests.RequestException as err:  # no answer: ask again next time
            log.debug("counting tokens on %s failed: %s", self._base, err)
            return None
        with self._lock:
            self._unsupported = True
        log.debug("%s does not count tokens: estimating instead", self._base)
        return None

    def _post(
        self,
        session: requests.Session,
        path: str,
        payload: dict[str, Any],
        headers: dict[str, str],
        timeout: float,
    ) -> dict[str, Any] | None:
        """The JSON object the server answered, None for any other answer; RequestException."""
        response = session.post(self._base + path, json=payload, headers=headers, timeout=timeout)
        try:
            if response.status_code != 200:
                return None
            data = response.json()
        except ValueError:
            return None
        finally:
            response.close()
        return data if isinstance(data, dict) else None
