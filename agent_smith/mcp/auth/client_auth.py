"""How the client authenticates at the token endpoint (RFC 6749 §2.3, RFC 7523 §2.2).

- ``client_secret_basic``: HTTP Basic with the id and secret, each
  percent-encoded first as RFC 6749 §2.3.1 asks;
- ``client_secret_post``: both in the form;
- ``none``: a public client sends its ``client_id`` only;
- ``private_key_jwt``: a short-lived JWT signed with the client's private key
  (``iss`` = ``sub`` = the client id, ``aud`` = the authorization server's
  issuer). Signing uses PyJWT (the optional extra ``oauth-jwt``), imported
  only here and only when needed.
"""

from __future__ import annotations

import base64
import secrets
import time
from typing import TYPE_CHECKING
from urllib.parse import quote

from ..._internal.extras import install_hint
from ...errors import ConfigError

if TYPE_CHECKING:
    from .registration import ClientInfo

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
_ASSERTION_LIFETIME = 300  # seconds


def authenticate(
    form: dict[str, str],
    client: ClientInfo,
    *,
    audience: str,
    private_key: str | None = None,
    algorithm: str = "RS256",
) -> dict[str, str]:
    """Add ``client``'s credentials to a token request's ``form``; return headers to send.

    ``audience`` is the authorization server's issuer (a JWT assertion's
    ``aud``). Raises ConfigError when a JWT assertion cannot be made.
    """
    method = client.token_endpoint_auth_method
    if method == "private_key_jwt":
        if private_key is None:
            raise ConfigError("private_key_jwt authentication needs OAuthConfig(private_key=...)")
        form["client_id"] = client.client_id
        form["client_assertion_type"] = ASSERTION_TYPE
        form["client_assertion"] = client_assertion(
            client.client_id, audience=audience, private_key=private_key, algorithm=algorithm
        )
        return {}
    if method == "client_secret_basic" and client.client_secret is not None:
        pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
        return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode("ascii")}
    form["client_id"] = client.client_id
    if method == "client_secret_post" and client.client_secret is not None:
        form["client_secret"] = client.client_secret
    return {}


def client_assertion(client_id: str, *, audience: str, private_key: str, algorithm: str) -> str:
    """A signed JWT asserting ``client_id`` to ``audience`` (RFC 7523 §3)."""
    try:
        import jwt
    except ImportError as err:
        raise ConfigError(
            f"private_key_jwt needs PyJWT with cryptography: {install_hint('oauth-jwt')}"
        ) from err
    now = int(time.time())
    claims = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + _ASSERTION_LIFETIME,
        "jti": secrets.token_urlsafe(16),
    }
    try:
        return jwt.encode(claims, private_key, algorithm=algorithm)
    except (ValueError, TypeError, jwt.PyJWTError) as err:
        # The message names the problem, never the key.
        raise ConfigError(
            f"cannot sign the client assertion with {algorithm}: {type(err).__name__}"
        ) from err
