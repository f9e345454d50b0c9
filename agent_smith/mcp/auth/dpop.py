"""DPoP (RFC 9449, MCP extension SEP-1932): tokens bound to a key only this client holds.

When the authorization server lists ES256 in ``dpop_signing_alg_values_supported``
(and ``OAuthConfig.dpop`` is not False), the client makes a P-256 key pair
for the connection and signs a fresh proof JWT for every token request and
every request to the MCP server: the method, the URL (without query and
fragment), the time, a unique id and, with a token, its hash (``ath``). The
token it gets is a ``DPoP`` token, sent as ``Authorization: DPoP <token>``
next to the proof; a stolen token is useless without the key.

A server may require a nonce it chose: the authorization server answers
400 ``use_dpop_nonce``, the MCP server 401 with a ``DPoP`` challenge of that
error, both with the nonce in ``DPoP-Nonce``; the client signs again with it
(once per request) and keeps each server's latest nonce.

Signing uses PyJWT with ``cryptography`` (the optional extra ``oauth-jwt``),
imported on first use.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..._internal.extras import install_hint
from ...errors import ConfigError

ALGORITHM = "ES256"
NONCE_HEADER = "DPoP-Nonce"
USE_NONCE = "use_dpop_nonce"


def dpop_available() -> bool:
    """Whether PyJWT with ``cryptography`` is installed (DPoP needs both)."""
    try:
        import jwt  # noqa: F401
        from cryptography.hazmat.primitives.asymmetric import ec  # noqa: F401
    except ImportError:
        return False
    return True


class DpopProofs:
    """One key pair and the nonces servers gave; signs proofs (thread-safe)."""

    def __init__(self) -> None:
        try:
            from cryptography.hazmat.primitives.asymmetric import ec
        except ImportError as err:
            raise ConfigError(
                f"DPoP needs PyJWT with cryptography: {install_hint('oauth-jwt')}"
            ) from err
        self._key = ec.generate_private_key(ec.SECP256R1())
        numbers = self._key.public_key().public_numbers()
        self.jwk = {
            "kty": "EC",
            "crv": "P-256",
            "x": _b64(numbers.x.to_bytes(32, "big")),
            "y": _b64(numbers.y.to_bytes(32, "big")),
        }
        self._lock = threading.Lock()
        self._nonces: dict[str, str] = {}  # by origin

    def proof(self, method: str, url: str, *, access_token: str | None = None) -> str:
        """A fresh proof for ``method`` on ``url`` (bound to ``access_token`` when given)."""
        import jwt

        target = _htu(url)
        claims: dict[str, Any] = {
            "jti": str(uuid.uuid4()),
            "htm": method.upper(),
            "htu": target,
            "iat": int(time.time()),
        }
        with self._lock:
            nonce = self._nonces.get(_origin(url))
        if nonce is not None:
            claims["nonce"] = nonce
        if access_token is not None:
            claims["ath"] = _b64(hashlib.sha256(access_token.encode("ascii")).digest())
        headers = {"typ": "dpop+jwt", "alg": ALGORITHM, "jwk": self.jwk}
        return jwt.encode(claims, self._key, algorithm=ALGORITHM, headers=headers)

    def learn(self, url: str, headers: Mapping[str, str]) -> bool:
        """Keep the nonce an answer from ``url`` carries; True if it is a new one."""
        nonce = headers.get(NONCE_HEADER)
        if not nonce:
            return False
        with self._lock:
            origin = _origin(url)
            new = self._nonces.get(origin) != nonce
            self._nonces[origin] = nonce
            return new

    def thumbprint(self) -> str:
        """The key's RFC 7638 thumbprint (what a server binds the token to)."""
        canonical = json.dumps(
            {k: self.jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":")
        )
        return _b64(hashlib.sha256(canonical.encode()).digest())


def _htu(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")
