"""Where OAuth tokens and client registrations are kept: the TokenStorage protocol and two stores.

Tokens are kept per MCP server (the key is its canonical URL), client
registrations per authorization server (the key is its issuer), so a second
server behind the same authorization server reuses the registration.

- :class:`InMemoryTokenStorage` (the default): nothing outlives the process.
- :class:`FileTokenStorage`: one JSON file, created with permissions 0600 in
  a directory created 0700, replaced atomically on every save so a crash
  never leaves half a file. It is written only because the user asked for it
  by naming the file.

Implement :class:`TokenStorage` to keep them elsewhere (a keyring, a
database); its methods may be called from several threads.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from ..._internal import json_input
from ...errors import ConfigError, ParseError
from .registration import ClientInfo
from .tokens import OAuthTokens

log = logging.getLogger(__name__)

_FORMAT = 1
_T = TypeVar("_T")


@runtime_checkable
class TokenStorage(Protocol):
    """Keeps tokens per MCP server and client registrations per authorization server."""

    def load_tokens(self, key: str) -> OAuthTokens | None:
        """The tokens kept for the MCP server ``key``, if any."""
        ...

    def save_tokens(self, key: str, tokens: OAuthTokens | None) -> None:
        """Keep ``tokens`` for ``key`` (None forgets them)."""
        ...

    def load_client(self, issuer: str) -> ClientInfo | None:
        """The client registered at authorization server ``issuer``, if any."""
        ...

    def save_client(self, issuer: str, client: ClientInfo) -> None:
        """Keep the client registered at ``issuer``."""
        ...


class InMemoryTokenStorage:
    """A TokenStorage in this process's memory (the default)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: dict[str, OAuthTokens] = {}
        self._clients: dict[str, ClientInfo] = {}

    def load_tokens(self, key: str) -> OAuthTokens | None:
        with self._lock:
            return self._tokens.get(key)

    def save_tokens(self, key: str, tokens: OAuthTokens | None) -> None:
        with self._lock:
            if tokens is None:
                self._tokens.pop(key, None)
            else:
                self._tokens[key] = tokens

    def load_client(self, issuer: str) -> ClientInfo | None:
        with self._lock:
            return self._clients.get(issuer)

    def save_client(self, issuer: str, client: ClientInfo) -> None:
        with self._lock:
            self._clients[issuer] = client

    def __repr__(self) -> str:
        return "InMemoryTokenStorage()"


class FileTokenStorage:
    """A TokenStorage in one JSON file at ``path`` (permissions 0600; see the module docstring).

    Safe to share between threads; processes sharing one file see each
    other's saves, the last writer winning.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        if self.path.is_dir():
            raise ConfigError(f"token file {self.path} is a directory")
        self._lock = threading.Lock()

    def load_tokens(self, key: str) -> OAuthTokens | None:
        return self._load("tokens", key, OAuthTokens.from_dict, "unreadable tokens")

    def save_tokens(self, key: str, tokens: OAuthTokens | None) -> None:
        self._save("tokens", key, None if tokens is None else tokens.to_dict())

    def load_client(self, issuer: str) -> ClientInfo | None:
        return self._load("clients", issuer, ClientInfo.from_dict, "an unreadable client")

    def save_client(self, issuer: str, client: ClientInfo) -> None:
        self._save("clients", issuer, client.to_dict())

    def __repr__(self) -> str:
        return f"FileTokenStorage({str(self.path)!r})"

    # -- the file ------------------------------------------------------------------

    def _load(self, section: str, key: str, parse: Callable[[Any], _T], what: str) -> _T | None:
        """The entry ``key`` of ``section``, parsed; None (logged) when it does not parse."""
        with self._lock:
            entry = self._read()[section].get(key)
        try:
            return None if entry is None else parse(entry)
        except ParseError:
            log.warning("token file %s holds %s; ignored", self.path, what)
            return None

    def _save(self, section: str, key: str, entry: dict[str, Any] | None) -> None:
        """Keep ``entry`` as ``key`` of ``section`` (None removes it), rewriting the file."""
        with self._lock:
            data = self._read()
            if entry is None:
                data[section].pop(key, None)
            else:
                data[section][key] = entry
            self._write(data)

    def _read(self) -> dict[str, Any]:
        empty: dict[str, Any] = {"format": _FORMAT, "tokens": {}, "clients": {}}
        try:
            mode = self.path.stat().st_mode
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return empty
        except OSError as err:
            log.warning("cannot read token file %s: %s", self.path, type(err).__name__)
            return empty
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            log.warning("token file %s was readable by others; now 0600", self.path)
            self.path.chmod(0o600)
        try:
            data = json_input.loads(text)
        except ValueError:
            log.warning("token file %s is not JSON; starting afresh", self.path)
            return empty
        if not isinstance(data, dict):
            return empty
        for section in ("tokens", "clients"):
            if not isinstance(data.get(section), dict):
                data[section] = {}
        return data

    def _write(self, data: dict[str, Any]) -> None:
        """Replace the file atomically; a failure is logged (the tokens still work in memory)."""
        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, self.path)
        except OSError as err:
            log.warning("cannot write token file %s: %s", self.path, err.strerror or err)
            with contextlib.suppress(OSError):
                temp.unlink(missing_ok=True)
