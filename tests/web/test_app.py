"""WebApp's routing without a server: called as a WSGI function."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from agent_smith import Agent, ConfigError, LlmClient, Session, WebApp


def call(app: WebApp, method: str, path: str, **extra: Any) -> tuple[str, dict[str, str], bytes]:
    seen: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        seen["status"], seen["headers"] = status, dict(headers)

    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "SCRIPT_NAME": "/agent",
        "wsgi.input": io.BytesIO(b""),
        **extra,
    }
    body = b"".join(app(environ, start_response))
    return seen["status"], seen["headers"], body


@pytest.fixture
def app(tmp_path: Path) -> WebApp:
    llm = LlmClient("http://127.0.0.1:9", "test")

    def build(session: Session) -> Agent:
        return Agent(llm, session=session)

    return WebApp(build, sessions=tmp_path / "c.db")


def test_the_dev_ui_is_one_self_contained_page(app: WebApp) -> None:
    status, headers, body = call(app, "GET", "/")
    assert status == "200 OK"
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    page = body.decode()
    assert 'fetch("api/chat"' in page  # relative: works wherever the app is mounted
    assert "http://" not in page and "https://" not in page  # no CDN, works offline


def test_the_mount_point_without_a_slash_redirects_to_it(app: WebApp) -> None:
    status, headers, _ = call(app, "GET", "")
    assert status == "308 Permanent Redirect"
    assert headers["Location"] == "/agent/"


def test_the_dev_ui_can_be_switched_off(tmp_path: Path) -> None:
    app = WebApp(lambda session: Agent(LlmClient("http://127.0.0.1:9")), dev_ui=False)
    status, _, _ = call(app, "GET", "/")
    assert status == "404 Not Found"


def test_an_unknown_conversation_is_404_and_the_list_starts_empty(app: WebApp) -> None:
    status, _, body = call(app, "GET", "/api/conversations")
    assert (status, json.loads(body)) == ("200 OK", [])
    status, _, body = call(app, "GET", "/api/conversations/nope")
    assert status == "404 Not Found"
    assert "no conversation 'nope'" in json.loads(body)["error"]
    status, _, body = call(app, "GET", "/api/conversations/bad%20id")
    assert status == "400 Bad Request"


def test_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="agent_factory"):
        WebApp("not callable")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="max_body_bytes"):
        WebApp(lambda session: None, max_body_bytes=0)  # type: ignore[arg-type,return-value]
    with pytest.raises(ConfigError, match="sessions"):
        WebApp(lambda session: None, sessions=3)  # type: ignore[arg-type,return-value]


def test_eval_reports_are_listed_newest_first_and_served_as_pages(tmp_path: Path) -> None:
    from agent_smith.evals import Case, Contains, Dataset, evaluate
    from agent_smith.llm.testing import TestModel

    folder = tmp_path / "reports"
    folder.mkdir()
    cases = Dataset((Case("a", "a", expected="a"), Case("b", "b", expected="z")), (Contains(),))
    evaluate(cases, lambda: Agent(TestModel(respond=lambda r: "a"))).save(folder / "old.json")
    (folder / "broken.json").write_text("{}", encoding="utf-8")
    app = WebApp(lambda s: Agent(LlmClient("http://127.0.0.1:9")), eval_reports=folder)
    status, _, body = call(app, "GET", "/api/evals")
    listing = json.loads(body)
    assert status == "200 OK" and listing["enabled"] is True
    files = {r["file"]: r for r in listing["reports"]}
    assert files["old.json"]["pass_rate"] == 0.5 and files["old.json"]["cases"] == 2
    assert "must be an object with 'cases'" in files["broken.json"]["error"]
    status, headers, page = call(app, "GET", "/evals/old")
    assert status == "200 OK" and 'data-metric="pass_rate" data-value="0.5"' in page.decode()
    assert "frame-ancestors 'self'" in headers["Content-Security-Policy"]
    for name in ("nope", "..%2Fx", ".hidden"):
        assert call(app, "GET", f"/evals/{name}")[0] == "404 Not Found"
    assert call(app, "GET", "/evals/broken")[0].startswith("422")


def test_without_eval_reports_the_view_is_off(app: WebApp) -> None:
    status, _, body = call(app, "GET", "/api/evals")
    assert (status, json.loads(body)) == ("200 OK", {"enabled": False})
    assert call(app, "GET", "/evals/x")[0] == "404 Not Found"
    with pytest.raises(ConfigError, match="not a directory"):
        WebApp(lambda s: Agent(LlmClient("http://127.0.0.1:9")), eval_reports="/nonexistent")
