"""The URLs OAuth discovery works with: canonical resource ids and well-known locations.

- :func:`canonical_resource`: the MCP server's identifier for RFC 8707's
  ``resource`` parameter and for token storage (scheme and host lower case,
  no default port, no fragment, no trailing slash).
- :func:`resource_metadata_urls`: where RFC 9728 protected resource metadata
  may be, most specific first (path-inserted, then the origin's).
- :func:`server_metadata_urls`: where RFC 8414 / OpenID Connect discovery
  metadata of an authorization server may be, in the order MCP prescribes.
- :func:`resource_covers`: whether a metadata document's ``resource`` is the
  server or a parent of it (same origin, path prefix), so a document naming
  another resource is refused.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}
RESOURCE_WELL_KNOWN = "/.well-known/oauth-protected-resource"
OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OPENID_WELL_KNOWN = "/.well-known/openid-configuration"


def canonical_resource(url: str) -> str:
    """``url`` in canonical form (see the module docstring); the query is kept."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    port = parts.port
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url`` (canonical form)."""
    parts = urlsplit(canonical_resource(url))
    return f"{parts.scheme}://{parts.netloc}"


def resource_metadata_urls(server_url: str) -> list[str]:
    """Protected resource metadata locations for ``server_url``: path-inserted, then root."""
    base = origin(server_url)
    path = urlsplit(canonical_resource(server_url)).path
    urls = [f"{base}{RESOURCE_WELL_KNOWN}{path}"] if path else []
    return [*urls, f"{base}{RESOURCE_WELL_KNOWN}"]


def server_metadata_urls(issuer: str) -> list[str]:
    """Authorization server metadata locations for ``issuer``, in MCP's order.

    With a path (``https://auth.example.com/tenant1``): OAuth with the path
    inserted, OpenID Connect with the path inserted, OpenID Connect with the
    path appended. Without one: OAuth, then OpenID Connect, at the root.
    """
    base = origin(issuer)
    path = urlsplit(canonical_resource(issuer)).path
    if not path:
        return [f"{base}{OAUTH_WELL_KNOWN}", f"{base}{OPENID_WELL_KNOWN}"]
    return [
        f"{base}{OAUTH_WELL_KNOWN}{path}",
        f"{base}{OPENID_WELL_KNOWN}{path}",
        f"{base}{path}{OPENID_WELL_KNOWN}",
    ]


def resource_covers(resource: str, server_url: str) -> bool:
    """Whether ``resource`` names ``server_url`` or a parent path of it on the same origin."""
    if origin(resource) != origin(server_url):
        return False
    have = urlsplit(canonical_resource(resource)).path
    want = urlsplit(canonical_resource(server_url)).path
    return not have or want == have or want.startswith(have + "/")


def same_issuer(a: str, b: str) -> bool:
    """Whether two issuer identifiers are the same (a trailing slash aside)."""
    return a.rstrip("/") == b.rstrip("/")
