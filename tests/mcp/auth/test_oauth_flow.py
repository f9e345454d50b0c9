"""OAuth end to end over real HTTP: McpClient against an OAuth-protected server on 127.0.0.1.

The server (tests/support/fake_oauth.py) is both the MCP server and its
authorization server; its authorization endpoint consents at once.
"""

from __future__ import annotations

import json
import logging
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from agent_smith import (
    FileTokenStorage,
    InMemoryTokenStorage,
    LoopbackAuthorization,
    McpAuthError,
    McpClient,
    OAuthConfig,
    OAuthTokens,
    ServerConfig,
)
from agent_smith.logs import TRACE
from agent_smith.mcp.auth.urls import canonical_resource
from tests.support.fake_oauth import FakeOAuthServer

pytestmark = pytest.mark.usefixtures("no_thread_leak")

REDIRECT = "http://127.0.0.1:1/callback"  # never reached: the handler reads the redirect


def consent(url: str) -> str:
    """A handler that plays the user: follow the consent page, return where it redirects."""
    answer = requests.get(url, allow_redirects=False, timeout=10)
    return answer.headers["Location"]


def oauth(**fields: Any) -> OAuthConfig:
    fields.setdefault("authorization_handler", consent)
    fields.setdefault("redirect_uri", REDIRECT)
    return OAuthConfig(**fields)


@pytest.fixture
def fake() -> Iterator[FakeOAuthServer]:
    with FakeOAuthServer() as server:
        yield server


def connect(fake: FakeOAuthServer, auth: OAuthConfig) -> McpClient:
    return McpClient.connect(ServerConfig(alias="hosted", url=fake.mcp_url, auth=auth))


def test_the_first_401_runs_discovery_registration_consent_and_the_token_exchange(
    fake: FakeOAuthServer,
) -> None:
    with connect(fake, oauth()) as client:
        assert client.call_tool("echo", {}).content == "echo with read"
    paths = [s.path for s in fake.seen]
    assert paths[:6] == [
        "/mcp",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
        "/register",
        "/authorize",
        "/token",
    ]
    authorize = fake.requests_to("/authorize")[0].query
    assert authorize["code_challenge_method"] == "S256" and len(authorize["code_challenge"]) == 43
    assert authorize["resource"] == fake.mcp_url and authorize["scope"] == "read"
    assert authorize["redirect_uri"] == REDIRECT and authorize["state"]
    token = fake.requests_to("/token")[0].body
    assert token["grant_type"] == "authorization_code" and token["resource"] == fake.mcp_url
    assert len(token["code_verifier"]) == 43
    mcp = fake.requests_to("/mcp")
    assert "authorization" not in mcp[0].headers
    assert all(s.headers["authorization"].startswith("Bearer access-") for s in mcp[1:])
    posts = [s.body["method"] for s in mcp if s.method == "POST"]
    # Refused once, then authorized; the server knows no server/discover: it initialises.
    assert posts[:3] == ["server/discover", "server/discover", "initialize"]


