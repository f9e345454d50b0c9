"""The authorization code request: the URL the user consents at, and the redirect back.

The URL carries PKCE S256, an unguessable ``state``, the scope (omitted when
there is none to ask for) and RFC 8707's ``resource``. The authorization
handler shows it to the user and returns the URL the server redirected to;
its ``state`` must match (CSRF), its ``iss`` (RFC 9207) must be exactly the
issuer asked (and be there when the server's metadata promises it), and an
``error`` there is the user's or the server's refusal. The code itself
never reaches a log or an error message.
"""

from __future__ import annotations

import hmac
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

from ...errors import AgentSmithError
from .fetch import described
from .pkce import Pkce, new_pkce, new_state

if TYPE_CHECKING:
    from .config import AuthorizationHandler
    from .discovery import ServerMetadata
    from .fetch import AuthHttp

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Granted:
    """The code the redirect brought and the PKCE pair it was asked with."""

    code: str = field(repr=False)
    pkce: Pkce


def request_code(
    http: AuthHttp,
    metadata: ServerMetadata,
    *,
    client_id: str,
    handler: AuthorizationHandler,
    redirect_uri: str,
    scope: tuple[str, ...] | None,
    resource: str | None,
) -> Granted:
    """Send the user to ``metadata``'s authorization endpoint and read the code from the redirect.

    Raises McpAuthError when the server cannot do PKCE S256, the handler
    fails, or the redirect carries an error, a foreign ``state`` or no code.
    """
    endpoint = metadata.authorization_endpoint
    if endpoint is None:
        raise http.error("the authorization server has no authorization_endpoint")
    methods = metadata.code_challenge_methods_supported
    if ("S256" not in methods) if methods is not None else not metadata.legacy:
        # MCP: a client must refuse a server that does not say it supports S256.
        raise http.error("the authorization server does not support PKCE with S256")
    pkce, state = new_pkce(), new_state()
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": pkce.challenge,
        "code_challenge_method": pkce.method,
        "state": state,
    }
    if scope:
        query["scope"] = " ".join(scope)
    if resource is not None:
        query["resource"] = resource
    url = _with_query(endpoint, query)
    log.info("MCP server %s: asking for the user's consent at %s", http.server, endpoint)
    try:
        redirect = handler(url)
    except AgentSmithError:
        raise
    except Exception as err:  # a user's handler: whatever it raises becomes our typed error
        raise http.error(f"the authorization handler failed: {type(err).__name__}") from err
    return Granted(_code_from(http, metadata, redirect, state), pkce)


def _code_from(http: AuthHttp, metadata: ServerMetadata, redirect: str, state: str) -> str:
    if not isinstance(redirect, str):
        raise http.error("the authorization handler returned no redirect URL")
    params = {k: v[0] for k, v in parse_qs(urlsplit(redirect).query).items() if v}
    error = params.get("error")
    if error is not None:
        detail = described(params.get("error_description"))
        raise http.error(f"the authorization server refused: {error}{detail}", oauth_error=error)
    if not hmac.compare_digest(params.get("state", ""), state):
        raise http.error("the redirect's state does not match the request (possible CSRF)")
    issuer = params.get("iss")
    if issuer is None and metadata.iss_parameter_supported:
        raise http.error("the redirect lacks the iss its authorization server promised (RFC 9207)")
    if issuer is not None and issuer != metadata.issuer:  # RFC 9207: compared as is, not normalized
        raise http.error("the redirect came from another authorization server (iss mismatch)")
    code = params.get("code")
    if not code:
        raise http.error("the redirect carries no authorization code")
    return code


def _with_query(url: str, extra: dict[str, str]) -> str:
    """``url`` with ``extra`` added to whatever query it already has."""
    parts = urlsplit(url)
    query = f"{parts.query}&{urlencode(extra)}" if parts.query else urlencode(extra)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))
