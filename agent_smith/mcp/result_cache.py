"""The client's cache of list and read results, as their ``ttlMs`` and ``cacheScope`` allow.

A 2026-07-28 server marks ``*/list`` and ``resources/read`` results with how
long they stay fresh (``ttlMs``; 0 means re-fetch every time) and who may
share them (``cacheScope``: ``public``, or ``private`` to one authorization
context). The cache belongs to one client, so it is one authorization
context: both scopes are kept. Entries are keyed by method and params (the
per-request ``_meta`` aside); a ``list_changed`` notification drops that
kind's lists, ``resources/updated`` that resource's reads. Results without a
``ttlMs`` (every handshake-era server's) are never stored.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

#: Methods whose results may be cached.
CACHEABLE = frozenset(
    {"tools/list", "resources/list", "resources/templates/list", "prompts/list", "resources/read"}
)
_MAX_ENTRIES = 256  # a bound against a server paging through endless cursors


class ResultCache:
    """Fresh results by (method, params); thread-safe."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str], tuple[float, dict[str, Any]]] = {}

    def get(self, method: str, params: dict[str, Any] | None) -> dict[str, Any] | None:
        """The cached result of ``method`` with ``params`` while fresh, else None."""
        key = (method, _key(params))
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if entry[0] <= self._clock():
                del self._entries[key]
                return None
            return entry[1]

    def put(self, method: str, params: dict[str, Any] | None, result: dict[str, Any]) -> None:
        """Keep ``result`` for as long as its ``ttlMs`` says (not at all without one)."""
        ttl = result.get("ttlMs")
        if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl <= 0:
            return
        if result.get("cacheScope") not in ("public", "private"):
            return
        with self._lock:
            if len(self._entries) >= _MAX_ENTRIES:
                self._entries.clear()
            self._entries[(method, _key(params))] = (self._clock() + ttl / 1000.0, result)

    def invalidate(self, method: str, *, uri: str | None = None) -> None:
        """Drop the entries of ``method`` (only those reading ``uri``, when given)."""
        with self._lock:
            for key in [k for k in self._entries if k[0] == method]:
                if uri is None or json.loads(key[1]).get("uri") == uri:
                    del self._entries[key]

    def on_notification(self, method: str, params: dict[str, Any]) -> None:
        """Drop what a server notification says changed."""
        if method.endswith("/list_changed"):
            kind = method.removeprefix("notifications/").removesuffix("/list_changed")
            self.invalidate(f"{kind}/list")
            if kind == "resources":
                self.invalidate("resources/templates/list")
        elif method == "notifications/resources/updated":
            uri = params.get("uri")
            self.invalidate("resources/read", uri=uri if isinstance(uri, str) else None)


def _key(params: dict[str, Any] | None) -> str:
    own = {k: v for k, v in (params or {}).items() if k != "_meta"}
    return json.dumps(own, sort_keys=True, separators=(",", ":"), default=str)
