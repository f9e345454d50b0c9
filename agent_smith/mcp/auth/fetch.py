"""The authorization's HTTP calls: metadata GETs and form or JSON POSTs, errors typed.

Everything goes through the runtime's ``requests.Session`` with a timeout.
Nothing here logs a body or a header that may hold a credential: token and
registration answers are parsed, never shown; an authorization server's
error answer is reduced to its ``error`` code and a short description.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import requests

from ..._internal.text import truncate_utf8
from ...errors import McpAuthError
from .dpop import USE_NONCE, DpopProofs

log = logging.getLogger(__name__)

_DESCRIPTION_BYTES = 200


class AuthHttp:
    """HTTP for one MCP server's authorization (``server`` names it in errors)."""

    def __init__(
        self,
        session: requests.Session,
        *,
        server: str,
        timeout: float,
        protocol_version: str | None = None,
    ) -> None:
        self.server = server
        self._session = session
        self._timeout = timeout
        #: Signs a DPoP proof for each POST once the server is known to take them.
        self.dpop: DpopProofs | None = None
        # MCP 2025-03-26 asks for the revision on metadata discovery; later ones allow it.
        self._discovery_headers = {"Accept": "application/json"}
        if protocol_version:
            self._discovery_headers["MCP-Protocol-Version"] = protocol_version

    def error(
        self, what: str, *, http_status: int | None = None, oauth_error: str | None = None
    ) -> McpAuthError:
        """A McpAuthError saying what failed for this server."""
        return McpAuthError(
            f"MCP server {self.server!r}: authorization failed: {what}",
            server=self.server,
            http_status=http_status,
            oauth_error=oauth_error,
        )

    def get_json(self, url: str) -> dict[str, Any] | None:
        """The JSON object at ``url``; None when the answer is not 200 with a JSON object.

        Raises McpAuthError when the server cannot be reached.
        """
        try:
            response = self._session.get(
                url, headers=self._discovery_headers, timeout=self._timeout
            )
        except requests.RequestException as err:
            raise self.error(f"GET {url} failed: {type(err).__name__}") from err
        with response:
            if response.status_code != 200:
                log.debug("GET %s answered %d", url, response.status_code)
                return None
            body = _json_object(response)
        if body is None:
            log.debug("GET %s gave no JSON object", url)
        return body

    def post(
        self,
        url: str,
        *,
        what: str,
        form: Mapping[str, str] | None = None,
        json: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """POST a form or JSON body; the JSON object of a 2xx answer.

        Raises McpAuthError for a failed exchange, an error answer (with its
        OAuth ``error`` code and description), or a body that is not a JSON
        object. ``what`` names the call in errors ("token request").
        """
        for _ in range(2):
            sent = {"Accept": "application/json", **(headers or {})}
            if self.dpop is not None:
                sent["DPoP"] = self.dpop.proof("POST", url)
            try:
                response = self._session.post(
                    url, data=form, json=json, headers=sent, timeout=self._timeout
                )
            except requests.RequestException as err:
                raise self.error(f"{what} to {url} failed: {type(err).__name__}") from err
            with response:
                body = _json_object(response)
                status = response.status_code
                fresh_nonce = self.dpop is not None and self.dpop.learn(url, response.headers)
            # RFC 9449 §8: the server wants its nonce in the proof; sign again once.
            if not (status == 400 and body and body.get("error") == USE_NONCE and fresh_nonce):
                break
        if not 200 <= status < 300:
            code = body.get("error") if body else None
            detail = f" {code}" if isinstance(code, str) else ""
            detail += described(body.get("error_description") if body else None)
            raise self.error(
                f"{what} answered HTTP {status}{detail}",
                http_status=status,
                oauth_error=code if isinstance(code, str) else None,
            )
        if body is None:
            raise self.error(f"{what} answered without a JSON object", http_status=status)
        return body


def described(description: object) -> str:
    """`` (description)`` of an OAuth error, on one line and cut short; "" when there is none."""
    if not isinstance(description, str) or not description:
        return ""
    return f" ({truncate_utf8(' '.join(description.split()), _DESCRIPTION_BYTES)})"


def _json_object(response: requests.Response) -> dict[str, Any] | None:
    try:
        body = response.json()
    except (ValueError, requests.RequestException):
        return None
    return body if isinstance(body, dict) else None
