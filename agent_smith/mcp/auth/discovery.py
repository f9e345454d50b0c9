"""Finding the authorization server: protected resource and authorization server metadata.

The flow MCP prescribes, from the server's 401:

1. Protected resource metadata (RFC 9728): at the challenge's
   ``resource_metadata`` URL, else at the well-known locations of the server
   URL (path-inserted, then the origin's). Its ``resource`` must be the
   server or a parent of it; a document naming another resource is refused
   (it could send our user's consent to someone else's server).
2. The metadata of its first authorization server that has some (RFC 8414, then OpenID Connect
   discovery, at the locations of :func:`~.urls.server_metadata_urls`), whose
   ``issuer`` must be the server it was fetched for.
3. A server without protected resource metadata is a 2025-03-26 server: its
   authorization server is the MCP server's origin, whose RFC 8414 metadata
   is used if it has some, else the default endpoints ``/authorize``,
   ``/token`` and ``/register`` there.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .fetch import AuthHttp
from .urls import (
    OAUTH_WELL_KNOWN,
    origin,
    resource_covers,
    resource_metadata_urls,
    same_issuer,
    server_metadata_urls,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ResourceMetadata:
    """The MCP server's RFC 9728 metadata (the fields the flow uses)."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ServerMetadata:
    """An authorization server's metadata (RFC 8414 fields the flow uses).

    ``legacy`` is True when it was found the 2025-03-26 way (the server has
    no resource metadata): PKCE S256 is then assumed rather than required to
    be advertised.
    """

    issuer: str
    token_endpoint: str
    authorization_endpoint: str | None = None
    registration_endpoint: str | None = None
    scopes_supported: tuple[str, ...] | None = None
    grant_types_supported: tuple[str, ...] | None = None
    # RFC 8414 §2: absent means client_secret_basic.
    token_endpoint_auth_methods_supported: tuple[str, ...] = ("client_secret_basic",)
    code_challenge_methods_supported: tuple[str, ...] | None = None
    client_id_metadata_document_supported: bool = False
    # RFC 9207: the authorization response then always names the issuer in ``iss``.
    iss_parameter_supported: bool = False
    dpop_signing_alg_values_supported: tuple[str, ...] = ()
    legacy: bool = False


@dataclass(frozen=True)
class Discovered:
    """Where and how to authorize for one MCP server.

    ``resource`` is the RFC 8707 ``resource`` parameter (None for a 2025-03-26
    server, which named no resource); ``resource_metadata`` None likewise.
    """

    server: ServerMetadata
    resource: str | None
    resource_metadata: ResourceMetadata | None


def discover(http: AuthHttp, server_url: str, *, metadata_url: str | None) -> Discovered:
    """Run discovery for the MCP server at ``server_url`` (see the module docstring).

    ``metadata_url`` is the challenge's ``resource_metadata``, if it had one.
    Raises McpAuthError when the metadata is unusable or no server is found.
    """
    prm = _resource_metadata(http, server_url, metadata_url)
    if prm is None:
        log.info("MCP server %s has no resource metadata: 2025-03-26 discovery", http.server)
        return Discovered(_legacy_server(http, server_url), None, None)
    for issuer in prm.authorization_servers:  # the first one that publishes metadata
        metadata = _server_metadata(http, issuer)
        if metadata is not None:
            return Discovered(metadata, prm.resource, prm)
        log.info("authorization server %s of %s has no metadata", issuer, http.server)
    raise http.error(
        f"no authorization server of {', '.join(prm.authorization_servers)} publishes metadata"
    )


def _resource_metadata(
    http: AuthHttp, server_url: str, metadata_url: str | None
) -> ResourceMetadata | None:
    candidates = resource_metadata_urls(server_url)
    if metadata_url:
        candidates = [metadata_url, *(c for c in candidates if c != metadata_url)]
    for url, body in _documents(http, candidates):
        prm = _parse_resource_metadata(http, body, url)
        if not resource_covers(prm.resource, server_url):
            raise http.error(
                f"its resource metadata names another resource ({prm.resource}); refused"
            )
        return prm
    return None


def _parse_resource_metadata(http: AuthHttp, body: dict[str, Any], url: str) -> ResourceMetadata:
    resource = body.get("resource")
    servers = body.get("authorization_servers")
    if not isinstance(resource, str) or not resource.startswith(("http://", "https://")):
        raise http.error(f"resource metadata at {url} has no valid 'resource'")
    if (
        not isinstance(servers, list)
        or not servers
        or not all(isinstance(s, str) and s.startswith(("http://", "https://")) for s in servers)
    ):
        raise http.error(f"resource metadata at {url} names no authorization server")
    return ResourceMetadata(resource, tuple(servers), _strings(body.get("scopes_supported")))


def _server_metadata(http: AuthHttp, issuer: str) -> ServerMetadata | None:
    for url, body in _documents(http, server_metadata_urls(issuer)):
        metadata = parse_server_metadata(http, body, url)
        if not same_issuer(metadata.issuer, issuer):
            raise http.error(
                f"metadata at {url} is for issuer {metadata.issuer!r}, not {issuer!r}; refused"
            )
        return metadata
    return None


def _legacy_server(http: AuthHttp, server_url: str) -> ServerMetadata:
    base = origin(server_url)
    url = f"{base}{OAUTH_WELL_KNOWN}"
    body = http.get_json(url)
    if body is not None:
        metadata = parse_server_metadata(http, body, url)
        return dataclasses.replace(metadata, legacy=True)
    log.info("MCP server %s: no authorization metadata; default endpoints", http.server)
    return ServerMetadata(
        issuer=base,
        authorization_endpoint=f"{base}/authorize",
        token_endpoint=f"{base}/token",
        registration_endpoint=f"{base}/register",
        legacy=True,
    )


def parse_server_metadata(http: AuthHttp, body: dict[str, Any], url: str) -> ServerMetadata:
    """Authorization server metadata from its JSON; McpAuthError if it lacks what we need."""
    issuer = body.get("issuer")
    token_endpoint = body.get("token_endpoint")
    if not isinstance(issuer, str) or not _is_url(token_endpoint):
        raise http.error(f"authorization server metadata at {url} lacks issuer or token_endpoint")
    authorization = body.get("authorization_endpoint")
    registration = body.get("registration_endpoint")
    methods = _strings(body.get("token_endpoint_auth_methods_supported"))
    return ServerMetadata(
        issuer=issuer,
        token_endpoint=str(token_endpoint),
        authorization_endpoint=str(authorization) if _is_url(authorization) else None,
        registration_endpoint=str(registration) if _is_url(registration) else None,
        scopes_supported=_strings(body.get("scopes_supported")),
        grant_types_supported=_strings(body.get("grant_types_supported")),
        token_endpoint_auth_methods_supported=methods or ("client_secret_basic",),
        code_challenge_methods_supported=_strings(body.get("code_challenge_methods_supported")),
        client_id_metadata_document_supported=body.get("client_id_metadata_document_supported")
        is True,
        iss_parameter_supported=body.get("authorization_response_iss_parameter_supported") is True,
        dpop_signing_alg_values_supported=_strings(body.get("dpop_signing_alg_values_supported"))
        or (),
    )


def _documents(http: AuthHttp, urls: list[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(url, document)`` for each of ``urls`` that has a JSON document, asked in order."""
    for url in urls:
        body = http.get_json(url)
        if body is not None:
            yield url, body


def _strings(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _is_url(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(("http://", "https://"))
