"""The client's identity at an authorization server: pre-registered, a metadata URL, or registered.

In MCP's order of preference:

1. **Pre-registered** credentials from :class:`~.config.OAuthConfig`
   (``client_id``, and ``client_secret`` or ``private_key`` for a
   confidential client).
2. A **Client ID Metadata Document**: when the server says
   ``client_id_metadata_document_supported`` and the config names
   ``client_metadata_url``, that URL is the client id (the server fetches the
   document; nothing is registered).
3. A registration made earlier, from the token store (per issuer), while it
   lists the redirect URI in use.
4. **Dynamic client registration** (RFC 7591) at the server's
   ``registration_endpoint``; the answer is kept in the token store.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ...errors import ParseError

if TYPE_CHECKING:
    from .config import OAuthConfig
    from .discovery import ServerMetadata
    from .fetch import AuthHttp
    from .storage import TokenStorage

log = logging.getLogger(__name__)

#: Token endpoint authentication methods this client can use.
AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none", "private_key_jwt")


@dataclass(frozen=True)
class ClientInfo:
    """A client id at one authorization server and how it authenticates there."""

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    token_endpoint_auth_method: str = "none"
    redirect_uris: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON form a token store keeps."""
        return {
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "token_endpoint_auth_method": self.token_endpoint_auth_method,
            "redirect_uris": list(self.redirect_uris),
        }

    @classmethod
    def from_dict(cls, data: Any) -> ClientInfo:
        """Read :meth:`to_dict`'s form (or a registration answer); ParseError if unusable."""
        if not isinstance(data, dict) or not isinstance(data.get("client_id"), str):
            raise ParseError("client registration has no client_id")
        secret = data.get("client_secret")
        method = data.get("token_endpoint_auth_method")
        uris = data.get("redirect_uris")
        return cls(
            client_id=data["client_id"],
            client_secret=secret if isinstance(secret, str) and secret else None,
            token_endpoint_auth_method=method if method in AUTH_METHODS else "",
            redirect_uris=tuple(u for u in uris if isinstance(u, str))
            if isinstance(uris, list)
            else (),
        )


def choose_auth_method(supported: tuple[str, ...], *, has_secret: bool) -> str:
    """How a client with (or without) a secret authenticates, given what the server supports."""
    if not has_secret:
        return "none"
    for method in ("client_secret_basic", "client_secret_post", "none"):
        if method in supported:
            return method
    return "client_secret_basic"


def client_for(
    http: AuthHttp,
    config: OAuthConfig,
    metadata: ServerMetadata,
    *,
    storage: TokenStorage,
    redirect_uri: str | None,
) -> ClientInfo:
    """The client identity to use at ``metadata``'s server (see the module docstring).

    Raises McpAuthError when registering fails or there is no way to get one.
    """
    supported = metadata.token_endpoint_auth_methods_supported
    uris = (redirect_uri,) if redirect_uri else ()
    if config.client_id is not None:
        if config.private_key is not None:
            method = "private_key_jwt"
        else:
            method = config.token_endpoint_auth_method or choose_auth_method(
                supported, has_secret=config.client_secret is not None
            )
        return ClientInfo(config.client_id, config.client_secret, method, uris)
    if config.client_metadata_url and metadata.client_id_metadata_document_supported:
        log.debug("%s: client id is the metadata document URL", http.server)
        return ClientInfo(config.client_metadata_url, None, "none", uris)
    stored = storage.load_client(metadata.issuer)
    if stored is not None and (redirect_uri is None or redirect_uri in stored.redirect_uris):
        return stored
    if metadata.registration_endpoint is None:
        raise http.error(
            "the authorization server offers no client registration; "
            "give OAuthConfig(client_id=...) for a client registered there"
        )
    client = _register(http, config, metadata.registration_endpoint, supported, uris=uris)
    storage.save_client(metadata.issuer, client)
    return client


def _register(
    http: AuthHttp,
    config: OAuthConfig,
    endpoint: str,
    supported: tuple[str, ...],
    *,
    uris: tuple[str, ...],
) -> ClientInfo:
    """Dynamic client registration (RFC 7591) as a native app: public if the server allows.

    ``uris`` are the redirect URIs to register (none for a grant without one).
    """
    wanted = "none" if "none" in supported else choose_auth_method(supported, has_secret=True)
    request: dict[str, Any] = {
        "client_name": config.client_name,
        "redirect_uris": list(uris),
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": wanted,
        "application_type": _application_type(uris),
    }
    body = http.post(endpoint, what="client registration", json=request)
    try:
        client = ClientInfo.from_dict(body)
    except ParseError as err:
        raise http.error("the client registration answer has no client_id") from err
    method = client.token_endpoint_auth_method or choose_auth_method(
        supported, has_secret=client.client_secret is not None
    )
    log.info("%s: registered a client at %s", http.server, endpoint)
    return ClientInfo(client.client_id, client.client_secret, method, client.redirect_uris or uris)


def _application_type(uris: tuple[str, ...]) -> str:
    """``native`` for loopback or private-scheme redirect URIs, ``web`` otherwise (SEP-837)."""
    hosts = {urlsplit(uri).hostname for uri in uris}
    return "native" if hosts <= {None, "127.0.0.1", "localhost", "::1"} else "web"
