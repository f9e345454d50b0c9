"""Poster: a POST sent as Session.post would send it, the environment read once."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import requests

from agent_smith._internal.posting import Poster
from tests.support.llm_server import ScriptedLlmServer, Text


def post(poster: Poster, session: requests.Session) -> requests.Response:
    response = poster.post(
        session, data=b'{"messages": []}', headers={"X-Test": "1"}, timeout=10.0, stream=False
    )
    response.close()
    return response


def test_a_netrc_entry_applies_as_with_session_post(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login user password secret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    with ScriptedLlmServer() as server, requests.Session() as session:
        server.script(Text("a"), Text("b"))
        url = server.url + "/v1/chat/completions"
        post(Poster(url), session)
        session.post(url, data=b"{}").close()
    expected = "Basic " + base64.b64encode(b"user:secret").decode()
    assert [h.get("Authorization") for h in server.headers] == [expected, expected]
    assert server.headers[0]["X-Test"] == "1"


def test_the_sessions_own_auth_wins_and_no_netrc_means_no_auth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NETRC", str(tmp_path / "missing"))
    with ScriptedLlmServer() as server, requests.Session() as session:
        server.script(Text("a"), Text("b"))
        url = server.url + "/v1/chat/completions"
        post(Poster(url), session)
        session.auth = ("own", "pw")
        post(Poster(url), session)
    assert "Authorization" not in server.headers[0]
    assert server.headers[1]["Authorization"].startswith("Basic ")


def test_proxy_variables_are_read_once_per_session(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    poster = Poster("http://llm.example/v1/chat/completions")
    session = requests.Session()
    settings, _ = poster._for(session)
    assert settings["proxies"]["http"] == "http://proxy.invalid:3128"
    monkeypatch.setenv("HTTP_PROXY", "http://other.invalid:3128")
    assert poster._for(session)[0]["proxies"]["http"] == "http://proxy.invalid:3128"
    fresh = requests.Session()
    assert poster._for(fresh)[0]["proxies"]["http"] == "http://other.invalid:3128"
    session.close()
    fresh.close()


def test_repeated_posts_send_their_own_bodies_and_the_sessions_cookies() -> None:
    with ScriptedLlmServer() as server, requests.Session() as session:
        server.script(Text("a"), Text("b"), Text("c"))
        poster = Poster(server.url + "/v1/chat/completions")
        for n in range(2):
            poster.post(
                session,
                data=b'{"n": %d, "pad": "%s"}' % (n, b"x" * n),
                headers={"Content-Type": "application/json"},
                timeout=10.0,
                stream=False,
            ).close()
        session.cookies.set("lb", "node-2")  # as a load balancer's Set-Cookie would
        poster.post(
            session,
            data=b'{"n": 2}',
            headers={"Content-Type": "application/json"},
            timeout=10.0,
            stream=False,
        ).close()
    assert [r["n"] for r in server.requests] == [0, 1, 2]
    assert "Cookie" not in server.headers[1] and server.headers[2]["Cookie"] == "lb=node-2"
    assert server.headers[1]["Content-Length"] == str(len(b'{"n": 1, "pad": "x"}'))
