"""The HTTP edge of the web app: responses, JSON bodies within a size limit, cross-site checks.

Plain WSGI, no framework: :class:`Response` is a whole answer (status,
headers, body); :func:`read_json` reads a request body that must be JSON,
refusing a body over the limit (413), another content type (415) and JSON
that does not parse (400), each with a JSON ``{"error": "..."}`` body;
:func:`cross_site_refusal` says why a state-changing request must be refused
as cross-site.

Cross-site requests. A browser tells where a request comes from
(``Sec-Fetch-Site``, else ``Origin``); a request from another site is refused
unless its origin is listed in ``allowed_origins``. Requests without either
header come from no browser page (curl, a server, the Node clients) and pass:
they carry no user's cookies by accident. POST bodies must also be
``application/json``, which a cross-site HTML form cannot send and a
cross-site ``fetch`` can send only after a CORS preflight this app never
grants.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

JSON_TYPE = "application/json"
#: WSGI's ``start_response(status, headers)``.
StartResponse = Callable[..., Any]


@dataclass(frozen=True)
class Response:
    """A whole HTTP answer."""

    status: int
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = field(default=())

    @property
    def status_line(self) -> str:
        return status_line(self.status)


def status_line(status: int) -> str:
    """``"200 OK"`` for 200."""
    return f"{status} {HTTPStatus(status).phrase}"


def json_response(status: int, data: Any, *, headers: Iterable[tuple[str, str]] = ()) -> Response:
    """A JSON answer (never cached: conversations change)."""
    body = json.dumps(data, ensure_ascii=False).encode()
    return Response(
        status,
        body,
        (("Content-Type", JSON_TYPE), ("Cache-Control", "no-store"), *headers),
    )


def error_response(status: int, message: str) -> Response:
    """A JSON error answer: ``{"error": message}``."""
    return json_response(status, {"error": message})


class Refused(Exception):
    """Internal to the web app: stop handling the request and send ``response``."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.status)
        self.response = response


def read_json(environ: dict[str, Any], *, limit: int) -> Any:
    """The request body parsed as JSON; Refused (413, 415 or 400) if it cannot be."""
    kind = environ.get("CONTENT_TYPE", "").split(";", 1)[0].strip().lower()
    if kind != JSON_TYPE:
        raise Refused(error_response(415, f"the request body must be {JSON_TYPE}"))
    length_header = environ.get("CONTENT_LENGTH") or ""
    try:
        length = int(length_header) if length_header else -1
    except ValueError:
        raise Refused(error_response(400, "Content-Length is not a number")) from None
    if length > limit:
        raise Refused(error_response(413, f"the request body is over {limit} bytes"))
    stream = environ["wsgi.input"]
    raw = stream.read(length) if length >= 0 else stream.read(limit + 1)
    if len(raw) > limit:
        raise Refused(error_response(413, f"the request body is over {limit} bytes"))
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as err:
        raise Refused(error_response(400, f"the request body is not valid JSON ({err})")) from None


def cross_site_refusal(environ: dict[str, Any], allowed_origins: Collection[str]) -> str | None:
    """Why this request must be refused as cross-site, or None (see the module doc)."""
    origin = environ.get("HTTP_ORIGIN")
    if origin is not None and origin in allowed_origins:
        return None
    site = environ.get("HTTP_SEC_FETCH_SITE")
    if site is not None:
        if site in ("same-origin", "none"):
            return None
        return f"cross-site request refused (Sec-Fetch-Site: {site})"
    if origin is None:
        return None
    host = environ.get("HTTP_HOST", "")
    if urlsplit(origin).netloc.lower() != host.lower():
        return f"cross-site request refused (Origin {origin} is not this site)"
    return None
