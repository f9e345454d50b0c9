"""The web app driven by the protocols' own JavaScript clients from npm, in Node.

* ``ai`` (the Vercel AI SDK): its chat client — the code behind ``useChat`` —
  with ``DefaultChatTransport`` against ``/api/chat``, validating every chunk
  against the SDK's schema and assembling UI messages; the approval is given
  with ``addToolApprovalResponse`` and sent by the client itself
  (``sendAutomaticallyWhen``).
* ``@ag-ui/client``'s ``HttpAgent`` against ``/api/agui``: it verifies the
  order of the events (and fails the run on a violation), applies them to
  its messages, and answers the approval interrupt with ``resume``.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_smith import LlmClient, Runtime
from agent_smith.web.app import WebApp
from agent_smith.web.serve import WebServer
from tests.integration.peers import NPM_DIR, node_env, require_npm_bin, require_npm_package
from tests.support.llm_server import Calls, ScriptedLlmServer, Text
from tests.support.web import NOTES, factory


@pytest.fixture
def served(
    no_thread_leak: None, llm_server: ScriptedLlmServer, tmp_path: Path, runtime: Runtime
) -> Iterator[str]:
    require_npm_bin("node")
    require_npm_package("ai")
    require_npm_package("@ag-ui/client")
    llm = LlmClient(llm_server.url, "test", runtime=runtime)
    with WebServer(WebApp(factory(llm), sessions=tmp_path / "c.db")).start() as server:
        yield server.url


def run_node(script: str, *args: str) -> Any:
    done = subprocess.run(
        ["node", str(NPM_DIR / script), *args],
        env=node_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def script_three_turns(llm_server: ScriptedLlmServer) -> None:
    llm_server.script(
        Calls(("get_weather", {"city": "Paris"})),
        Text("Sunny in Paris today.", reasoning="The tool said sunny."),
        Calls(("save_note", {"text": "hello"})),
        Text("Saved your note."),
    )


def test_the_vercel_ai_sdk_chat_client_streams_and_approves(
    served: str, llm_server: ScriptedLlmServer, tmp_path: Path
) -> None:
    NOTES.clear()
    script_three_turns(llm_server)
    out = run_node("web_vercel_client.mjs", served, "vercel-chat")
    assert out["errors"] == []
    assert out["status"] == "ready"

    user, answer = out["afterFirst"]
    assert user["parts"] == [{"type": "text", "text": "What is the weather in Paris?"}]
    parts = [p for p in answer["parts"] if p["type"] != "step-start"]
    assert [p["type"] for p in parts] == ["dynamic-tool", "reasoning", "text"]
    call, reasoning, text = parts
    assert (call["toolName"], call["state"], call["input"], call["output"]) == (
        "get_weather",
        "output-available",
        {"city": "Paris"},
        "Sunny in Paris",
    )
    assert reasoning["text"] == "The tool said sunny."
    assert (text["text"], text["state"]) == ("Sunny in Paris today.", "done")
    assert answer["metadata"]["usage"]["totalTokens"] == 30

    waiting = out["afterPause"][-1]["parts"][-1]
    assert (waiting["toolName"], waiting["state"]) == ("save_note", "approval-requested")
    assert out["afterPause"][-1]["metadata"]["paused"] is True

    final = out["messages"][-1]  # the same assistant message, continued after approval
    assert final["id"] == out["afterPause"][-1]["id"]
    note = next(p for p in final["parts"] if p.get("toolName") == "save_note")
    assert (note["state"], note["output"]) == ("output-available", "saved: hello")
    assert final["parts"][-1]["text"] == "Saved your note."
    assert NOTES == ["hello"]


def test_the_ag_ui_client_verifies_the_events_and_resumes_an_interrupt(
    served: str, llm_server: ScriptedLlmServer
) -> None:
    NOTES.clear()
    script_three_turns(llm_server)
    out = run_node("web_agui_client.mjs", served, "agui-thread")
    assert out["first"] == "Sunny in Paris today."
    assert out["resumed"] == "Saved your note."
    (interrupt,) = out["interrupts"]
    assert (interrupt["reason"], interrupt["toolCallId"]) == ("tool_approval", "call_0")
    assert interrupt["metadata"] == {"toolName": "save_note", "arguments": {"text": "hello"}}
    assert [o["outcome"] for o in out["outcomes"]] == ["success", "interrupt", "success"]
    assert out["events"][:3] == ["RUN_STARTED", "STEP_STARTED", "TOOL_CALL_START"]
    assert "REASONING_MESSAGE_CONTENT" in out["events"]
    roles = [(m["role"], m.get("content")) for m in out["messages"]]
    assert roles[0] == ("user", "What is the weather in Paris?")
    assert ("tool", "Sunny in Paris") in roles
    assert roles[-1] == ("assistant", "Saved your note.")
    assert NOTES == ["hello"]
