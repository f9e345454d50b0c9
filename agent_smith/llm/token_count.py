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

from .server_props import get_json, props_url

log = logging.getLogger(__name__)


class TokenCounter:
    """Counts a chat body's prompt tokens on one llama-server; None once it cannot (thread-safe).

    :attr:`counts` says whether the server has counted (True), cannot
    (False), or is not known yet (None).
    """

    __slots__ = ("_base", "_lock", "counts")

    def __init__(self, chat_url: str) -> None:
        self._base = props_url(chat_url).removesuffix("/props")
        self._lock = threading.Lock()
        self.counts: bool | None = None

    def count(
        self,
        session: requests.Session,
        body: dict[str, Any],
        *,
        headers: dict[str, str],
        timeout: float,
    ) -> int | None:
        """The prompt tokens of ``body`` (a chat-completions body), or None if not counted."""
        if self.counts is False:
            return None
        wanted: dict[str, Any] = {k: body[k] for k in ("messages", "tools") if k in body}
        base = self._base
        try:
            prompt = get_json(
                session, base + "/apply-template", headers=headers, timeout=timeout, body=wanted
            )
            text = prompt.get("prompt") if prompt is not None else None
            if isinstance(text, str):
                payload = {"content": text, "add_special": False}
                tokenized = get_json(
                    session, base + "/tokenize", headers=headers, timeout=timeout, body=payload
                )
                tokens = tokenized.get("tokens") if tokenized is not None else None
                if isinstance(tokens, list):
                    self._settle(True)
                    return len(tokens)
        except requests.RequestException as err:  # no answer: ask again next time
            log.debug("counting tokens on %s failed: %s", base, err)
            return None
        self._settle(False)
        log.debug("%s does not count tokens: estimating instead", base)
        return None

    def _settle(self, counts: bool) -> None:
        if self.counts is None:
            with self._lock:
                if self.counts is None:
                    self.counts = counts
