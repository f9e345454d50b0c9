"""fetch_url against a real threaded HTTP server on 127.0.0.1, and the SSRF battery.

Every test runs under a guard that fails any connection to an address other
than 127.0.0.1, so a refusal that does not happen fails the test instead of
sending traffic anywhere.
"""

from __future__ import annotations

import datetime
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agent_smith import ConfigError, ToolError, WebPolicy, WebToolkit
from agent_smith.base.cancellation import CancellationSource
from agent_smith.tools.base import ToolContext

Route = Callable[[BaseHTTPRequestHandler], None]
WAIT = 10.0


class _Server(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True


class WebServer:
    """A threaded HTTP server on 127.0.0.1 with routes by path; it records Host headers."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.routes: dict[str, Route] = {}
        self.hosts: list[str] = []
        self.stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.hosts.append(self.headers.get("Host", ""))
                route = server.routes.get(self.path)
                if route is None:
                    self.send_error(404, "nothing here")
                else:
                    route(self)

            def log_message(self, *args: Any) -> None:
                pass

        self._http = _Server(("127.0.0.1", 0), Handler)
        if tls is not None:
            self._http.socket = tls.wrap_socket(self._http.socket, server_side=True)
        self.port = self._http.server_address[1]
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, name="test-web"
        )
        self._thread.start()

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def close(self) -> None:
        self.stop.set()
        self._http.shutdown()
        self._http.server_close()
        self._thread.join(WAIT)


def send(handler: BaseHTTPRequestHandler, body: bytes, kind: str = "text/html") -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def redirect(location: str) -> Route:
    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(302)
        handler.send_header("Location", location)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    return route


PAGE = (
    b"<html><head><title>The page</title><style>p{}</style></head><body>"
    b"<h1>Hello</h1><p>one <b>two</b></p><script>alert(1)</script><ul><li>a</li></ul></body></html>"
)


@pytest.fixture(autouse=True)
def only_loopback(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Fail any connection anywhere but 127.0.0.1 (and record where connections went)."""
    connected: list[Any] = []
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: Any) -> None:
        assert address[0] == "127.0.0.1", f"a fetch tried to connect to {address!r}"
        connected.append(address)
        real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    return connected


@pytest.fixture
def server() -> Iterator[WebServer]:
    web = WebServer()
    web.routes["/"] = lambda h: send(h, PAGE)
    yield web
    web.close()


@pytest.fixture
def allowed() -> WebToolkit:
    """A toolkit that lets the test server's literal address through, and nothing else."""
    return WebToolkit(WebPolicy(allow_hosts=("127.0.0.1",), timeout=WAIT))


