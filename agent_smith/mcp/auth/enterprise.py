"""JWT bearer grants: enterprise-managed authorization (SEP-990) and workload identity (SEP-1933).

The client already holds an ID token from the user's single sign-on at the
enterprise identity provider. Two token requests turn it into an access
token for the MCP server:

1. at the identity provider, an RFC 8693 token exchange of the ID token for
   an Identity Assertion JWT Authorization Grant (ID-JAG) whose audience is
   the MCP server's authorization server and whose resource is the server;
2. at that authorization server, an RFC 7523 JWT bearer grant presenting
   the ID-JAG, the client authenticating with its own credentials there.

A workload (a job in a cloud, a CI runner) skips the first step: its
platform hands it a JWT naming it, which it presents directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .registration import ClientInfo, choose_auth_method
from .token_endpoint import grant_tokens, post_grant

if TYPE_CHECKING:
    from .config import OAuthConfig
    from .discovery import Discovered
    from .fetch import AuthHttp
    from .tokens import OAuthTokens

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


@dataclass(frozen=True)
class EnterpriseIdp:
    """The enterprise identity provider: its token endpoint, the user's ID token, our id there."""

    token_endpoint: str
    id_token: str = field(repr=False)
    client_id: str
    client_secret: str | None = field(default=None, repr=False)


def enterprise_tokens(
    http: AuthHttp,
    found: Discovered,
    client: ClientInfo,
    config: OAuthConfig,
    idp: EnterpriseIdp,
    *,
    scope: tuple[str, ...] | None,
) -> OAuthTokens:
    """Exchange the ID token for an ID-JAG at ``idp``, then the ID-JAG for tokens."""
    at_idp = ClientInfo(
        idp.client_id,
        idp.client_secret,
        choose_auth_method(("client_secret_basic",), has_secret=idp.client_secret is not None),
    )
    exchange = {
        "grant_type": TOKEN_EXCHANGE,
        "requested_token_type": ID_JAG,
        "subject_token": idp.id_token,
        "subject_token_type": ID_TOKEN,
        "audience": found.server.issuer,
    }
    if found.resource is not None:
        exchange["resource"] = found.resource
    if scope:
        exchange["scope"] = " ".join(scope)
    answer = post_grant(
        http, idp.token_endpoint, at_idp, config, exchange, audience=idp.token_endpoint
    )
    grant = answer.get("access_token")
    if not isinstance(grant, str) or answer.get("issued_token_type") != ID_JAG:
        raise http.error("the identity provider's token exchange gave no ID-JAG")
    # The ID-JAG goes to the MCP server's authorization server as a JWT bearer grant.
    return workload_tokens(http, found, client, config, grant, scope=scope)


def workload_tokens(
    http: AuthHttp,
    found: Discovered,
    client: ClientInfo,
    config: OAuthConfig,
    assertion: str,
    *,
    scope: tuple[str, ...] | None,
) -> OAuthTokens:
    """Workload identity (SEP-1933): the platform's JWT for this workload, as a JWT bearer grant.

    A refused grant is final: the caller reports it, never retrying or
    switching to another grant.
    """
    bearer = {"grant_type": JWT_BEARER, "assertion": assertion}
    if scope:
        bearer["scope"] = " ".join(scope)
    return grant_tokens(
        http,
        found.server.token_endpoint,
        client,
        config,
        bearer,
        audience=found.server.issuer,
        scope=scope,
    )
