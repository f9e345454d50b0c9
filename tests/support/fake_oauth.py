"""An OAuth-protected MCP server and its authorization server on one 127.0.0.1 port.

Enough of both to drive the client's OAuth through real HTTP: protected
resource metadata, RFC 8414 metadata, dynamic registration, an authorization
endpoint that consents at once (302 to the redirect URI with code and state),
a token endpoint for the authorization code (PKCE checked), refresh and
client-credentials grants, and an MCP endpoint that wants a Bearer token
(``echo`` and ``write`` tools; ``write`` needs the ``write`` scope: a 403
``insufficient_scope`` until the token has it). Every request is recorded.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.support.fake_http import FakeHttpServer, QuietHandler, send_json


@dataclass
class Seen:
    """One request: method, path, headers (lower-case names), query and form or JSON body."""

    method: str
    path: str
    headers: dict[str, str]
    query: dict[str, str] = field(default_factory=dict)
    body: Any = None


@dataclass
class _Grant:
    scope: tuple[str, ...]
    challenge: str
    client_id: str
    redirect_uri: str
    resource: str | None


class FakeOAuthServer(FakeHttpServer):
    """``with FakeOAuthServer() as srv:``; ``srv.mcp_url`` is the protected MCP endpoint.

    ``token_lifetime`` is the ``expires_in`` of access tokens; ``scopes`` the
    resource's ``scopes_supported``; ``auth_methods`` the token endpoint's
    authentication methods; ``clients`` pre-registered ``{id: secret}``.
    """

    def __init__(
        self,
        *,
        token_lifetime: int = 3600,
        scopes: tuple[str, ...] = ("read",),
        auth_methods: tuple[str, ...] = ("none", "client_secret_basic"),
        clients: dict[str, str | None] | None = None,
        registration: bool = True,
        refresh_tokens: bool = True,
    ) -> None:
        self.token_lifetime = token_lifetime
        self.scopes = scopes
        self.auth_methods = auth_methods
        self.registration = registration
        self.refresh_tokens = refresh_tokens
        self.clients: dict[str, str | None] = dict(clients or {})
        self.seen: list[Seen] = []
        self.tokens: dict[str, tuple[str, ...]] = {}  # valid access token -> scopes
        self.refresh: dict[str, tuple[str, ...]] = {}
        self.grants: dict[str, _Grant] = {}
        self.lock = threading.RLock()
        self._counter = 0
        super().__init__(_Handler, name="fake-oauth")
        self.mcp_url = f"{self.base}/mcp"

    def next_id(self, prefix: str) -> str:
        with self.lock:
            self._counter += 1
            return f"{prefix}-{self._counter}"

    def revoke_access_tokens(self) -> None:
        """Forget every access token (refresh tokens stay good)."""
        with self.lock:
            self.tokens.clear()

    def requests_to(self, path: str) -> list[Seen]:
        with self.lock:
            return [s for s in self.seen if s.path == path]


class _Handler(QuietHandler):
    fake: FakeOAuthServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms ACK wait

    # -- plumbing ----------------------------------------------------------------

    def _record(self) -> Seen:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body: Any = None
        if raw:
            if (self.headers.get("Content-Type") or "").startswith("application/json"):
                body = json.loads(raw)
            else:
                body = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
        seen = Seen(
            self.command,
            parts.path,
            {k.lower(): v for k, v in self.headers.items()},
            {k: v[0] for k, v in parse_qs(parts.query).items()},
            body,
        )
        with self.fake.lock:
            self.fake.seen.append(seen)
        return seen

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        send_json(self, status, payload, headers)

    # -- verbs -------------------------------------------------------------------

    def do_GET(self) -> None:
        seen = self._record()
        fake = self.fake
        if seen.path == "/.well-known/oauth-protected-resource/mcp":
            self._json(
                200,
                {
                    "resource": fake.mcp_url,
                    "authorization_servers": [fake.base],
                    "scopes_supported": list(fake.scopes),
                },
            )
        elif seen.path == "/.well-known/oauth-authorization-server":
            metadata: dict[str, Any] = {
                "issuer": fake.base,
                "authorization_endpoint": f"{fake.base}/authorize",
                "token_endpoint": f"{fake.base}/token",
                "token_endpoint_auth_methods_supported": list(fake.auth_methods),
                "code_challenge_methods_supported": ["S256"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
            }
            if fake.registration:
                metadata["registration_endpoint"] = f"{fake.base}/register"
            self._json(200, metadata)
        elif seen.path == "/authorize":
            self._authorize(seen)
        elif seen.path == "/mcp":
            self._json(405, {"error": "no GET stream"})
        else:
            self._json(404, {"error": "not_found"})

    def do_DELETE(self) -> None:
        self._record()
        self._json(200, {})

    def do_POST(self) -> None:
        seen = self._record()
        if seen.path == "/register":
            self._register(seen)
        elif seen.path == "/token":
            self._token(seen)
        elif seen.path == "/mcp":
            self._mcp(seen)
        else:
            self._json(404, {"error": "not_found"})

    # -- the authorization server --------------------------------------------------

    def _register(self, seen: Seen) -> None:
        client_id = self.fake.next_id("client")
        method = seen.body.get("token_endpoint_auth_method", "client_secret_basic")
        secret = None if method == "none" else self.fake.next_id("secret")
        with self.fake.lock:
            self.fake.clients[client_id] = secret
        answer = {"client_id": client_id, "redirect_uris": seen.body.get("redirect_uris", [])}
        if secret is not None:
            answer["client_secret"] = secret
        answer["token_endpoint_auth_method"] = method
        self._json(201, answer)

    def _authorize(self, seen: Seen) -> None:
        q = seen.query
        code = self.fake.next_id("code")
        with self.fake.lock:
            self.fake.grants[code] = _Grant(
                tuple(q.get("scope", "").split()),
                q.get("code_challenge", ""),
                q.get("client_id", ""),
                q.get("redirect_uri", ""),
                q.get("resource"),
            )
        target = f"{q['redirect_uri']}?{urlencode({'code': code, 'state': q.get('state', '')})}"
        self.send_response(302)
        self.send_header("Location", target)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _client_ok(self, seen: Seen) -> str | None:
        """The authenticated client id, or None (Basic, or the form's id and secret)."""
        header = seen.headers.get("authorization", "")
        if header.startswith("Basic "):
            client_id, _, secret = base64.b64decode(header[6:]).decode().partition(":")
        else:
            client_id = seen.body.get("client_id", "")
            secret = seen.body.get("client_secret")
        with self.fake.lock:
            known = client_id in self.fake.clients
            expected = self.fake.clients.get(client_id)
        return client_id if known and (expected is None or expected == secret) else None

    def _token(self, seen: Seen) -> None:
        form = seen.body or {}
        client_id = self._client_ok(seen)
        if client_id is None:
            self._json(401, {"error": "invalid_client", "error_description": "who are you"})
            return
        grant_type = form.get("grant_type")
        if grant_type == "authorization_code":
            with self.fake.lock:
                grant = self.fake.grants.pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "")
            digest = hashlib.sha256(verifier.encode()).digest()
            challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
            if grant is None or grant.challenge != challenge or grant.client_id != client_id:
                self._json(400, {"error": "invalid_grant"})
                return
            scope = grant.scope
        elif grant_type == "refresh_token":
            with self.fake.lock:
                scope_or_none = self.fake.refresh.pop(form.get("refresh_token", ""), None)
            if scope_or_none is None:
                self._json(400, {"error": "invalid_grant", "error_description": "stale refresh"})
                return
            scope = scope_or_none
        elif grant_type == "client_credentials":
            scope = tuple(form.get("scope", "").split())
        elif grant_type == "urn:ietf:params:oauth:grant-type:jwt-bearer":
            if form.get("assertion") != "workload-jwt":
                self._json(400, {"error": "invalid_grant"})
                return
            scope = tuple(form.get("scope", "").split())
        else:
            self._json(400, {"error": "unsupported_grant_type"})
            return
        access = self.fake.next_id("access")
        answer: dict[str, Any] = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.fake.token_lifetime,
            "scope": " ".join(scope),
        }
        with self.fake.lock:
            self.fake.tokens[access] = scope
            if self.fake.refresh_tokens and grant_type in ("authorization_code", "refresh_token"):
                refresh = self.fake.next_id("refresh")
                self.fake.refresh[refresh] = scope
                answer["refresh_token"] = refresh
        self._json(200, answer)

    # -- the MCP server ------------------------------------------------------------

    def _challenge(self, status: int, scope: str, error: str) -> None:
        meta = f"{self.fake.base}/.well-known/oauth-protected-resource/mcp"
        header = f'Bearer error="{error}", scope="{scope}", resource_metadata="{meta}"'
        self._json(status, {"error": error}, {"WWW-Authenticate": header})

    def _mcp(self, seen: Seen) -> None:
        header = seen.headers.get("authorization", "")
        token = header[7:] if header.startswith("Bearer ") else ""
        with self.fake.lock:
            scopes = self.fake.tokens.get(token)
        if scopes is None:
            self._challenge(401, " ".join(self.fake.scopes), "invalid_token")
            return
        body = seen.body
        method = body.get("method")
        if "id" not in body:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if method == "tools/call" and body["params"]["name"] == "write" and "write" not in scopes:
            self._challenge(403, "write", "insufficient_scope")
            return
        result: dict[str, Any]
        if method == "initialize":
            result = {
                "protocolVersion": body["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake-oauth", "version": "0"},
            }
        elif method == "tools/list":
            tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("echo", "write")]
            result = {"tools": tools}
        elif method == "tools/call":
            text = f"{body['params']['name']} with {' '.join(scopes)}"
            result = {"content": [{"type": "text", "text": text}]}
        else:
            result = {}
        self._json(200, {"jsonrpc": "2.0", "id": body["id"], "result": result})