def test_the_default_handler_opens_the_browser_and_catches_the_redirect_on_loopback(
    fake: FakeOAuthServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    browsers: list[threading.Thread] = []

    def browser(url: str) -> bool:
        # The user's browser: follows the consent redirect to our loopback port.
        thread = threading.Thread(target=requests.get, args=(url,), kwargs={"timeout": 10})
        browsers.append(thread)
        thread.start()
        return True

    monkeypatch.setattr("agent_smith.mcp.auth.loopback.webbrowser.open", browser)
    with connect(fake, OAuthConfig()) as client:
        assert client.call_tool("echo", {}).content == "echo with read"
    for thread in browsers:
        thread.join(10)
    redirect = fake.requests_to("/authorize")[0].query["redirect_uri"]
    assert redirect.startswith("http://127.0.0.1:") and redirect.endswith("/callback")
    registration = fake.requests_to("/register")[0].body
    assert registration["redirect_uris"] == [redirect]
    assert registration["application_type"] == "native"  # a loopback redirect (SEP-837)


def test_an_expired_token_is_refreshed_before_the_request_is_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeOAuthServer(token_lifetime=1) as fake, connect(fake, oauth()) as client:
        # A 1 s token is inside the renewal margin: every request renews it first.
        client.call_tool("echo", {})
        client.call_tool("echo", {})
        grants = [s.body["grant_type"] for s in fake.requests_to("/token")]
        refused = [s for s in fake.requests_to("/mcp") if "authorization" not in s.headers]
    assert grants[0] == "authorization_code" and grants.count("refresh_token") >= 2
    assert len(fake.requests_to("/authorize")) == 1
    assert len(refused) == 1  # only the very first request met a 401


def test_a_revoked_token_is_refreshed_on_the_401_without_asking_the_user(
    fake: FakeOAuthServer,
) -> None:
    with connect(fake, oauth()) as client:
        fake.revoke_access_tokens()
        assert client.call_tool("echo", {}).content == "echo with read"
    assert [s.body["grant_type"] for s in fake.requests_to("/token")] == [
        "authorization_code",
        "refresh_token",
    ]
    assert len(fake.requests_to("/authorize")) == 1


def test_many_threads_meeting_401_at_once_share_one_refresh(fake: FakeOAuthServer) -> None:
    with connect(fake, oauth()) as client:
        fake.revoke_access_tokens()
        barrier = threading.Barrier(8)
        results: list[str] = []

        def call() -> None:
            barrier.wait(10)
            results.append(client.call_tool("echo", {}).content)

        threads = [threading.Thread(target=call, name=f"test-call-{n}") for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert results == ["echo with read"] * 8
    grants = [s.body["grant_type"] for s in fake.requests_to("/token")]
    assert grants == ["authorization_code", "refresh_token"]  # refresh tokens are single-use
    assert len(fake.requests_to("/authorize")) == 1


def test_a_refused_refresh_falls_back_to_a_new_consent(fake: FakeOAuthServer) -> None:
    with connect(fake, oauth()) as client:
        fake.revoke_access_tokens()
        fake.refresh.clear()
        assert client.call_tool("echo", {}).content == "echo with read"
    assert len(fake.requests_to("/authorize")) == 2


def test_403_insufficient_scope_steps_up_to_the_union_of_scopes(fake: FakeOAuthServer) -> None:
    with connect(fake, oauth()) as client:
        assert client.call_tool("write", {}).content == "write with read write"
        assert client.call_tool("echo", {}).content == "echo with read write"
    scopes = [s.query.get("scope") for s in fake.requests_to("/authorize")]
    assert scopes == ["read", "read write"]


def test_a_step_up_that_asks_for_nothing_new_fails_at_once(fake: FakeOAuthServer) -> None:
    # The token was granted "write" (configured scopes), yet the server says it lacks it:
    # authorizing again would ask for the same and loop.
    with connect(fake, oauth(scopes=("read", "write"))) as client:
        with fake.lock:
            for token in fake.tokens:
                fake.tokens[token] = ("read",)
        with pytest.raises(McpAuthError) as info:
            client.call_tool("write", {})
    assert info.value.http_status == 403 and info.value.oauth_error == "insufficient_scope"
    assert len(fake.requests_to("/authorize")) == 1


def test_time_spent_consenting_to_a_step_up_does_not_count_against_the_call(
    fake: FakeOAuthServer,
) -> None:
    consents: list[str] = []

    def slow_user(url: str) -> str:
        consents.append(url)
        if len(consents) == 2:  # the step-up: the user takes longer than the call may
            threading.Event().wait(0.8)
        return consent(url)

    config = ServerConfig(
        alias="hosted",
        url=fake.mcp_url,
        request_timeout=0.3,
        auth=oauth(authorization_handler=slow_user),
    )
    with McpClient.connect(config) as client:
        assert client.call_tool("write", {}).content == "write with read write"
    assert len(consents) == 2


def test_a_file_store_keeps_tokens_and_registration_for_the_next_client(
    fake: FakeOAuthServer, tmp_path: Path
) -> None:
    path = tmp_path / "state" / "tokens.json"
    with connect(fake, oauth(storage=FileTokenStorage(path))) as client:
        client.call_tool("echo", {})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    seen_before = len(fake.seen)
    with connect(fake, oauth(storage=FileTokenStorage(path))) as client:
        client.call_tool("echo", {})
    later = fake.seen[seen_before:]
    assert {s.path for s in later} == {"/mcp"}  # no discovery, registration or consent
    assert all("authorization" in s.headers for s in later)
    (stored,) = json.loads(path.read_text())["tokens"].values()
    assert stored["issuer"] == fake.base  # tokens are kept with the issuer that gave them


def test_tokens_of_another_issuer_are_not_used_and_old_files_still_load(
    fake: FakeOAuthServer, tmp_path: Path
) -> None:
    path = tmp_path / "tokens.json"
    key = canonical_resource(fake.mcp_url)
    foreign = OAuthTokens("access-elsewhere", issuer="https://old-as.example")
    FileTokenStorage(path).save_tokens(key, foreign)
    with connect(fake, oauth(storage=FileTokenStorage(path))) as client:
        assert client.call_tool("echo", {}).content == "echo with read"
    assert fake.requests_to("/token")  # authorized afresh at the server's own issuer
    # A file written before issuers were kept: its tokens load (and are used) as they are.
    legacy = OAuthTokens.from_dict({"access_token": "a", "token_type": "Bearer"})
    assert legacy.issuer is None and legacy.authorization == "Bearer a"


def test_the_client_credentials_grant_needs_no_user(fake: FakeOAuthServer) -> None:
    fake.clients["machine"] = "m-secret"
    auth = OAuthConfig(
        grant="client_credentials", client_id="machine", client_secret="m-secret", scopes=("read",)
    )
    with connect(fake, auth) as client:
        assert client.call_tool("echo", {}).content == "echo with read"
    token = fake.requests_to("/token")[0]
    assert token.body["grant_type"] == "client_credentials" and token.body["scope"] == "read"
    assert token.headers["authorization"].startswith("Basic ")
    assert "client_secret" not in token.body
    assert not fake.requests_to("/authorize") and not fake.requests_to("/register")


def test_a_workload_presents_its_platform_jwt_as_a_jwt_bearer_grant(
    fake: FakeOAuthServer,
) -> None:
    fake.clients["workload"] = None
    assertions = iter(["workload-jwt", "stale-jwt"])
    auth = OAuthConfig(grant="jwt_bearer", client_id="workload", assertion=lambda: next(assertions))
    with connect(fake, auth) as client:
        assert client.call_tool("echo", {}).content == "echo with read"
    (token,) = fake.requests_to("/token")
    assert token.body["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert token.body["assertion"] == "workload-jwt" and token.body["client_id"] == "workload"
    assert not fake.requests_to("/authorize") and not fake.requests_to("/register")


def test_a_pre_registered_client_is_used_as_given(fake: FakeOAuthServer) -> None:
    fake.clients["app"] = None  # a public client
    with connect(fake, oauth(client_id="app")) as client:
        client.call_tool("echo", {})
    assert not fake.requests_to("/register")
    assert fake.requests_to("/authorize")[0].query["client_id"] == "app"
    assert fake.requests_to("/token")[0].body["client_id"] == "app"


def test_a_refused_consent_is_an_auth_error_naming_the_oauth_error(
    fake: FakeOAuthServer,
) -> None:
    def refuse(url: str) -> str:
        return f"{REDIRECT}?error=access_denied&error_description=the+user+said+no"

    with pytest.raises(McpAuthError) as info:
        connect(fake, oauth(authorization_handler=refuse))
    assert info.value.oauth_error == "access_denied"
    assert "the user said no" in str(info.value)


def test_a_long_refusal_description_is_cut_like_every_other_excerpt(
    fake: FakeOAuthServer,
) -> None:
    def refuse(url: str) -> str:
        return f"{REDIRECT}?error=access_denied&error_description={'why+' * 100}"

    with pytest.raises(McpAuthError) as info:
        connect(fake, oauth(authorization_handler=refuse))
    message = str(info.value)
    assert "why why why" in message
    assert "[truncated, original size 399 bytes]" in message
    assert len(message) < 400


def test_a_redirect_with_a_foreign_state_is_refused(fake: FakeOAuthServer) -> None:
    def forged(url: str) -> str:
        return f"{REDIRECT}?code=stolen&state=not-ours"

    with pytest.raises(McpAuthError, match="state"):
        connect(fake, oauth(authorization_handler=forged))
    assert not fake.requests_to("/token")


def test_a_failing_handler_becomes_an_auth_error(fake: FakeOAuthServer) -> None:
    def broken(url: str) -> str:
        raise KeyError("no browser")

    with pytest.raises(McpAuthError, match="handler failed: KeyError"):
        connect(fake, oauth(authorization_handler=broken))


def test_tokens_codes_and_secrets_never_reach_logs_or_errors(
    fake: FakeOAuthServer, caplog: pytest.LogCaptureFixture
) -> None:
    fake.auth_methods = ("client_secret_post",)  # the registration gets a secret
    caplog.set_level(TRACE, logger="agent_smith")
    with connect(fake, oauth(storage=InMemoryTokenStorage())) as client:
        fake.revoke_access_tokens()
        client.call_tool("echo", {})  # a refresh, too
        fake.clients.clear()
        fake.revoke_access_tokens()
        fake.refresh.clear()
        with pytest.raises(McpAuthError) as info:
            client.call_tool("echo", {})
    secrets_seen = [
        s.body.get(k)
        for s in fake.requests_to("/token")
        for k in ("code", "code_verifier", "client_secret", "refresh_token")
    ]
    secrets_seen += [
        s.headers["authorization"][7:]
        for s in fake.requests_to("/mcp")
        if "authorization" in s.headers
    ]
    secrets_seen = [s for s in secrets_seen if s]
    assert len(secrets_seen) >= 6
    shown = caplog.text + str(info.value) + repr(info.value)
    for secret in secrets_seen:
        assert secret not in shown
    assert "invalid_client" in str(info.value)


def test_oauth_objects_keep_their_secrets_out_of_reprs() -> None:
    from agent_smith import ClientInfo, EnterpriseIdp, OAuthTokens

    shown = " ".join(
        repr(x)
        for x in (
            OAuthConfig(client_id="c", client_secret="s3cret-1", private_key="s3cret-2"),
            OAuthTokens("s3cret-3", refresh_token="s3cret-4"),
            ClientInfo("c", "s3cret-5"),
            EnterpriseIdp(token_endpoint="https://idp", id_token="s3cret-6", client_id="c"),
            LoopbackAuthorization(),
        )
    )
    assert "s3cret" not in shown and "OAuthTokens" in shown


def test_without_oauth_a_401_stays_a_transport_error_with_its_status(
    fake: FakeOAuthServer, caplog: pytest.LogCaptureFixture
) -> None:
    from agent_smith import TransportError

    caplog.set_level(logging.DEBUG, logger="agent_smith")
    with pytest.raises(TransportError) as info:
        McpClient.connect(ServerConfig(alias="hosted", url=fake.mcp_url, bearer_token="tok-x"))
    assert info.value.http_status == 401
    assert "tok-x" not in caplog.text
