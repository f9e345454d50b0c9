"""ServerConfig: how to reach one MCP server and which of its tools to use."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from .generation import PROTOCOLS

if TYPE_CHECKING:
    from .auth.config import OAuthConfig

#: Protocol revisions this client speaks (and accepts in a server's answer).
SUPPORTED_PROTOCOL_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
DEFAULT_PROTOCOL_VERSION = "2025-06-18"
#: Log levels a server may be asked for (RFC 5424 severities, as MCP names them).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
#: How long ``protocol="auto"`` waits for a stdio server's ``server/discover`` answer
#: (capped by ``request_timeout``) before taking it for an old server that ignores it.
STDIO_DISCOVER_TIMEOUT = 5.0
#: Transports for a ``url``: Streamable HTTP, the 2024-11-05 HTTP+SSE transport,
#: or Streamable HTTP falling back to HTTP+SSE when the server does not speak it.
URL_TRANSPORTS = ("streamable-http", "sse", "auto")


@dataclass(frozen=True)
class ServerConfig:
    """Transport, auth, filtering, timeout and reconnect policy for one server.

    Give exactly one of ``command`` (stdio: the argv to spawn, with optional
    ``env`` added to this process's environment and ``cwd``) or ``url`` (an
    HTTP endpoint, with optional ``headers``). ``transport`` for a ``url`` is
    ``"streamable-http"`` (the default), ``"sse"`` (the 2024-11-05 HTTP+SSE
    transport: ``url`` is its SSE endpoint) or ``"auto"`` (Streamable HTTP,
    falling back to HTTP+SSE as the spec's backwards-compatibility section
    describes). Authorize with a fixed ``bearer_token`` or with OAuth
    (``auth=OAuthConfig(...)``), not both. ``deny_tools`` wins over
    ``allow_tools``; an empty ``allow_tools`` allows every tool not denied.
    ``require_approval`` makes calls wait for a person's approval: ``True``
    for every tool of the server (its ``read_resource`` too), or a tuple of
    the server's tool names. ``discover_timeout`` bounds the wait for the
    ``server/discover`` answer (``protocol="auto"``): a server that stays
    silent that long is spoken to with the ``initialize`` handshake. By
    default it is 5 s for a stdio server (an old one may never answer) and
    ``request_timeout`` over HTTP.
    """

    alias: str
    command: tuple[str, ...] = ()
    env: dict[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    bearer_token: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    request_timeout: float = 30.0
    allow_tools: tuple[str, ...] = ()
    deny_tools: tuple[str, ...] = ()
    tools_required: bool = True
    reconnect: bool = True
    protocol_version: str = DEFAULT_PROTOCOL_VERSION
    protocol: str = "auto"
    log_level: str | None = None
    handler_timeout: float | None = None
    discover_timeout: float | None = None
    require_approval: bool | tuple[str, ...] = False
    transport: str | None = None
    auth: OAuthConfig | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.alias, str) or not self.alias:
            raise ConfigError("MCP server config: 'alias' must be a non-empty string")
        # Lists are accepted for convenience and stored as tuples (the value is frozen).
        for name in ("command", "allow_tools", "deny_tools", "require_approval"):
            value = getattr(self, name)
            if isinstance(value, list):
                object.__setattr__(self, name, tuple(value))
        if bool(self.command) == bool(self.url):
            raise ConfigError(
                f"MCP server {self.alias!r}: give exactly one of 'command' (stdio) or 'url' (HTTP)"
            )
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ConfigError(f"MCP server {self.alias!r}: 'url' must be an http(s) URL")
        if not self.request_timeout > 0:
            raise ConfigError(f"MCP server {self.alias!r}: 'request_timeout' must be positive")
        approval = self.require_approval
        if not isinstance(approval, bool) and not (
            isinstance(approval, tuple) and all(isinstance(n, str) for n in approval)
        ):
            raise ConfigError(
                f"MCP server {self.alias!r}: 'require_approval' must be true, false "
                "or a list of tool names"
            )
        if self.protocol_version not in SUPPORTED_PROTOCOL_VERSIONS:
            raise ConfigError(
                f"MCP server {self.alias!r}: 'protocol_version' must be one of "
                f"{', '.join(SUPPORTED_PROTOCOL_VERSIONS)}"
            )
        for name in ("handler_timeout", "discover_timeout"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ConfigError(f"MCP server {self.alias!r}: {name!r} must be positive")
        if self.protocol not in PROTOCOLS:
            raise ConfigError(
                f"MCP server {self.alias!r}: 'protocol' must be one of {', '.join(PROTOCOLS)}"
            )
        if self.log_level is not None and self.log_level not in LOG_LEVELS:
            raise ConfigError(
                f"MCP server {self.alias!r}: 'log_level' must be one of {', '.join(LOG_LEVELS)}"
            )
        self._check_transport_and_auth()

    def _check_transport_and_auth(self) -> None:
        """Settle ``transport`` ("stdio" for a command) and check ``auth``."""
        if self.command:
            if self.transport not in (None, "stdio"):
                raise ConfigError(f"MCP server {self.alias!r}: a command runs over stdio only")
            if self.auth is not None:
                raise ConfigError(
                    f"MCP server {self.alias!r}: 'auth' is for HTTP servers; give a stdio "
                    "server its credentials through 'env'"
                )
            object.__setattr__(self, "transport", "stdio")
            return
        if self.transport is None:
            object.__setattr__(self, "transport", "streamable-http")
        elif self.transport not in URL_TRANSPORTS:
            raise ConfigError(
                f"MCP server {self.alias!r}: 'transport' must be one of {', '.join(URL_TRANSPORTS)}"
            )
        if self.auth is not None:
            from .auth.config import OAuthConfig

            if not isinstance(self.auth, OAuthConfig):
                raise ConfigError(f"MCP server {self.alias!r}: 'auth' must be an OAuthConfig")
            if self.bearer_token:
                raise ConfigError(
                    f"MCP server {self.alias!r}: give either 'bearer_token' or 'auth', not both"
                )

    @property
    def discover_wait(self) -> float:
        """How long ``server/discover`` is waited for (see ``discover_timeout``)."""
        if self.discover_timeout is not None:
            return self.discover_timeout
        if self.command:
            return min(STDIO_DISCOVER_TIMEOUT, self.request_timeout)
        return self.request_timeout

    @property
    def endpoint(self) -> str:
        """What logs and errors call the server: its alias."""
        return self.alias

    def allows(self, tool_name: str) -> bool:
        """Whether a tool passes the allow/deny filter (deny wins)."""
        if tool_name in self.deny_tools:
            return False
        return not self.allow_tools or tool_name in self.allow_tools

    def needs_approval(self, tool_name: str) -> bool:
        """Whether calls of the server's tool ``tool_name`` wait for approval."""
        approval = self.require_approval
        return approval if isinstance(approval, bool) else tool_name in approval

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ServerConfig:
        """Build a config from a plain dict (as a skill manifest holds it).

        Unknown keys and values of the wrong type raise ConfigError naming the key.
        """
        if not isinstance(data, Mapping):
            raise ConfigError("MCP server config must be an object")
        alias = data.get("alias", "?")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(str(k) for k in data if k not in known)
        if unknown:
            raise ConfigError(f"MCP server config {alias!r}: unknown key {unknown[0]!r}")
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            kwargs[key] = _check(str(alias), key, value)
        if "alias" not in kwargs:
            raise ConfigError("MCP server config: missing key 'alias'")
        return cls(**kwargs)


