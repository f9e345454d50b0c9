"""OAuthTokens: what a token endpoint granted, kept in memory or in a token store.

``expires_at`` is wall-clock time (seconds since the epoch) so a stored
token's expiry survives a restart. A token counts as expired a little early
(:data:`EXPIRY_MARGIN`) so it is renewed before a request can fail with it.
Tokens never show in a repr or an error message.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ...errors import ParseError

#: Seconds before ``expires_at`` at which a token is renewed.
EXPIRY_MARGIN = 30.0


@dataclass(frozen=True)
class OAuthTokens:
    """An access token (and maybe a refresh token) for one MCP server.

    ``scope`` is what was granted: the answer's ``scope``, else what was
    requested. ``expires_at`` is None when the server gave no lifetime.
    ``issuer`` is the authorization server that issued them (None in files
    written before it was kept): they are used with that issuer only.
    """

    access_token: str = field(repr=False)
    token_type: str = "Bearer"
    expires_at: float | None = None
    refresh_token: str | None = field(default=None, repr=False)
    scope: tuple[str, ...] | None = None
    issuer: str | None = None

    def expired(self, now: float | None = None) -> bool:
        """Whether the token is (nearly) expired."""
        if self.expires_at is None:
            return False
        return (time.time() if now is None else now) >= self.expires_at - EXPIRY_MARGIN

    @property
    def authorization(self) -> str:
        """The ``Authorization`` header value (``DPoP`` for a key-bound token)."""
        scheme = "DPoP" if self.token_type.lower() == "dpop" else "Bearer"
        return f"{scheme} {self.access_token}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form a token store keeps."""
        return {
            "access_token": self.access_token,
            "token_type": self.token_type,
            "expires_at": self.expires_at,
            "refresh_token": self.refresh_token,
            "scope": list(self.scope) if self.scope is not None else None,
            "issuer": self.issuer,
        }

    @classmethod
    def from_dict(cls, data: Any) -> OAuthTokens:
        """Read :meth:`to_dict`'s form back; ParseError if it is not that."""
        if not isinstance(data, dict) or not isinstance(data.get("access_token"), str):
            raise ParseError("stored OAuth tokens have no access_token")
        scope = data.get("scope")
        expires = data.get("expires_at")
        refresh = data.get("refresh_token")
        issuer = data.get("issuer")
        return cls(
            access_token=data["access_token"],
            token_type=str(data.get("token_type") or "Bearer"),
            expires_at=float(expires) if isinstance(expires, (int, float)) else None,
            refresh_token=refresh if isinstance(refresh, str) else None,
            scope=tuple(str(s) for s in scope) if isinstance(scope, list) else None,
            issuer=issuer if isinstance(issuer, str) else None,
        )


def tokens_from_response(
    body: dict[str, Any],
    *,
    requested_scope: tuple[str, ...] | None,
    previous: OAuthTokens | None = None,
    now: float | None = None,
) -> OAuthTokens:
    """The tokens in a token endpoint's answer (RFC 6749 §5.1).

    A refresh that brings no new refresh token keeps ``previous``'s.
    Raises ParseError when the answer has no usable Bearer (or DPoP) access token.
    """
    access = body.get("access_token")
    token_type = body.get("token_type", "Bearer")
    if not isinstance(access, str) or not access:
        raise ParseError("the token answer has no access_token")
    if not isinstance(token_type, str) or token_type.lower() not in ("bearer", "dpop"):
        raise ParseError(f"the token answer's token_type is {token_type!r}, not Bearer or DPoP")
    lifetime = body.get("expires_in")
    expires_at = None
    if isinstance(lifetime, (int, float)) and not isinstance(lifetime, bool) and lifetime > 0:
        expires_at = (time.time() if now is None else now) + float(lifetime)
    refresh = body.get("refresh_token")
    if not isinstance(refresh, str) or not refresh:
        refresh = previous.refresh_token if previous is not None else None
    granted = body.get("scope")
    scope = tuple(granted.split()) if isinstance(granted, str) else requested_scope
    kind = "DPoP" if token_type.lower() == "dpop" else "Bearer"
    return OAuthTokens(access, kind, expires_at, refresh, scope)
