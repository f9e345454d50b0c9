"""OAuth 2.1 for MCP servers over HTTP (the MCP authorization spec, 2025-03-26 to 2025-11-25).

One concept per module: :mod:`.config` (OAuthConfig), :mod:`.provider` (the
transports' OAuthProvider), :mod:`.challenge` (WWW-Authenticate),
:mod:`.discovery` (RFC 9728 and RFC 8414 metadata), :mod:`.urls`,
:mod:`.registration` (pre-registered, metadata documents, RFC 7591),
:mod:`.authorization_code` and :mod:`.pkce`, :mod:`.token_endpoint` and
:mod:`.client_auth`, :mod:`.enterprise` (SEP-990), :mod:`.tokens`,
:mod:`.storage`, :mod:`.loopback` (the default browser handler) and
:mod:`.fetch` (its HTTP).
"""

from __future__ import annotations

from .config import AuthorizationHandler, OAuthConfig
from .enterprise import EnterpriseIdp
from .loopback import LoopbackAuthorization
from .registration import ClientInfo
from .storage import FileTokenStorage, InMemoryTokenStorage, TokenStorage
from .tokens import OAuthTokens

__all__ = [
    "AuthorizationHandler",
    "ClientInfo",
    "EnterpriseIdp",
    "FileTokenStorage",
    "InMemoryTokenStorage",
    "LoopbackAuthorization",
    "OAuthConfig",
    "OAuthTokens",
    "TokenStorage",
]
