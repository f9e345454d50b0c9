"""Schema validation never reaches the network for a ``$ref``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agent_smith.tools.validation import validation_errors


@pytest.fixture
def schema_host() -> Iterator[tuple[str, list[str]]]:
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            body = b'{"type": "string"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/schema+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, name="schema-host")
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", asked
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_remote_ref_is_reported_unresolvable_and_never_fetched(
    schema_host: tuple[str, list[str]],
) -> None:
    url, asked = schema_host
    schema = {"type": "object", "properties": {"city": {"$ref": f"{url}/city.json"}}}

    errors = validation_errors(schema, {"city": 7})

    assert errors == [f"the schema refers to '{url}/city.json', which is not in the schema"]
    assert asked == []


def test_a_local_ref_still_resolves() -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"$ref": "#/$defs/city"}},
        "$defs": {"city": {"type": "string"}},
    }

    assert validation_errors(schema, {"city": "Paris"}) == []
    assert validation_errors(schema, {"city": 7}) == ["at 'city': 7 is not of type 'string'"]
