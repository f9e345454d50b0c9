"""The Bearer challenge of a 401 or 403: ``WWW-Authenticate`` parsed (RFC 9110, RFC 6750).

A server names what it wants in its challenge: ``resource_metadata`` (where
its RFC 9728 metadata is), ``scope`` (what the request needs), and ``error``
(``invalid_token``, ``insufficient_scope``). The header may hold several
challenges (``Basic realm="x", Bearer scope="a b"``) and quoted values with
escapes; only the Bearer one matters here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


@dataclass(frozen=True)
class BearerChallenge:
    """What a Bearer challenge asked for; ``scope`` is None when it named none."""

    error: str | None = None
    error_description: str | None = None
    scope: tuple[str, ...] | None = None
    resource_metadata: str | None = None

    @property
    def insufficient_scope(self) -> bool:
        return self.error == "insufficient_scope"


def bearer_challenge(header: str | None) -> BearerChallenge | None:
    """The Bearer challenge in a ``WWW-Authenticate`` value; None if there is none."""
    if not header:
        return None
    for scheme, params in _challenges(header):
        if scheme.lower() == "bearer":
            scope = params.get("scope")
            return BearerChallenge(
                error=params.get("error"),
                error_description=params.get("error_description"),
                scope=tuple(scope.split()) if scope is not None else None,
                resource_metadata=params.get("resource_metadata"),
            )
    return None


def asks_dpop_nonce(header: str | None) -> bool:
    """Whether the ``WWW-Authenticate`` value holds a DPoP challenge for a nonce (RFC 9449 §9)."""
    return bool(header) and any(
        scheme.lower() == "dpop" and params.get("error") == "use_dpop_nonce"
        for scheme, params in _challenges(header or "")
    )


def _challenges(header: str) -> list[tuple[str, dict[str, str]]]:
    """Every ``(scheme, params)`` in the header, params' names lower case."""
    found: list[tuple[str, dict[str, str]]] = []
    pos = 0
    size = len(header)
    while pos < size:
        pos = _skip(header, pos, " \t,")
        match = _TOKEN.match(header, pos)
        if match is None:
            break  # not a challenge: stop rather than guess
        scheme, params = match.group(), dict[str, str]()
        pos = _skip(header, match.end(), " \t")
        token68 = _TOKEN68.match(header, pos)
        after = _skip(header, token68.end(), " \t") if token68 else pos
        if token68 and header[after : after + 1] in ("", ","):
            pos = token68.end()  # ``Basic dXNlcjpw``: a token68, no params
        else:
            pos = _params(header, pos, params)
        found.append((scheme, params))
    return found


def _params(header: str, pos: int, params: dict[str, str]) -> int:
    """Read ``name=value`` pairs from ``pos``; return where the next challenge starts."""
    while True:
        start = _skip(header, pos, " \t,")
        name = _TOKEN.match(header, start)
        if name is None:
            return start
        after = _skip(header, name.end(), " \t")
        if header[after : after + 1] != "=":
            return start  # a bare token: the next challenge's scheme
        value_at = _skip(header, after + 1, " \t")
        if header[value_at : value_at + 1] == '"':
            value, pos = _quoted(header, value_at + 1)
        else:
            token = _TOKEN.match(header, value_at)
            value, pos = (token.group(), token.end()) if token else ("", value_at)
        params.setdefault(name.group().lower(), value)


def _quoted(header: str, pos: int) -> tuple[str, int]:
    """A quoted-string's value (escapes undone) and the position after its closing quote."""
    out: list[str] = []
    while pos < len(header):
        char = header[pos]
        if char == "\\" and pos + 1 < len(header):
            out.append(header[pos + 1])
            pos += 2
        elif char == '"':
            return "".join(out), pos + 1
        else:
            out.append(char)
            pos += 1
    return "".join(out), pos


def _skip(text: str, pos: int, chars: str) -> int:
    while pos < len(text) and text[pos] in chars:
        pos += 1
    return pos
