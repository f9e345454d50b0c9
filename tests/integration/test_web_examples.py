"""The web examples run as shipped: Flask and Django apps with the agent mounted at /agent."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
import requests

from agent_smith.web.serve import WebServer
from tests.support.llm_server import Calls, ScriptedLlmServer, Text
from tests.support.web import chat_body, decision_body, sse_data

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "web"
TIMEOUT = 30


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"{name}_example", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def environment(
    monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLlmServer, tmp_path: Path
) -> ScriptedLlmServer:
    monkeypatch.setenv("LLAMA_SERVER_URL", llm_server.url)
    monkeypatch.setenv("AGENT_SMITH_SESSIONS", str(tmp_path / "conversations.db"))
    return llm_server


def test_the_flask_example_mounts_the_agent_behind_its_login(
    environment: ScriptedLlmServer,
) -> None:
    pytest.importorskip("flask")
    example = _load("flask_mount")
    with WebServer(example.app).start() as server:
        url = server.url
        anonymous = requests.post(
            f"{url}/agent/api/chat", json=chat_body("c1", "hi"), timeout=TIMEOUT
        )
        assert anonymous.status_code == 401

        ada, bob = requests.Session(), requests.Session()
        ada.post(f"{url}/login", data={"user": "ada"}, timeout=TIMEOUT)
        bob.post(f"{url}/login", data={"user": "bob"}, timeout=TIMEOUT)
        assert "Chat with the agent" in ada.get(f"{url}/", timeout=TIMEOUT).text
        page = ada.get(f"{url}/agent", timeout=TIMEOUT)  # redirected to /agent/
        assert page.url == f"{url}/agent/"
        assert "agent_smith dev UI" in page.text

        environment.script(Calls(("save_note", {"text": "milk"})), Text("Noted."))
        asked = sse_data(
            ada.post(f"{url}/agent/api/chat", json=chat_body("c1", "Note milk"), timeout=TIMEOUT)
        )
        assert any(c != "[DONE]" and c["type"] == "tool-approval-request" for c in asked)
        assert bob.get(f"{url}/agent/api/conversations", timeout=TIMEOUT).json() == []
        done = sse_data(
            ada.post(
                f"{url}/agent/api/chat", json=decision_body("c1", "call_0", True), timeout=TIMEOUT
            )
        )
        assert done[2] == {
            "type": "tool-output-available",
            "toolCallId": "call_0",
            "output": "Saved note: milk",
            "dynamic": True,
        }
        assert example.NOTES == ["milk"]
        listed = ada.get(f"{url}/agent/api/conversations", timeout=TIMEOUT).json()
        assert [c["title"] for c in listed] == ["Note milk"]


def test_the_flask_example_shows_a_typed_stop_as_one_error_chunk(
    environment: ScriptedLlmServer,
) -> None:
    pytest.importorskip("flask")
    environment.script(Text("Paris is sunny today and the weather is fine. " * 12))
    with WebServer(_load("flask_mount").app).start() as server:
        ada = requests.Session()
        ada.post(f"{server.url}/login", data={"user": "ada"}, timeout=TIMEOUT)
        reply = ada.post(
            f"{server.url}/agent/api/chat", json=chat_body("c1", "Weather?"), timeout=TIMEOUT
        )
    (error,) = [c for c in sse_data(reply) if c != "[DONE]" and c["type"] == "error"]
    assert "stopped: the reply kept repeating" in error["errorText"]
    assert "\n" not in error["errorText"] and "Traceback" not in reply.text
