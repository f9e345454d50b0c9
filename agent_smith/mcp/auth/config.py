"""OAuthConfig: how to authorize with an OAuth-protected MCP server.

``ServerConfig(url=..., auth=OAuthConfig())`` is enough for a server that
supports dynamic registration or client metadata documents: the first 401
starts discovery, the user's browser opens for consent, and the redirect is
caught on a loopback port (:mod:`.loopback`). The fields name what a
particular server needs beyond that: a pre-registered client, scopes, where
tokens are kept, or the client-credentials grant for machine-to-machine use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ...errors import ConfigError
from .enterprise import EnterpriseIdp
from .registration import AUTH_METHODS
from .storage import FileTokenStorage, TokenStorage

#: Shows the user the authorization URL and returns the URL the server redirected to.
AuthorizationHandler = Callable[[str], str]

GRANTS = ("authorization_code", "client_credentials", "enterprise", "jwt_bearer")
SIGNING_ALGORITHMS = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256")


@dataclass(frozen=True)
class OAuthConfig:
    """OAuth 2.1 settings for one MCP server (MCP authorization, 2025-03-26 to 2025-11-25).

    Client identity, in order of preference: ``client_id`` (with
    ``client_secret``, or ``private_key`` for a JWT assertion) for a client
    registered beforehand; ``client_metadata_url``, an https URL serving this
    client's metadata document, used as the client id where the server
    supports that; else dynamic registration under ``client_name``.

    ``scopes`` overrides MCP's scope selection (the challenge's ``scope``,
    else the server's ``scopes_supported``, else none). ``grant`` is
    ``authorization_code`` (a user consents in a browser),
    ``client_credentials`` (no user: needs ``client_id`` and a secret or
    key) or ``enterprise`` (the user's enterprise sign-on, SEP-990: needs
    ``client_id`` and ``enterprise_idp``) or ``jwt_bearer`` (workload identity,
    SEP-1933: the platform's JWT for this workload, ``assertion``, a string or
    a function returning a fresh one, presented with RFC 7523's JWT bearer
    grant). ``dpop``: bind tokens to a key (RFC 9449) when the authorization
    server offers it (None, the default: if PyJWT with cryptography is
    installed; True: require the extra; False: never). ``authorization_handler(url) ->
    redirect_url`` replaces the default browser-and-loopback handler; a
    plain function needs ``redirect_uri``.
    ``storage`` keeps tokens and registrations (default: in memory); pass
    ``FileTokenStorage(path)`` to keep them across runs. A server may ask for
    more scopes (a 403 ``insufficient_scope``): each request authorizes at
    most ``max_authorizations`` times. ``timeout`` bounds each HTTP call to
    the authorization server.
    """

    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    client_metadata_url: str | None = None
    client_name: str = "agent_smith"
    scopes: tuple[str, ...] | None = None
    grant: str = "authorization_code"
    authorization_handler: AuthorizationHandler | None = None
    redirect_uri: str | None = None
    storage: TokenStorage | None = None
    token_endpoint_auth_method: str | None = None
    private_key: str | None = field(default=None, repr=False)
    signing_algorithm: str = "RS256"
    max_authorizations: int = 3
    timeout: float = 30.0
    enterprise_idp: EnterpriseIdp | None = None
    assertion: str | Callable[[], str] | None = field(default=None, repr=False)
    dpop: bool | None = None

    def __post_init__(self) -> None:
        if isinstance(self.scopes, (list, str)):
            scopes = self.scopes.split() if isinstance(self.scopes, str) else self.scopes
            object.__setattr__(self, "scopes", tuple(scopes))
        if self.scopes is not None and not all(
            isinstance(s, str) and s and not any(c.isspace() for c in s) for s in self.scopes
        ):
            raise ConfigError("OAuthConfig: 'scopes' must be scope names without spaces")
        if self.grant not in GRANTS:
            raise ConfigError(f"OAuthConfig: 'grant' must be one of {', '.join(GRANTS)}")
        if self.grant == "client_credentials" and (
            self.client_id is None or (self.client_secret is None and self.private_key is None)
        ):
            raise ConfigError(
                "OAuthConfig: the client_credentials grant needs client_id and "
                "client_secret or private_key"
            )
        if self.grant == "enterprise" and (self.client_id is None or self.enterprise_idp is None):
            raise ConfigError(
                "OAuthConfig: the enterprise grant needs client_id and enterprise_idp"
            )
        if self.grant == "jwt_bearer" and (self.client_id is None or self.assertion is None):
            raise ConfigError("OAuthConfig: the jwt_bearer grant needs client_id and assertion")
        if self.enterprise_idp is not None and not isinstance(self.enterprise_idp, EnterpriseIdp):
            raise ConfigError("OAuthConfig: 'enterprise_idp' must be an EnterpriseIdp")
        if self.private_key is not None and self.client_id is None:
            raise ConfigError("OAuthConfig: 'private_key' needs 'client_id'")
        if self.signing_algorithm not in SIGNING_ALGORITHMS:
            raise ConfigError(
                f"OAuthConfig: 'signing_algorithm' must be one of {', '.join(SIGNING_ALGORITHMS)}"
            )
        method = self.token_endpoint_auth_method
        if method is not None and method not in AUTH_METHODS:
            raise ConfigError(
                f"OAuthConfig: 'token_endpoint_auth_method' must be one of "
                f"{', '.join(AUTH_METHODS)}"
            )
        if self.client_metadata_url is not None:
            parts = urlsplit(self.client_metadata_url)
            if parts.scheme != "https" or parts.path in ("", "/"):
                raise ConfigError(
                    "OAuthConfig: 'client_metadata_url' must be an https URL with a path"
                )
        if self.redirect_uri is not None and not urlsplit(self.redirect_uri).scheme:
            raise ConfigError("OAuthConfig: 'redirect_uri' must be an absolute URI")
        handler = self.authorization_handler
        if handler is not None and not callable(handler):
            raise ConfigError("OAuthConfig: 'authorization_handler' must be callable")
        if (
            self.grant == "authorization_code"
            and handler is not None
            and self.redirect_uri is None
            and getattr(handler, "redirect_uri", None) is None
        ):
            raise ConfigError(
                "OAuthConfig: an authorization_handler function needs 'redirect_uri' "
                "(the URL the authorization server redirects to)"
            )
        if self.storage is not None and not isinstance(self.storage, TokenStorage):
            raise ConfigError("OAuthConfig: 'storage' must implement TokenStorage")
        if isinstance(self.max_authorizations, bool) or not (
            isinstance(self.max_authorizations, int) and self.max_authorizations >= 1
        ):
            raise ConfigError("OAuthConfig: 'max_authorizations' must be a positive integer")
        if not self.timeout > 0:
            raise ConfigError("OAuthConfig: 'timeout' must be positive")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OAuthConfig:
        """Build a config from a plain dict (a skill manifest's ``auth``).

        Takes the string, list and number fields, and ``token_file`` (a path
        for :class:`FileTokenStorage`); secrets and handlers belong in code.
        """
        if not isinstance(data, Mapping):
            raise ConfigError("MCP server config: 'auth' must be an object")
        unknown = sorted(str(k) for k in data if k not in _MANIFEST_TYPES)
        if unknown:
            raise ConfigError(f"MCP server config: unknown 'auth' key {unknown[0]!r}")
        for key, value in data.items():
            if isinstance(value, bool) or not isinstance(value, _MANIFEST_TYPES[key]):
                raise ConfigError(f"MCP server config: 'auth.{key}' has the wrong type")
        kwargs = dict(data)
        token_file = kwargs.pop("token_file", None)
        if token_file is not None:
            kwargs["storage"] = FileTokenStorage(token_file)
        return cls(**kwargs)


#: The keys a manifest's ``auth`` object may hold, and their JSON types.
_MANIFEST_TYPES: dict[str, type | tuple[type, ...]] = {
    "client_id": str,
    "client_metadata_url": str,
    "client_name": str,
    "scopes": (list, str),
    "grant": str,
    "redirect_uri": str,
    "token_endpoint_auth_method": str,
    "max_authorizations": int,
    "timeout": (int, float),
    "token_file": str,
}
