"""Discovery's request order and its refusals (responses mocks: only the request shapes matter)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests
import responses

from agent_smith import McpAuthError
from agent_smith.mcp.auth.authorization_code import request_code
from agent_smith.mcp.auth.discovery import ServerMetadata, discover
from agent_smith.mcp.auth.fetch import AuthHttp

MCP = "https://mcp.example.com/api/mcp"
PRM_PATH = "https://mcp.example.com/.well-known/oauth-protected-resource/api/mcp"
PRM_ROOT = "https://mcp.example.com/.well-known/oauth-protected-resource"
AS = "https://auth.example.com/tenant1"
AS_META = {
    "issuer": AS,
    "authorization_endpoint": f"{AS}/authorize",
    "token_endpoint": f"{AS}/token",
    "code_challenge_methods_supported": ["S256"],
}


@pytest.fixture
def http() -> Iterator[AuthHttp]:
    responses.start()
    try:
        with requests.Session() as session:
            yield AuthHttp(session, server="web", timeout=5, protocol_version="2025-06-18")
    finally:
        responses.stop()
        responses.reset()


def gets() -> list[str]:
    return [c.request.url for c in responses.calls if c.request.method == "GET"]  # type: ignore[misc]


def test_the_challenge_url_comes_first_and_the_path_issuer_uses_path_insertion(
    http: AuthHttp,
) -> None:
    header_url = "https://mcp.example.com/custom/prm.json"
    responses.get(header_url, json={"resource": MCP, "authorization_servers": [AS]})
    responses.get(
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1", status=404
    )
    responses.get("https://auth.example.com/.well-known/openid-configuration/tenant1", status=404)
    responses.get(f"{AS}/.well-known/openid-configuration", json=AS_META)
    found = discover(http, MCP, metadata_url=header_url)
    assert found.resource == MCP and found.server.token_endpoint == f"{AS}/token"
    assert gets() == [
        header_url,
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        f"{AS}/.well-known/openid-configuration",
    ]
    assert responses.calls[0].request.headers["MCP-Protocol-Version"] == "2025-06-18"


def test_without_a_challenge_url_the_path_location_comes_before_the_root(http: AuthHttp) -> None:
    responses.get(PRM_PATH, status=404)
    responses.get(
        PRM_ROOT, json={"resource": "https://mcp.example.com", "authorization_servers": [AS]}
    )
    responses.get(
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1", json=AS_META
    )
    found = discover(http, MCP, metadata_url=None)
    assert gets()[:2] == [PRM_PATH, PRM_ROOT]
    assert found.resource == "https://mcp.example.com"  # the server's own identifier is sent


def test_metadata_naming_another_resource_is_refused(http: AuthHttp) -> None:
    responses.get(
        PRM_PATH, json={"resource": "https://evil.example.com/mcp", "authorization_servers": [AS]}
    )
    with pytest.raises(McpAuthError, match="another resource"):
        discover(http, MCP, metadata_url=None)
    assert gets() == [PRM_PATH]  # nothing more is asked of anyone


def test_server_metadata_for_another_issuer_is_refused(http: AuthHttp) -> None:
    responses.get(PRM_PATH, json={"resource": MCP, "authorization_servers": [AS]})
    responses.get(
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        json={**AS_META, "issuer": "https://auth.example.com/tenant2"},
    )
    with pytest.raises(McpAuthError, match="issuer"):
        discover(http, MCP, metadata_url=None)


def test_a_server_without_resource_metadata_is_found_the_2025_03_26_way(http: AuthHttp) -> None:
    responses.get(PRM_PATH, status=404)
    responses.get(PRM_ROOT, status=404)
    responses.get("https://mcp.example.com/.well-known/oauth-authorization-server", status=404)
    found = discover(http, MCP, metadata_url=None)
    assert found.resource is None and found.resource_metadata is None
    assert found.server == ServerMetadata(
        issuer="https://mcp.example.com",
        authorization_endpoint="https://mcp.example.com/authorize",
        token_endpoint="https://mcp.example.com/token",
        registration_endpoint="https://mcp.example.com/register",
        legacy=True,
    )


def test_no_authorization_server_with_metadata_is_an_error(http: AuthHttp) -> None:
    responses.get(PRM_PATH, json={"resource": MCP, "authorization_servers": [AS]})
    for url in (
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        f"{AS}/.well-known/openid-configuration",
    ):
        responses.get(url, status=404)
    with pytest.raises(McpAuthError, match="publishes metadata"):
        discover(http, MCP, metadata_url=None)


def test_an_unreachable_server_is_an_auth_error(http: AuthHttp) -> None:
    responses.get(PRM_PATH, body=requests.ConnectionError("refused"))
    with pytest.raises(McpAuthError, match="ConnectionError"):
        discover(http, MCP, metadata_url=None)


@pytest.mark.parametrize("methods", [("plain",), None])
def test_a_server_that_does_not_advertise_s256_is_refused_before_the_user_is_asked(
    http: AuthHttp, methods: tuple[str, ...] | None
) -> None:
    metadata = ServerMetadata(
        issuer=AS,
        token_endpoint=f"{AS}/token",
        authorization_endpoint=f"{AS}/authorize",
        code_challenge_methods_supported=methods,
    )
    asked: list[str] = []
    with pytest.raises(McpAuthError, match="S256"):
        request_code(
            http,
            metadata,
            client_id="c",
            handler=lambda url: asked.append(url) or "",
            redirect_uri="http://127.0.0.1:1/cb",
            scope=None,
            resource=MCP,
        )
    assert asked == []


def test_the_authorization_url_keeps_the_endpoints_query_and_omits_an_empty_scope(
    http: AuthHttp,
) -> None:
    metadata = ServerMetadata(
        issuer=AS,
        token_endpoint=f"{AS}/token",
        authorization_endpoint=f"{AS}/authorize?tenant=blue",
        code_challenge_methods_supported=("S256",),
    )
    asked: list[str] = []

    def handler(url: str) -> str:
        asked.append(url)
        state = url.split("state=")[1].split("&")[0]
        return f"http://127.0.0.1:1/cb?code=c1&state={state}&iss={AS}"

    granted = request_code(
        http,
        metadata,
        client_id="c",
        handler=handler,
        redirect_uri="http://127.0.0.1:1/cb",
        scope=None,
        resource=None,
    )
    assert granted.code == "c1" and "c1" not in repr(granted)
    assert asked[0].startswith(f"{AS}/authorize?tenant=blue&response_type=code")
    assert "scope=" not in asked[0] and "resource=" not in asked[0]


@pytest.mark.parametrize(
    ("promised", "iss", "accepted"),
    [
        (True, AS, True),
        (True, None, False),  # promised by the metadata, missing from the redirect
        (False, None, True),
        (False, f"{AS}/", False),  # compared as is: a trailing slash is another issuer
        (False, "https://evil.example", False),
    ],
)
def test_the_redirects_iss_must_be_the_issuer_exactly_and_present_when_promised(
    http: AuthHttp, promised: bool, iss: str | None, accepted: bool
) -> None:
    metadata = ServerMetadata(
        issuer=AS,
        token_endpoint=f"{AS}/token",
        authorization_endpoint=f"{AS}/authorize",
        code_challenge_methods_supported=("S256",),
        iss_parameter_supported=promised,
    )

    def handler(url: str) -> str:
        state = url.split("state=")[1].split("&")[0]
        tail = f"&iss={iss}" if iss is not None else ""
        return f"http://127.0.0.1:1/cb?code=c1&state={state}{tail}"

    def ask() -> str:
        granted = request_code(
            http,
            metadata,
            client_id="c",
            handler=handler,
            redirect_uri="http://127.0.0.1:1/cb",
            scope=None,
            resource=None,
        )
        return granted.code

    if accepted:
        assert ask() == "c1"
    else:
        with pytest.raises(McpAuthError, match="iss"):
            ask()
