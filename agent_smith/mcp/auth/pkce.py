"""PKCE (RFC 7636) with S256, and the ``state`` value of an authorization request.

The verifier is 32 random bytes, base64url without padding (43 characters,
inside RFC 7636's 43-128); the challenge is the base64url SHA-256 of it.
Only ``secrets``, ``hashlib`` and ``base64``: no hand-written crypto.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Pkce:
    """One authorization request's PKCE pair (the verifier never shows in a repr)."""

    verifier: str = field(repr=False)
    challenge: str
    method: str = "S256"


def new_pkce() -> Pkce:
    """A fresh verifier and its S256 challenge."""
    verifier = _b64url(secrets.token_bytes(32))
    return Pkce(verifier, s256(verifier))


def s256(verifier: str) -> str:
    """The S256 code challenge of ``verifier``."""
    return _b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def new_state() -> str:
    """An unguessable ``state`` for one authorization request (CSRF protection)."""
    return secrets.token_urlsafe(24)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")
