"""POSTing to one URL through a ``requests.Session``, reading the environment once.

``Session.post`` looks at the environment on every request (``trust_env``):
proxy variables, ``NO_PROXY``, the CA bundle variables and ``~/.netrc``.
That lookup walks ``os.environ`` several times and costs more than the rest
of the request's preparation (measured: ~0.4 ms of a loaded 2-core
machine's time per request; an agent turn makes two). :class:`Poster` does
the lookup once per URL and session and then sends prepared requests with
the settings it found, so a request behaves exactly as ``Session.post``
would, except that changes to those variables (or to ``~/.netrc``) made
after the first request are not seen.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

import requests
from requests.utils import get_netrc_auth


def _as_is(request: requests.PreparedRequest) -> requests.PreparedRequest:
    """No authentication (and no ``~/.netrc`` lookup, which a falsy auth would trigger)."""
    return request


class Poster:
    """``session.post(url, ...)`` with the session's environment settings read once."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._lock = threading.Lock()
        self._session: requests.Session | None = None
        self._settings: Mapping[str, Any] = {}
        self._auth: Any = None

    def post(
        self,
        session: requests.Session,
        *,
        data: bytes,
        headers: Mapping[str, str],
        timeout: float,
        stream: bool,
    ) -> requests.Response:
        """POST ``data`` as ``Session.post`` would (redirects followed); the response."""
        settings, auth = self._for(session)
        request = requests.Request("POST", self._url, data=data, headers=dict(headers), auth=auth)
        prepared = session.prepare_request(request)
        return session.send(
            prepared, timeout=timeout, allow_redirects=True, **{**settings, "stream": stream}
        )

    def _for(
        self, session: requests.Session
    ) -> tuple[Mapping[str, Any], Callable[..., Any] | None]:
        with self._lock:
            if session is not self._session:
                self._settings = session.merge_environment_settings(self._url, {}, None, None, None)
                if session.auth or not session.trust_env:
                    self._auth = None  # the session's own auth applies; no ~/.netrc lookup
                else:
                    self._auth = get_netrc_auth(self._url) or _as_is
                self._session = session
            return self._settings, self._auth