def _check(alias: str, key: str, value: Any) -> Any:
    """Validate one value of a config dict; return it in its stored form."""

    def wrong(expected: str) -> ConfigError:
        return ConfigError(f"MCP server config {alias!r}: key {key!r} must be {expected}")

    if key in ("command", "allow_tools", "deny_tools"):
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise wrong("a list of strings")
        return tuple(value)
    if key in ("env", "headers"):
        if value is None and key == "env":
            return None
        if not isinstance(value, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            raise wrong("an object of string values")
        return dict(value)
    if key == "require_approval":
        if isinstance(value, bool):
            return value
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise wrong("true, false or a list of tool names")
        return tuple(value)
    if key in ("tools_required", "reconnect"):
        if not isinstance(value, bool):
            raise wrong("true or false")
        return value
    if key in ("request_timeout", "handler_timeout", "discover_timeout"):
        if value is None and key != "request_timeout":
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise wrong("a number of seconds")
        return float(value)
    if key == "auth":
        from .auth.config import OAuthConfig

        return None if value is None else OAuthConfig.from_dict(value)
    if key in ("cwd", "url", "bearer_token", "transport", "log_level"):
        if value is not None and not isinstance(value, str):
            raise wrong("a string")
        return value
    if not isinstance(value, str):  # alias, protocol_version, protocol
        raise wrong("a string")
    return value
