"""The Streamable HTTP session: its id, the negotiated revision, and its end.

The server names the session in its answer to ``initialize``
(``Mcp-Session-Id``); every later request carries that id and, once the
revision is known, ``MCP-Protocol-Version``. A 404, or a 400 naming the
session, while an id is held means the server forgot it: the request raises
:class:`~agent_smith.mcp.transport.StaleSession` and the client initialises
again. Closing the transport ends the session with ``DELETE``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping

import requests

from .generation import MODERN_VERSION
from .http_request import RequestAuth, authorized_request
from .transport import StaleSession

log = logging.getLogger(__name__)

#: What a POST (and the DELETE) accepts: a JSON body or an SSE stream.
ACCEPT_POST = "application/json, text/event-stream"
_DELETE_TIMEOUT = 5.0


class HttpSession:
    """Session state of one Streamable HTTP transport to server ``server`` (thread-safe)."""

    def __init__(self, server: str, extra_headers: Mapping[str, str] | None) -> None:
        self.server = server
        self._extra = dict(extra_headers or {})
        self._lock = threading.Lock()
        self._id: str | None = None
        self._protocol_version: str | None = None
        #: A request thread found the session gone: the next send raises StaleSession.
        self.stale = False

    def restart(self) -> None:
        """A fresh ``initialize`` is being sent: never offer the old id or revision."""
        with self._lock:
            self._id = None
            self._protocol_version = None
            self.stale = False

    def started(self, response: requests.Response) -> None:
        """Keep the session id the server gave in its answer to ``initialize``."""
        session_id = response.headers.get("Mcp-Session-Id")
        if session_id:
            with self._lock:
                self._id = session_id

    @property
    def modern(self) -> bool:
        """Whether requests go out at 2026-07-28 (no session; mirroring headers)."""
        return self._protocol_version == MODERN_VERSION

    def use_protocol_version(self, protocol_version: str) -> None:
        with self._lock:
            self._protocol_version = protocol_version

    def headers(self, *, accept: str) -> dict[str, str]:
        """The headers of the next request: the config's extras, ``Accept``, id and revision."""
        headers = dict(self._extra)
        headers["Accept"] = accept
        with self._lock:
            if self._id is not None:
                headers["Mcp-Session-Id"] = self._id
            if self._protocol_version is not None:
                headers["MCP-Protocol-Version"] = self._protocol_version
        return headers

    def check_gone(self, status: int, excerpt: str, *, had_session: bool) -> None:
        """Raise StaleSession (and drop the id) if an error answer says the session is gone."""
        if had_session and (status == 404 or (status == 400 and "session" in excerpt.lower())):
            log.info("MCP server %s no longer knows our session (HTTP %d)", self.server, status)
            with self._lock:
                self._id = None
            raise StaleSession(f"MCP server {self.server} answered {status}: session gone")

    def delete(self, session: requests.Session, url: str, auth: RequestAuth) -> None:
        """End the session on the server with DELETE (if there is one); failures are logged."""
        headers = self.headers(accept=ACCEPT_POST)
        with self._lock:
            held, self._id = self._id, None
        if held is None:
            return
        try:
            response = authorized_request(
                session,
                "DELETE",
                url,
                headers=headers,
                auth=auth,
                challenge=False,
                timeout=_DELETE_TIMEOUT,
            )
        except requests.RequestException as err:
            log.debug("DELETE of %s session failed: %s", self.server, type(err).__name__)
            return
        response.close()
        if response.status_code not in (200, 202, 204, 405):
            log.debug("DELETE of %s session answered %d", self.server, response.status_code)
