"""OAuthConfig validation, ServerConfig's auth and transport fields, and token endpoint auth."""

from __future__ import annotations

import base64
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from agent_smith import ClientInfo, ConfigError, FileTokenStorage, OAuthConfig, ServerConfig
from agent_smith.mcp.auth.client_auth import ASSERTION_TYPE, authenticate
from agent_smith.mcp.auth.registration import choose_auth_method


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"grant": "password"}, "grant"),
        ({"grant": "client_credentials", "client_id": "c"}, "client_secret or private_key"),
        ({"grant": "enterprise", "client_id": "c"}, "enterprise_idp"),
        ({"private_key": "k"}, "needs 'client_id'"),
        ({"scopes": ("a b",)}, "scope names"),
        ({"client_metadata_url": "http://example.com/c.json"}, "https URL with a path"),
        ({"client_metadata_url": "https://example.com"}, "https URL with a path"),
        ({"authorization_handler": lambda url: url}, "needs 'redirect_uri'"),
        ({"authorization_handler": "not callable"}, "callable"),
        ({"redirect_uri": "/relative"}, "absolute URI"),
        ({"token_endpoint_auth_method": "tls_client_auth"}, "token_endpoint_auth_method"),
        ({"signing_algorithm": "HS256"}, "signing_algorithm"),
        ({"max_authorizations": 0}, "positive integer"),
        ({"timeout": 0}, "positive"),
        ({"storage": object()}, "TokenStorage"),
    ],
)
def test_bad_oauth_config_is_a_config_error(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        OAuthConfig(**fields)


def test_scopes_may_be_a_string_or_a_list() -> None:
    assert OAuthConfig(scopes="a b").scopes == ("a", "b")  # type: ignore[arg-type]
    assert OAuthConfig(scopes=["a"]).scopes == ("a",)  # type: ignore[arg-type]


def test_server_config_settles_the_transport_and_checks_auth() -> None:
    assert ServerConfig(alias="s", command=("x",)).transport == "stdio"
    assert ServerConfig(alias="s", url="http://h/mcp").transport == "streamable-http"
    assert ServerConfig(alias="s", url="http://h/sse", transport="sse").transport == "sse"
    with pytest.raises(ConfigError, match="transport"):
        ServerConfig(alias="s", url="http://h/mcp", transport="websocket")
    with pytest.raises(ConfigError, match="stdio only"):
        ServerConfig(alias="s", command=("x",), transport="sse")
    with pytest.raises(ConfigError, match="'auth' is for HTTP"):
        ServerConfig(alias="s", command=("x",), auth=OAuthConfig())
    with pytest.raises(ConfigError, match="not both"):
        ServerConfig(alias="s", url="http://h/mcp", bearer_token="t", auth=OAuthConfig())
    with pytest.raises(ConfigError, match="OAuthConfig"):
        ServerConfig(alias="s", url="http://h/mcp", auth={"client_id": "c"})  # type: ignore[arg-type]


def test_a_manifest_names_transport_and_auth_with_a_token_file(tmp_path: Any) -> None:
    config = ServerConfig.from_dict(
        {
            "alias": "docs",
            "url": "https://docs.example.com/mcp",
            "transport": "auto",
            "auth": {"client_id": "app", "scopes": ["read"], "token_file": str(tmp_path / "t")},
        }
    )
    assert config.transport == "auto"
    assert config.auth is not None and config.auth.client_id == "app"
    assert isinstance(config.auth.storage, FileTokenStorage)
    with pytest.raises(ConfigError, match="unknown 'auth' key 'client_secret'"):
        ServerConfig.from_dict(
            {"alias": "d", "url": "https://d/mcp", "auth": {"client_secret": "s"}}
        )
    with pytest.raises(ConfigError, match=r"auth\.max_authorizations"):
        ServerConfig.from_dict(
            {"alias": "d", "url": "https://d/mcp", "auth": {"max_authorizations": True}}
        )


@pytest.mark.parametrize(
    ("supported", "secret", "method"),
    [
        (("client_secret_basic", "client_secret_post"), True, "client_secret_basic"),
        (("client_secret_post",), True, "client_secret_post"),
        (("none",), True, "none"),
        (("client_secret_basic",), False, "none"),
        (("private_key_jwt",), True, "client_secret_basic"),
    ],
)
def test_the_auth_method_follows_what_the_server_supports(
    supported: tuple[str, ...], secret: bool, method: str
) -> None:
    assert choose_auth_method(supported, has_secret=secret) == method


def test_basic_auth_percent_encodes_id_and_secret_first() -> None:
    form: dict[str, str] = {}
    headers = authenticate(
        form, ClientInfo("my app", "p@ss:w%rd", "client_secret_basic"), audience="https://a"
    )
    decoded = base64.b64decode(headers["Authorization"].removeprefix("Basic ")).decode()
    assert decoded == "my%20app:p%40ss%3Aw%25rd" and form == {}


def test_post_and_none_put_the_client_in_the_form() -> None:
    form: dict[str, str] = {}
    assert authenticate(form, ClientInfo("c", "s", "client_secret_post"), audience="a") == {}
    assert form == {"client_id": "c", "client_secret": "s"}
    form = {}
    authenticate(form, ClientInfo("c", None, "none"), audience="a")
    assert form == {"client_id": "c"}


def test_private_key_jwt_signs_an_assertion_for_the_issuer() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    form: dict[str, str] = {}
    authenticate(
        form,
        ClientInfo("svc", None, "private_key_jwt"),
        audience="https://auth.example.com",
        private_key=pem,
        algorithm="ES256",
    )
    assert form["client_assertion_type"] == ASSERTION_TYPE
    claims = jwt.decode(
        form["client_assertion"],
        key.public_key(),
        algorithms=["ES256"],
        audience="https://auth.example.com",
    )
    assert claims["iss"] == claims["sub"] == "svc"
    assert claims["exp"] - claims["iat"] == 300 and claims["jti"]


def test_a_bad_private_key_is_a_config_error_that_does_not_show_the_key() -> None:
    with pytest.raises(ConfigError) as info:
        authenticate(
            {},
            ClientInfo("svc", None, "private_key_jwt"),
            audience="a",
            private_key="-----BEGIN PRIVATE KEY-----\nS3CRETGARBAGE\n-----END PRIVATE KEY-----",
            algorithm="ES256",
        )
    assert "S3CRET" not in str(info.value)
