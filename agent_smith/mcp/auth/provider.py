"""OAuthProvider: the HTTP transports' authorization for one OAuth-protected MCP server.

A transport asks it for headers before each request and hands it every 401
and 403 (it is the transport's :class:`~agent_smith.mcp.http_request.RequestAuth`):

- **headers**: ``Authorization: Bearer <token>`` once a token is held; an
  expired one is refreshed first (or, for the client-credentials grant,
  requested again) so requests rarely meet a 401 at all.
- **401**: refresh if a refresh token is held, else run discovery
  (:mod:`.discovery`), find the client's identity (:mod:`.registration`),
  get the user's consent (:mod:`.authorization_code`) or the client's own
  token (client credentials), and send the request again.
- **403 insufficient_scope**: authorize again asking for the scopes already
  requested plus those the challenge names (step-up); a challenge that asks
  for nothing new fails at once instead of looping.

Each request authorizes at most ``max_authorizations`` times. Flows run one
at a time; a thread whose request failed with a token another thread has
since replaced simply sends it again.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ...errors import McpAuthError
from .authorization_code import request_code
from .challenge import BearerChallenge, asks_dpop_nonce, bearer_challenge
from .discovery import Discovered, discover
from .dpop import ALGORITHM as DPOP_ALGORITHM
from .dpop import DpopProofs, dpop_available
from .enterprise import enterprise_tokens, workload_tokens
from .fetch import AuthHttp
from .loopback import LoopbackAuthorization
from .registration import client_for
from .storage import InMemoryTokenStorage
from .token_endpoint import client_credentials, exchange_code, refresh
from .urls import canonical_resource

if TYPE_CHECKING:
    import requests

    from .config import AuthorizationHandler, OAuthConfig
    from .registration import ClientInfo
    from .tokens import OAuthTokens

log = logging.getLogger(__name__)

#: The scope asking an authorization server for a refresh token (SEP-2207).
OFFLINE_ACCESS = "offline_access"


class OAuthProvider:
    """Authorizes the requests to the MCP server at ``url`` (see the module docstring)."""

    def __init__(
        self,
        config: OAuthConfig,
        *,
        server: str,
        url: str,
        session: requests.Session,
        protocol_version: str | None = None,
    ) -> None:
        self._config = config
        self._url = url
        self._key = canonical_resource(url)
        self._http = AuthHttp(
            session, server=server, timeout=config.timeout, protocol_version=protocol_version
        )
        self._storage = config.storage or InMemoryTokenStorage()
        self._handler = config.authorization_handler
        self._own_handler: LoopbackAuthorization | None = None
        self._lock = threading.RLock()  # state and flows: one flow at a time
        self._tokens = self._storage.load_tokens(self._key)
        self._found: Discovered | None = None
        self._found_at: str | None = None  # the resource_metadata URL it was found with
        self._scope: tuple[str, ...] | None = self._tokens.scope if self._tokens else None
        self._refreshed = False  # the token held came from a refresh, not a new grant

    # -- RequestAuth ---------------------------------------------------------------

    def headers(self, method: str, url: str) -> dict[str, str]:
        """``Authorization`` for the next request (renewing an expired token first).

        A DPoP-bound token goes with a fresh proof for ``method`` on ``url``.
        """
        tokens = self._tokens
        if tokens is not None and tokens.expired():
            tokens = self._renewed(tokens)
        if tokens is None:
            return {}
        found = {"Authorization": tokens.authorization}
        dpop = self._http.dpop
        if dpop is not None and tokens.token_type == "DPoP":
            found["DPoP"] = dpop.proof(method, url, access_token=tokens.access_token)
        return found

    def challenged(
        self, response: requests.Response, sent: Mapping[str, str], attempt: int
    ) -> bool:
        """Answer a 401 or 403 (see the module docstring); True: send the request again."""
        challenge = bearer_challenge(response.headers.get("WWW-Authenticate"))
        status = response.status_code
        dpop = self._http.dpop
        if (
            dpop is not None
            and status == 401
            and asks_dpop_nonce(response.headers.get("WWW-Authenticate"))
            and dpop.learn(response.url, response.headers)
        ):
            return True  # sign again with the server's nonce (a new nonce only: no loop)
        with self._lock:
            current = self._tokens
            if current is not None and sent.get("Authorization") != current.authorization:
                return True  # another thread got a new token meanwhile
            if status == 403:
                if challenge is None or not challenge.insufficient_scope:
                    return False  # a plain refusal: authorizing again would change nothing
                self._check_attempts(attempt, status)
                self._step_up(challenge, current)
                return True
            self._check_attempts(attempt, status)
            if attempt > 0 and not self._refreshed:
                raise self._http.error(
                    "the server refused the token it was just given (HTTP 401)", http_status=401
                )
            if (
                attempt == 0
                and current is not None
                and current.refresh_token is not None
                and self._refresh(current)
            ):
                return True
            if current is not None:
                # A token it took before is refused: its authorization server may have
                # moved (SEP-2352). Read the resource metadata again; a new issuer means
                # a new registration there.
                self._found = None
            self._authorize(challenge, scope=None)
            return True

    def _check_attempts(self, attempt: int, status: int) -> None:
        if attempt >= self._config.max_authorizations:
            raise self._http.error(
                f"the server still answers {status} after "
                f"{self._config.max_authorizations} authorizations; giving up",
                http_status=status,
            )

    def close(self) -> None:
        """Release the default handler's loopback port, if one is bound."""
        if self._own_handler is not None:
            self._own_handler.close()

    def __repr__(self) -> str:
        return f"OAuthProvider(server={self._http.server!r}, url={self._url!r})"

    # -- flows -----------------------------------------------------------------------

    def _renewed(self, tokens: OAuthTokens) -> OAuthTokens | None:
        """An expired token's replacement; None (send none, meet the 401) if there is none."""
        with self._lock:
            if self._tokens is not tokens:
                return self._tokens  # another thread renewed it
            if tokens.refresh_token is not None and self._refresh(tokens):
                return self._tokens
            if self._config.grant != "authorization_code":  # no user needed: just ask again
                try:
                    self._obtain(self._discovered(None), tokens.scope)
                    return self._tokens
                except McpAuthError as err:
                    log.info("%s: renewing the client's token failed: %s", self._http.server, err)
            self._keep(None)
            return None

    def _refresh(self, tokens: OAuthTokens) -> bool:
        """Use the refresh token; False (and it is dropped) when the server refuses it."""
        try:
            found = self._discovered(None)
            client = self._client(found)
            renewed = refresh(
                self._http, found.server, client, self._config, tokens, resource=found.resource
            )
        except McpAuthError as err:
            log.info("%s: refreshing the token failed: %s", self._http.server, err)
            self._keep(None)
            return False
        log.debug("%s: token refreshed", self._http.server)
        self._keep(renewed)
        self._refreshed = True
        return True

    def _step_up(self, challenge: BearerChallenge, current: OAuthTokens | None) -> None:
        held = set((current.scope if current else None) or self._scope or ())
        wanted = challenge.scope or ()
        if not wanted or set(wanted) <= held:
            raise self._http.error(
                "the server answers 403 insufficient_scope although the token has the "
                "scopes it names",
                http_status=403,
                oauth_error="insufficient_scope",
            )
        # Keep what was asked for before (other operations need it) and add the new.
        scope = tuple(dict.fromkeys([*(self._scope or ()), *sorted(held), *wanted]))
        log.info("%s: the server wants more scopes; authorizing again", self._http.server)
        self._authorize(challenge, scope=scope)

    def _authorize(
        self, challenge: BearerChallenge | None, *, scope: tuple[str, ...] | None
    ) -> None:
        try:
            found = self._discovered(challenge.resource_metadata if challenge else None)
            if scope is None:
                scope = self._select_scope(challenge, found)
            self._obtain(found, scope)
        except McpAuthError:
            self._found = None  # discover afresh next time
            raise

    def _obtain(self, found: Discovered, scope: tuple[str, ...] | None) -> None:
        """Get tokens for ``scope``: the user's consent, or the client's own credentials."""
        config = self._config
        if config.grant == "client_credentials":
            client = self._client(found)
            tokens = client_credentials(
                self._http, found.server, client, config, resource=found.resource, scope=scope
            )
        elif config.grant == "jwt_bearer" and config.assertion is not None:
            client = self._client(found)
            assertion = (
                config.assertion if isinstance(config.assertion, str) else config.assertion()
            )
            tokens = workload_tokens(self._http, found, client, config, assertion, scope=scope)
        elif config.grant == "enterprise" and config.enterprise_idp is not None:
            client = self._client(found)
            tokens = enterprise_tokens(
                self._http, found, client, config, config.enterprise_idp, scope=scope
            )
        else:
            handler = self._authorization_handler()
            redirect_uri = self._config.redirect_uri or getattr(handler, "redirect_uri", None)
            if not isinstance(redirect_uri, str):
                raise self._http.error("the authorization handler gives no redirect_uri")
            client = self._client(found, redirect_uri=redirect_uri)
            granted = request_code(
                self._http,
                found.server,
                client_id=client.client_id,
                handler=handler,
                redirect_uri=redirect_uri,
                scope=scope,
                resource=found.resource,
            )
            tokens = exchange_code(
                self._http,
                found.server,
                client,
                self._config,
                code=granted.code,
                verifier=granted.pkce.verifier,
                redirect_uri=redirect_uri,
                resource=found.resource,
                scope=scope,
            )
        self._scope = scope
        self._keep(tokens)
        self._refreshed = False
        log.info("%s: authorized", self._http.server)

    # -- state -----------------------------------------------------------------------

    def _select_scope(
        self, challenge: BearerChallenge | None, found: Discovered
    ) -> tuple[str, ...] | None:
        """MCP's scope selection: the config's, the challenge's, the resource's, or none."""
        prm = found.resource_metadata
        scope: tuple[str, ...]
        if self._config.scopes is not None:
            return self._config.scopes
        if challenge is not None and challenge.scope:
            scope = challenge.scope
        elif prm is not None and prm.scopes_supported:
            scope = prm.scopes_supported
        else:
            return None
        offered = found.server.scopes_supported or ()
        if (
            self._config.grant == "authorization_code"
            and OFFLINE_ACCESS in offered
            and OFFLINE_ACCESS not in scope
        ):
            scope = (*scope, OFFLINE_ACCESS)  # a refresh token spares the user a new consent
        return scope

    def _discovered(self, metadata_url: str | None) -> Discovered:
        if self._found is not None and metadata_url in (None, self._found_at):
            return self._found
        found = discover(self._http, self._url, metadata_url=metadata_url)
        self._found, self._found_at = found, metadata_url
        held = self._tokens
        if held is not None and held.issuer not in (None, found.server.issuer):
            # Issued by another authorization server (the server moved): not ours to use.
            log.info(
                "%s: the authorization server changed; its tokens are dropped", self._http.server
            )
            self._keep(None)
        self._use_dpop(found)
        return found

    def _use_dpop(self, found: Discovered) -> None:
        """Bind tokens to a key when the authorization server takes DPoP and the config allows."""
        wanted = self._config.dpop
        offered = DPOP_ALGORITHM in found.server.dpop_signing_alg_values_supported
        if wanted is False or not offered or self._http.dpop is not None:
            return
        if wanted is None and not dpop_available():
            log.debug("%s: DPoP offered; install the oauth-jwt extra to use it", self._http.server)
            return
        self._http.dpop = DpopProofs()

    def _client(self, found: Discovered, *, redirect_uri: str | None = None) -> ClientInfo:
        return client_for(
            self._http, self._config, found.server, storage=self._storage, redirect_uri=redirect_uri
        )

    def _authorization_handler(self) -> AuthorizationHandler:
        if self._handler is None:
            self._own_handler = LoopbackAuthorization()
            self._handler = self._own_handler
        return self._handler

    def _keep(self, tokens: OAuthTokens | None) -> None:
        found = self._found
        if tokens is not None and tokens.issuer is None and found is not None:
            tokens = dataclasses.replace(tokens, issuer=found.server.issuer)
        self._tokens = tokens
        self._storage.save_tokens(self._key, tokens)
