"""Token endpoint requests: the authorization code, refresh and client-credentials grants.

Each builds the grant's form (with RFC 8707's ``resource`` when the server
named one, and the scope where the grant takes one), authenticates the client
(:mod:`.client_auth`) and turns the answer into :class:`~.tokens.OAuthTokens`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import ParseError
from .client_auth import authenticate
from .tokens import OAuthTokens, tokens_from_response

if TYPE_CHECKING:
    from .config import OAuthConfig
    from .discovery import ServerMetadata
    from .fetch import AuthHttp
    from .registration import ClientInfo


def exchange_code(
    http: AuthHttp,
    metadata: ServerMetadata,
    client: ClientInfo,
    config: OAuthConfig,
    *,
    code: str,
    verifier: str,
    redirect_uri: str,
    resource: str | None,
    scope: tuple[str, ...] | None,
) -> OAuthTokens:
    """Trade an authorization code (and its PKCE verifier) for tokens."""
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "code_verifier": verifier,
    }
    return _request(http, metadata, client, config, form, resource=resource, scope=scope)


def refresh(
    http: AuthHttp,
    metadata: ServerMetadata,
    client: ClientInfo,
    config: OAuthConfig,
    tokens: OAuthTokens,
    *,
    resource: str | None,
) -> OAuthTokens:
    """New tokens for ``tokens.refresh_token`` (same scope: a refresh cannot widen it)."""
    if tokens.refresh_token is None:
        raise http.error("no refresh token to renew the access token with")
    form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
    return _request(
        http, metadata, client, config, form, resource=resource, scope=tokens.scope, previous=tokens
    )


def client_credentials(
    http: AuthHttp,
    metadata: ServerMetadata,
    client: ClientInfo,
    config: OAuthConfig,
    *,
    resource: str | None,
    scope: tuple[str, ...] | None,
) -> OAuthTokens:
    """Tokens for the client itself (no user), as the client-credentials extension asks."""
    form = {"grant_type": "client_credentials"}
    if scope:
        form["scope"] = " ".join(scope)
    return _request(http, metadata, client, config, form, resource=resource, scope=scope)


def _request(
    http: AuthHttp,
    metadata: ServerMetadata,
    client: ClientInfo,
    config: OAuthConfig,
    form: dict[str, str],
    *,
    resource: str | None,
    scope: tuple[str, ...] | None,
    previous: OAuthTokens | None = None,
) -> OAuthTokens:
    if resource is not None:
        form["resource"] = resource
    return grant_tokens(
        http,
        metadata.token_endpoint,
        client,
        config,
        form,
        audience=metadata.issuer,
        scope=scope,
        previous=previous,
    )


def grant_tokens(
    http: AuthHttp,
    endpoint: str,
    client: ClientInfo,
    config: OAuthConfig,
    form: dict[str, str],
    *,
    audience: str,
    scope: tuple[str, ...] | None,
    previous: OAuthTokens | None = None,
) -> OAuthTokens:
    """POST a grant's ``form`` to a token ``endpoint``; the tokens its answer holds.

    ``scope`` is what was asked for (the tokens' scope when the answer names
    none); a refresh's ``previous`` tokens lend their refresh token.
    """
    body = post_grant(http, endpoint, client, config, form, audience=audience)
    try:
        return tokens_from_response(body, requested_scope=scope, previous=previous)
    except ParseError as err:
        raise http.error(f"token request ({form['grant_type']}): {err}") from err


def post_grant(
    http: AuthHttp,
    endpoint: str,
    client: ClientInfo,
    config: OAuthConfig,
    form: dict[str, str],
    *,
    audience: str,
) -> dict[str, Any]:
    """POST a grant's ``form`` to a token ``endpoint`` as ``client``; the answer's JSON."""
    headers = authenticate(
        form,
        client,
        audience=audience,
        private_key=config.private_key,
        algorithm=config.signing_algorithm,
    )
    what = f"token request ({form['grant_type']})"
    return http.post(endpoint, what=what, form=form, headers=headers)
