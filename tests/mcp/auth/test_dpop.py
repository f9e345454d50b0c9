"""DPoP (RFC 9449): proofs a server can verify, nonces learned and used, key-bound tokens."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator

import jwt
import pytest
import requests
import responses
from jwt.algorithms import ECAlgorithm

from agent_smith.errors import McpAuthError
from agent_smith.mcp.auth.dpop import DpopProofs
from agent_smith.mcp.auth.fetch import AuthHttp
from agent_smith.mcp.auth.tokens import OAuthTokens, tokens_from_response

TOKEN_URL = "https://as.example/token"


def verified(proof: str) -> tuple[dict[str, object], dict[str, object]]:
    """The proof's header and claims, its signature checked with the key it carries."""
    header = jwt.get_unverified_header(proof)
    key = ECAlgorithm.from_jwk(json.dumps(header["jwk"]))
    return header, jwt.decode(proof, key=key, algorithms=["ES256"])  # type: ignore[arg-type]


def test_a_proof_names_method_target_time_and_the_tokens_hash() -> None:
    proofs = DpopProofs()
    header, claims = verified(
        proofs.proof("post", "https://mcp.example/mcp?x=1#f", access_token="tok")
    )
    assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256"
    assert "d" not in header["jwk"]  # the public key only  # type: ignore[operator]
    assert claims["htm"] == "POST" and claims["htu"] == "https://mcp.example/mcp"
    digest = base64.urlsafe_b64encode(hashlib.sha256(b"tok").digest()).rstrip(b"=").decode()
    assert claims["ath"] == digest and "nonce" not in claims
    assert verified(proofs.proof("GET", "https://mcp.example/mcp"))[1]["jti"] != claims["jti"]


def test_a_servers_nonce_is_kept_per_origin() -> None:
    proofs = DpopProofs()
    assert proofs.learn("https://as.example/token", {"DPoP-Nonce": "n1"})
    assert not proofs.learn("https://as.example/other", {"DPoP-Nonce": "n1"})  # not new
    assert verified(proofs.proof("POST", "https://as.example/token"))[1]["nonce"] == "n1"
    assert "nonce" not in verified(proofs.proof("POST", "https://mcp.example/mcp"))[1]


@pytest.fixture
def http() -> Iterator[AuthHttp]:
    with requests.Session() as session:
        auth_http = AuthHttp(session, server="web", timeout=5)
        auth_http.dpop = DpopProofs()
        yield auth_http


@responses.activate
def test_the_token_request_signs_again_with_the_nonce_the_server_asks_for(http: AuthHttp) -> None:
    responses.post(
        TOKEN_URL,
        status=400,
        json={"error": "use_dpop_nonce"},
        headers={"DPoP-Nonce": "fresh"},
    )
    responses.post(TOKEN_URL, json={"access_token": "a", "token_type": "DPoP"})
    body = http.post(TOKEN_URL, what="token request", form={"grant_type": "x"})
    assert body["token_type"] == "DPoP"
    first, second = (verified(c.request.headers["DPoP"])[1] for c in responses.calls)
    assert "nonce" not in first and second["nonce"] == "fresh"


@responses.activate
def test_a_server_that_keeps_asking_for_a_nonce_is_not_asked_forever(http: AuthHttp) -> None:
    responses.post(
        TOKEN_URL, status=400, json={"error": "use_dpop_nonce"}, headers={"DPoP-Nonce": "same"}
    )
    with pytest.raises(McpAuthError, match="use_dpop_nonce"):
        http.post(TOKEN_URL, what="token request", form={"grant_type": "x"})
    assert len(responses.calls) == 2


def test_a_dpop_token_is_sent_with_the_dpop_scheme() -> None:
    tokens = tokens_from_response({"access_token": "a", "token_type": "DPoP"}, requested_scope=None)
    assert tokens.token_type == "DPoP" and tokens.authorization == "DPoP a"
    assert OAuthTokens("b").authorization == "Bearer b"
