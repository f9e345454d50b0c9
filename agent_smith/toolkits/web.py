"""The web toolkit: ``fetch_url``, a GET that reaches only the public internet.

Every hop of a fetch (the URL, then each redirect) is checked the same way:
``http`` or ``https`` only, no credentials in the URL, the host resolved
once with ``getaddrinfo`` and every address it gives checked by
:mod:`~agent_smith.toolkits.ssrf`; the connection then goes to a checked
address (:class:`PinnedAdapter`), so a second lookup cannot send it
elsewhere (DNS rebinding), while the ``Host`` header and the TLS server name
and certificate check stay those of the URL. Proxies from the environment
are ignored (they would bypass the check). Redirects are followed by hand,
at most ``max_redirects``.

A fetch is bounded: a deadline for the whole fetch (a timer shuts the
socket down, so a server trickling bytes cannot hold it), a cap on the bytes
read (after decompression), and a cap on the text returned. HTML becomes
readable text (:mod:`~agent_smith.toolkits.html_text`); other text types are
returned as they are; anything else is refused.

Allowances: ``allow_hosts`` names hosts (as written in URLs: a name or an IP
literal) whose addresses are not checked, and ``allow_networks`` ranges that
are let through; a test server on 127.0.0.1 or an intranet app needs one.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests

from .._internal.sockets import WatchingAdapter, shutdown, watch_socket
from .._internal.text import truncate_utf8
from ..base.cancellation import CancellationToken
from ..errors import ConfigError, ToolError
from ..tools.base import Tool, ToolContext
from ._tool import toolkit_tool
from .html_text import html_to_text
from .ssrf import IPAddress, IPNetwork, blocked_reason, resolve

_TOOL = "fetch_url"
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml")
_CHUNK = 16384


@dataclass(frozen=True)
class WebPolicy:
    """What ``fetch_url`` may reach and how much it may take.

    ``timeout`` bounds a whole fetch (redirects included), ``max_bytes`` the
    body bytes read, ``max_text_bytes`` the text returned, ``max_redirects``
    the hops. ``allow_hosts`` and ``allow_networks``: see the module doc.
    ``ca_bundle``: a PEM file of certificates to trust instead of the
    system's (an intranet's own CA).
    """

    timeout: float = 20.0
    max_bytes: int = 2 * 1024 * 1024
    max_text_bytes: int = 64 * 1024
    max_redirects: int = 5
    allow_hosts: tuple[str, ...] = ()
    allow_networks: tuple[str, ...] = ()
    ca_bundle: str | None = None
    user_agent: str = "agent_smith-fetch/1"

    def __post_init__(self) -> None:
        if not self.timeout > 0 or self.max_bytes <= 0 or self.max_text_bytes <= 0:
            raise ConfigError("WebPolicy: timeout, max_bytes and max_text_bytes must be positive")
        if self.max_redirects < 0:
            raise ConfigError("WebPolicy.max_redirects must not be negative")
        try:
            for net in self.allow_networks:
                ipaddress.ip_network(net)
        except ValueError as err:
            raise ConfigError(f"WebPolicy.allow_networks: {err}") from err


class PinnedAdapter(WatchingAdapter):
    """A ``requests`` adapter that connects to one checked address for one host.

    The pool is keyed and connected by ``address``; ``Host`` comes from the
    request, and for HTTPS the server name (SNI) and the certificate check
    use ``host``.
    """

    def __init__(self, host: str, address: IPAddress) -> None:
        super().__init__(max_retries=0)
        self.host = host
        self.address = address

    def build_connection_pool_key_attributes(
        self, request: requests.PreparedRequest, verify: Any, cert: Any = None
    ) -> tuple[Any, Any]:
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(
            request, verify, cert
        )
        params: dict[str, Any] = dict(host_params)
        kwargs: dict[str, Any] = dict(pool_kwargs)
        if (params.get("host") or "").lower() != self.host:
            raise ToolError("internal: a request left its pinned host", tool_name=_TOOL)
        params["host"] = str(self.address)
        if params.get("scheme") == "https":
            kwargs["server_hostname"] = self.host
            kwargs["assert_hostname"] = self.host
        return params, kwargs


class WebToolkit:
    """``fetch_url`` per :class:`WebPolicy`."""

    def __init__(self, policy: WebPolicy | None = None) -> None:
        self.policy = policy or WebPolicy()
        self._allowed_hosts = frozenset(h.lower().strip("[]") for h in self.policy.allow_hosts)
        self._allowed_networks: tuple[IPNetwork, ...] = tuple(
            ipaddress.ip_network(n) for n in self.policy.allow_networks
        )

    def tools(self) -> list[Tool]:
        """The toolkit's one tool (read only: a GET)."""
        return [toolkit_tool(self.fetch, name=_TOOL, read_only=True)]

    def check(self, url: str) -> tuple[str, int, IPAddress]:
        """The host, port and checked address a fetch of ``url`` would connect to; ToolError."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise ToolError(f"only http and https URLs are fetched, not {url!r}", tool_name=_TOOL)
        if parts.username is not None or parts.password is not None:
            raise ToolError("URLs with credentials are refused", tool_name=_TOOL)
        try:  # the host as requests will send it (an international name in its ASCII form)
            prepared = requests.PreparedRequest()
            prepared.prepare_url(url, None)
        except (requests.RequestException, UnicodeError, ValueError) as err:
            raise ToolError(f"{url!r} is not a valid URL: {err}", tool_name=_TOOL) from err
        host = (urlsplit(prepared.url or url).hostname or "").lower()
        if not host:
            raise ToolError(f"{url!r} names no host", tool_name=_TOOL)
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError as err:
            raise ToolError(f"bad port in {url!r}", tool_name=_TOOL) from err
        try:
            addresses = resolve(host, port)
        except (OSError, UnicodeError, ValueError) as err:
            raise ToolError(f"cannot resolve {host!r}: {err}", tool_name=_TOOL) from err
        if host not in self._allowed_hosts:
            for address in addresses:
                reason = blocked_reason(address, self._allowed_networks)
                if reason is not None:
                    raise ToolError(
                        f"refused: {host!r} resolves to {reason}; only public addresses "
                        "are fetched",
                        tool_name=_TOOL,
                    )
        return host, port, addresses[0]

    def fetch(self, url: str, ctx: ToolContext | None = None) -> str:
        """Fetch a web page or text file over HTTP(S) and return its readable text.

        Args:
            url: The http:// or https:// address to fetch.
        """
        deadline = time.monotonic() + self.policy.timeout
        with _Deadline(self.policy.timeout, ctx.cancel if ctx is not None else None) as stop:
            for _hop in range(self.policy.max_redirects + 1):
                host, _port, address = self.check(url)
                with (
                    requests.Session() as session,
                    self._get(session, url, host, address, deadline, stop) as response,
                ):
                    location = response.headers.get("Location")
                    if response.status_code in _REDIRECTS and location:
                        url = urljoin(url, location)
                        continue
                    body = _read(response, self.policy.max_bytes, stop)
                    return self._answer(url, response, body)
        raise ToolError(f"more than {self.policy.max_redirects} redirects", tool_name=_TOOL)

    def _get(
        self,
        session: requests.Session,
        url: str,
        host: str,
        address: IPAddress,
        deadline: float,
        stop: _Deadline,
    ) -> requests.Response:
        session.trust_env = False  # no proxy from the environment: it would skip the check
        adapter = PinnedAdapter(host, address)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        remaining = max(deadline - time.monotonic(), 0.001)
        netloc = urlsplit(url).netloc.rsplit("@", 1)[-1]
        headers = {"Host": netloc, "User-Agent": self.policy.user_agent}
        try:
            with watch_socket(stop.watch):
                return session.get(
                    url,
                    headers=headers,
                    allow_redirects=False,
                    stream=True,
                    timeout=(remaining, remaining),
                    verify=self.policy.ca_bundle or True,
                )
        except requests.RequestException as err:
            raise stop.error(f"cannot fetch {url!r}: {type(err).__name__}") from err

    def _answer(self, url: str, response: requests.Response, body: bytes) -> str:
        kind = response.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        if kind and not kind.startswith(_TEXT_TYPES):
            raise ToolError(f"{url} is {kind}, not text; not fetched", tool_name=_TOOL)
        text = body.decode(response.encoding or "utf-8", errors="replace")
        if kind in ("text/html", "application/xhtml+xml") or (not kind and "<html" in text[:500]):
            text = html_to_text(text)
        text = truncate_utf8(text, self.policy.max_text_bytes)
        if not 200 <= response.status_code < 300:
            excerpt = " ".join(text.split())[:300]
            raise ToolError(
                f"HTTP {response.status_code} {response.reason} from {url}: {excerpt}",
                tool_name=_TOOL,
            )
        return f"{url}\n\n{text}"


class _Deadline:
    """Shuts the fetch's socket down at the deadline or on cancellation (a timer thread)."""

    def __init__(self, seconds: float, cancel: CancellationToken | None) -> None:
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self.fired = False
        self._cancel = cancel
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.name = "agent_smith-fetch-deadline"
        self._unregister = cancel.on_cancel(self._fire) if cancel is not None else None

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        self._timer.join()
        if self._unregister is not None:
            self._unregister()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._socket = sock
            fired = self.fired
        if fired:
            shutdown(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            sock = self._socket
        if sock is not None:
            shutdown(sock)

    def error(self, message: str) -> ToolError:
        """``message``, or why the fetch was stopped if it was."""
        if self.fired:
            if self._cancel is not None and self._cancel.cancelled:
                return ToolError("the fetch was cancelled", tool_name=_TOOL)
            return ToolError("the fetch timed out", tool_name=_TOOL)
        return ToolError(message, tool_name=_TOOL)


def _read(response: requests.Response, limit: int, stop: _Deadline) -> bytes:
    body = bytearray()
    try:
        for chunk in response.iter_content(chunk_size=_CHUNK):
            body += chunk
            if len(body) > limit:
                raise ToolError(f"the response is over {limit} bytes; not fetched", tool_name=_TOOL)
            if stop.fired:
                break
    except (requests.RequestException, OSError) as err:
        raise stop.error(f"the connection failed while reading: {type(err).__name__}") from err
    if stop.fired:
        raise stop.error("")
    return bytes(body)
