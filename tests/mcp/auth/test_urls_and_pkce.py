"""Canonical resource URIs, well-known metadata locations, and PKCE S256."""

from __future__ import annotations

import re

import pytest

from agent_smith.mcp.auth.pkce import new_pkce, new_state, s256
from agent_smith.mcp.auth.urls import (
    canonical_resource,
    resource_covers,
    resource_metadata_urls,
    server_metadata_urls,
)


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("HTTPS://MCP.Example.com/mcp/", "https://mcp.example.com/mcp"),
        ("https://mcp.example.com:443/mcp#frag", "https://mcp.example.com/mcp"),
        ("http://127.0.0.1:8080/", "http://127.0.0.1:8080"),
        ("https://mcp.example.com/Path?x=1", "https://mcp.example.com/Path?x=1"),
        ("http://[::1]:9000/mcp", "http://[::1]:9000/mcp"),
    ],
)
def test_canonical_resource(url: str, canonical: str) -> None:
    assert canonical_resource(url) == canonical


def test_resource_metadata_is_looked_for_path_first_then_at_the_root() -> None:
    assert resource_metadata_urls("https://example.com/public/mcp") == [
        "https://example.com/.well-known/oauth-protected-resource/public/mcp",
        "https://example.com/.well-known/oauth-protected-resource",
    ]
    assert resource_metadata_urls("https://example.com/") == [
        "https://example.com/.well-known/oauth-protected-resource"
    ]


def test_server_metadata_locations_follow_mcp_order() -> None:
    assert server_metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert server_metadata_urls("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]


@pytest.mark.parametrize(
    ("resource", "covers"),
    [
        ("https://mcp.example.com/mcp", True),
        ("https://mcp.example.com", True),
        ("https://MCP.example.com/mcp/", True),
        ("https://mcp.example.com/mc", False),  # a prefix, but not of whole segments
        ("https://evil.example.com/mcp", False),
        ("http://mcp.example.com/mcp", False),
        ("https://mcp.example.com/mcp/deeper", False),
    ],
)
def test_resource_covers_only_the_server_or_a_parent_on_its_origin(
    resource: str, covers: bool
) -> None:
    assert resource_covers(resource, "https://mcp.example.com/mcp") is covers


def test_s256_matches_the_rfc_7636_example() -> None:
    assert s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == (
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    )


def test_verifiers_are_fresh_43_unreserved_characters_and_hidden_from_repr() -> None:
    pairs = [new_pkce() for _ in range(20)]
    assert len({p.verifier for p in pairs}) == 20
    for pair in pairs:
        assert re.fullmatch(r"[A-Za-z0-9\-._~]{43}", pair.verifier)
        assert pair.challenge == s256(pair.verifier) and pair.method == "S256"
        assert pair.verifier not in repr(pair)
    assert new_state() != new_state()
