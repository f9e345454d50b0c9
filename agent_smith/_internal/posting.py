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
        self._templates: dict[tuple[tuple[str, str], ...], requests.PreparedRequest] = {}

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
        prepared = self._prepared(session, headers, auth, data)
        return session.send(
            prepared, timeout=timeout, allow_redirects=True, **{**settings, "stream": stream}
        )

    def _prepared(
        self,
        session: requests.Session,
        headers: Mapping[str, str],
        auth: Callable[..., Any] | None,
        data: bytes,
    ) -> requests.PreparedRequest:
        """The request as ``session.prepare_request`` builds it.

        Preparing merges the session's headers, cookies and hooks through
        several generic helpers (~0.1 ms); with no cookies in the session and
        headers seen before, a copy of the request prepared then is the same
        request with another body.
        """
        key = tuple(headers.items())
        if session.cookies or "traceparent" in headers:  # cookies change; trace ids do
            template = None
        else:
            with self._lock:
                template = self._templates.get(key)
        if template is None:
            request = requests.Request(
                "POST", self._url, data=data, headers=dict(headers), auth=auth
            )
            prepared = session.prepare_request(request)
            if not session.cookies and "traceparent" not in headers and len(self._templates) < 8:
                kept = prepared.copy()
                kept.body = None  # each request brings its own: never hold on to a large one
                with self._lock:
                    self._templates[key] = kept
            return prepared
        prepared = template.copy()
        prepared.body = data
        prepared.headers["Content-Length"] = str(len(data))
        return prepared

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
                self._templates = {}
                self._session = session
            return self._settings, self._auth
