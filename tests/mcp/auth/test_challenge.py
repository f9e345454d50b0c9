"""WWW-Authenticate parsing: the Bearer challenge among others, quoted values, escapes."""

from __future__ import annotations

import pytest

from agent_smith.mcp.auth.challenge import BearerChallenge, bearer_challenge


def test_a_step_up_challenge_gives_error_scope_and_metadata_url() -> None:
    header = (
        'Bearer error="insufficient_scope", scope="files:read files:write", '
        'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", '
        'error_description="Additional file write permission required"'
    )
    assert bearer_challenge(header) == BearerChallenge(
        error="insufficient_scope",
        error_description="Additional file write permission required",
        scope=("files:read", "files:write"),
        resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource",
    )


@pytest.mark.parametrize(
    ("header", "scope"),
    [
        ('Basic realm="a, b", Bearer realm="q\\"x", scope=files', ("files",)),
        ('Basic dXNlcjpwYXNz, Bearer scope="a"', ("a",)),
        ("bearer SCOPE=a", ("a",)),  # scheme and parameter names are case-insensitive
        ('Bearer realm="mcp"', None),
        ("Bearer", None),
    ],
)
def test_the_bearer_challenge_is_found_among_others(header: str, scope: object) -> None:
    found = bearer_challenge(header)
    assert found is not None and found.scope == scope


@pytest.mark.parametrize("header", [None, "", "Basic realm=x", "Negotiate", "=garbage"])
def test_no_bearer_challenge_is_none(header: str | None) -> None:
    assert bearer_challenge(header) is None


def test_insufficient_scope_is_named() -> None:
    assert bearer_challenge('Bearer error="insufficient_scope"').insufficient_scope  # type: ignore[union-attr]
    assert not bearer_challenge('Bearer error="invalid_token"').insufficient_scope  # type: ignore[union-attr]