def fake_dns(monkeypatch: pytest.MonkeyPatch, names: dict[str, str]) -> list[str]:
    """Resolve ``names`` to the given addresses without DNS; record every lookup of them."""
    looked_up: list[str] = []
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host in names:
            looked_up.append(host)
            return real(names[host], port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return looked_up


# -- fetching ------------------------------------------------------------------


def test_a_page_becomes_readable_text(server: WebServer, allowed: WebToolkit) -> None:
    assert allowed.fetch(server.url()) == (f"{server.url()}\n\nThe page\n\n# Hello\none two\n- a")


def test_plain_text_and_json_come_back_as_they_are(server: WebServer, allowed: WebToolkit) -> None:
    server.routes["/t"] = lambda h: send(h, b"a  b\n<p>", "text/plain; charset=utf-8")
    server.routes["/j"] = lambda h: send(h, b'{"a": 1}', "application/json")
    assert allowed.fetch(server.url("/t")).endswith("\n\na  b\n<p>")
    assert allowed.fetch(server.url("/j")).endswith('\n\n{"a": 1}')


def test_binary_content_is_refused(server: WebServer, allowed: WebToolkit) -> None:
    server.routes["/img"] = lambda h: send(h, b"\x89PNG", "image/png")
    with pytest.raises(ToolError, match="image/png, not text"):
        allowed.fetch(server.url("/img"))


def test_an_http_error_is_an_error_with_an_excerpt(server: WebServer, allowed: WebToolkit) -> None:
    with pytest.raises(
        ToolError,
        match=r"HTTP 404 nothing here from http://127\.0\.0\.1:\d+/missing: Error response",
    ):
        allowed.fetch(server.url("/missing"))


def test_a_body_over_the_cap_is_refused(server: WebServer) -> None:
    server.routes["/big"] = lambda h: send(h, b"x" * 100_000, "text/plain")
    web = WebToolkit(WebPolicy(allow_hosts=("127.0.0.1",), max_bytes=50_000))
    with pytest.raises(ToolError, match="over 50000 bytes"):
        web.fetch(server.url("/big"))


def test_the_text_returned_is_capped(server: WebServer) -> None:
    server.routes["/long"] = lambda h: send(h, b"y" * 5000, "text/plain")
    web = WebToolkit(WebPolicy(allow_hosts=("127.0.0.1",), max_text_bytes=100))
    assert web.fetch(server.url("/long")).endswith("…[truncated, original size 5000 bytes]")


def test_a_server_that_trickles_is_cut_off_at_the_deadline(server: WebServer) -> None:
    def trickle(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain")
        handler.end_headers()
        try:
            while not server.stop.wait(0.05):  # a byte every 50 ms, forever
                handler.wfile.write(b"x")
                handler.wfile.flush()
        except OSError:
            pass  # the client went away: what the test wants

    server.routes["/slow"] = trickle
    web = WebToolkit(WebPolicy(allow_hosts=("127.0.0.1",), timeout=0.5))
    with pytest.raises(ToolError, match="timed out"):
        web.fetch(server.url("/slow"))


def test_cancelling_the_call_stops_the_fetch(server: WebServer, context: ToolContext) -> None:
    entered = threading.Event()

    def hang(handler: BaseHTTPRequestHandler) -> None:
        entered.set()
        server.stop.wait(WAIT)  # never answers while the test runs

    server.routes["/hang"] = hang
    source = CancellationSource()
    ctx = ToolContext(source.token, 30.0, "c", context.logger, context.runtime)
    web = WebToolkit(WebPolicy(allow_hosts=("127.0.0.1",), timeout=60.0))
    errors: list[BaseException] = []

    def fetch() -> None:
        try:
            web.fetch(server.url("/hang"), ctx=ctx)
        except ToolError as err:
            errors.append(err)

    thread = threading.Thread(target=fetch, name="test-fetch")
    thread.start()
    assert entered.wait(WAIT)
    source.cancel()
    thread.join(WAIT)
    assert not thread.is_alive()
    assert "cancelled" in str(errors[0])


def test_redirects_are_followed_up_to_the_cap(server: WebServer, allowed: WebToolkit) -> None:
    server.routes["/a"] = redirect("/b")
    server.routes["/b"] = redirect("/")
    assert allowed.fetch(server.url("/a")).startswith(server.url("/") + "\n")
    server.routes["/loop"] = redirect("/loop")
    with pytest.raises(ToolError, match="more than 5 redirects"):
        allowed.fetch(server.url("/loop"))


def test_only_http_and_https_without_credentials(allowed: WebToolkit) -> None:
    for url in ("file:///etc/passwd", "ftp://example.com/", "gopher://x/", "javascript:1"):
        with pytest.raises(ToolError, match="only http and https"):
            allowed.fetch(url)
    with pytest.raises(ToolError, match="credentials"):
        allowed.fetch("http://user:pass@127.0.0.1/")
    with pytest.raises(ToolError, match="not a valid URL"):
        allowed.fetch("http:///path")


def test_fetch_url_only_reads(allowed: WebToolkit) -> None:
    assert [(t.name, t.options.read_only) for t in allowed.tools()] == [("fetch_url", True)]


def test_a_policy_with_a_bad_network_is_refused() -> None:
    with pytest.raises(ConfigError, match="allow_networks"):
        WebPolicy(allow_networks=("not a network",))


# -- SSRF ------------------------------------------------------------------------


def test_loopback_is_refused_by_default_and_no_request_is_made(
    server: WebServer, only_loopback: list[Any]
) -> None:
    with pytest.raises(ToolError, match=r"refused: '127\.0\.0\.1' resolves to 127\.0\.0\.1"):
        WebToolkit().fetch(server.url())
    assert only_loopback == [] and server.hosts == []


@pytest.mark.parametrize(
    "host",
    [
        "2130706433",  # decimal
        "0177.0.0.1",  # octal
        "0x7f.0.0.1",  # hex
        "0x7f000001",  # one hex number
        "127.1",  # short form
        "[::ffff:127.0.0.1]",  # IPv4-mapped IPv6
        "[::ffff:7f00:1]",  # IPv4-mapped, hex
        "[64:ff9b::7f00:1]",  # NAT64 around loopback
        "[::1]",
        "0.0.0.0",
        "0",
        "localhost",
    ],
)
def test_every_spelling_of_loopback_is_refused_even_when_one_is_allowed(
    server: WebServer, allowed: WebToolkit, only_loopback: list[Any], host: str
) -> None:
    with pytest.raises(ToolError, match=r"refused: .* non-public range"):
        allowed.fetch(server.url(host=host))
    assert only_loopback == []


@pytest.mark.parametrize(
    "host",
    [
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack metadata
        "[fd00:ec2::254]",  # AWS metadata over IPv6
        "100.100.100.200",  # Alibaba metadata
        "168.63.129.16",  # Azure wireserver
        "192.0.0.192",  # Oracle metadata
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "100.64.0.1",
        "[fe80::1]",
        "[fc00::1]",
        "224.0.0.1",
        "[ff02::1]",
        "240.0.0.1",
        "255.255.255.255",
        "198.18.0.1",
        "192.0.2.1",
        "[2001:db8::1]",
        "[2002:7f00:1::]",
    ],
)
def test_private_link_local_multicast_reserved_and_metadata_addresses_are_refused(
    only_loopback: list[Any], host: str
) -> None:
    with pytest.raises(ToolError, match="non-public range"):
        WebToolkit().fetch(f"http://{host}/latest/meta-data/")
    assert only_loopback == []


def test_a_name_that_resolves_to_loopback_is_refused(
    server: WebServer, monkeypatch: pytest.MonkeyPatch, only_loopback: list[Any]
) -> None:
    fake_dns(monkeypatch, {"innocent.example": "127.0.0.1"})
    with pytest.raises(ToolError, match=r"'innocent\.example' resolves to 127\.0\.0\.1"):
        WebToolkit().fetch(server.url(host="innocent.example"))
    assert only_loopback == []


def test_an_international_name_is_checked_in_the_form_that_is_sent(
    server: WebServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    looked_up = fake_dns(monkeypatch, {"xn--bcher-kva.example": "127.0.0.1"})
    with pytest.raises(ToolError, match="non-public range"):
        WebToolkit().fetch(server.url(host="bücher.example"))
    web = WebToolkit(WebPolicy(allow_hosts=("xn--bcher-kva.example",)))
    assert "# Hello" in web.fetch(server.url(host="bücher.example"))
    assert looked_up == ["xn--bcher-kva.example"] * 2


def test_a_name_with_any_private_address_among_its_answers_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = socket.getaddrinfo

    def two_answers(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "mixed.example":
            return real("93.184.215.14", port, *args, **kwargs) + real(
                "10.1.2.3", port, *args, **kwargs
            )
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", two_answers)
    with pytest.raises(ToolError, match=r"10\.1\.2\.3"):
        WebToolkit().fetch("http://mixed.example/")


def test_a_redirect_to_a_private_address_is_refused(
    server: WebServer, allowed: WebToolkit, only_loopback: list[Any]
) -> None:
    server.routes["/go"] = redirect("http://10.0.0.1/admin")
    with pytest.raises(ToolError, match=r"refused: '10\.0\.0\.1'"):
        allowed.fetch(server.url("/go"))
    assert len(only_loopback) == 1  # only the allowed first hop was connected


def test_a_redirect_to_another_spelling_of_loopback_is_refused(
    server: WebServer, allowed: WebToolkit
) -> None:
    server.routes["/go"] = redirect(server.url(host="localhost"))
    with pytest.raises(ToolError, match="refused: 'localhost'"):
        allowed.fetch(server.url("/go"))
    assert server.hosts == [f"127.0.0.1:{server.port}"]


def test_the_name_is_resolved_once_and_the_checked_address_is_the_one_connected(
    server: WebServer, monkeypatch: pytest.MonkeyPatch, only_loopback: list[Any]
) -> None:
    looked_up = fake_dns(monkeypatch, {"intranet.test": "127.0.0.1"})
    web = WebToolkit(WebPolicy(allow_hosts=("intranet.test",)))
    assert "# Hello" in web.fetch(server.url(host="intranet.test"))
    assert looked_up == ["intranet.test"]  # no second lookup that could rebind
    assert only_loopback == [("127.0.0.1", server.port)]
    assert server.hosts == [f"intranet.test:{server.port}"]  # the Host header kept the name


def test_an_allowed_network_lets_a_range_through(
    server: WebServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_dns(monkeypatch, {"app.corp": "127.0.0.1"})
    web = WebToolkit(WebPolicy(allow_networks=("127.0.0.0/8",)))
    assert "# Hello" in web.fetch(server.url(host="app.corp"))
    with pytest.raises(ToolError, match="non-public range"):
        web.fetch("http://10.0.0.1/")


def test_proxies_from_the_environment_are_ignored(
    server: WebServer, allowed: WebToolkit, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://10.9.9.9:3128")
    monkeypatch.setenv("http_proxy", "http://10.9.9.9:3128")
    assert "# Hello" in allowed.fetch(server.url())


# -- HTTPS to a pinned address ---------------------------------------------------


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[WebServer, str]]:
    """The test server behind TLS, with a self-signed certificate for ``pinned.test``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pinned.test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("pinned.test")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    web = WebServer(context)
    web.routes["/"] = lambda h: send(h, PAGE)
    yield web, str(cert_file)
    web.close()


def test_https_connects_to_the_checked_address_and_verifies_the_name(
    tls_server: tuple[WebServer, str], monkeypatch: pytest.MonkeyPatch, only_loopback: list[Any]
) -> None:
    server, ca = tls_server
    fake_dns(monkeypatch, {"pinned.test": "127.0.0.1", "other.test": "127.0.0.1"})
    web = WebToolkit(WebPolicy(allow_hosts=("pinned.test", "other.test"), ca_bundle=ca))
    url = f"https://pinned.test:{server.port}/"
    assert "# Hello" in web.fetch(url)
    assert only_loopback == [("127.0.0.1", server.port)]
    assert server.hosts == [f"pinned.test:{server.port}"]
    # Same address, other name: the certificate is checked against the URL's name.
    with pytest.raises(ToolError, match="SSLError"):
        web.fetch(f"https://other.test:{server.port}/")
