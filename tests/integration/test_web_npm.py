"""The web app driven by the protocols' own JavaScript clients from npm, in Node.

* ``ai`` (the Vercel AI SDK): its chat client — the code behind ``useChat`` —
  with ``DefaultChatTransport`` against ``/api/chat``, validating every chunk
  against the SDK's schema and assembling UI messages; the approval is given
  with ``addToolApprovalResponse`` and sent by the client itself
  (``sendAutomaticallyWhen``).
* ``@ag-ui/client``'s ``HttpAgent`` against ``/api/agui``: it verifies the
  order of the events (and fails the run on a violation), applies them to
  its messages, and answers the approval interrupt with ``resume``.

Files both ways: each client sends a PNG with its question (a ``file`` part;
an ``image`` part), the scripted model sees it, and the image a tool returns
comes back (a ``file`` part of the assistant message; parts of the tool
message's content).
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
from tests.support.media import PNG, b64
from tests.support.web import CHART, NOTES, draw_chart, factory


@pytest.fixture
def served(
    no_thread_leak: None, llm_server: ScriptedLlmServer, tmp_path: Path, runtime: Runtime
) -> Iterator[str]:
    require_npm_bin("node")
    require_npm_package("ai")
    require_npm_package("@ag-ui/client")
    llm = LlmClient(llm_server.url, "test", runtime=runtime)
    app = WebApp(factory(llm, tools=[draw_chart]), sessions=tmp_path / "c.db")
    with WebServer(app).start() as server:
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


def script_a_chart(llm_server: ScriptedLlmServer) -> None:
    llm_server.script(Calls(("draw_chart", {"title": "red"})), Text("Here is your chart."))


def user_images_seen(llm_server: ScriptedLlmServer) -> list[str]:
    """The image URLs of the user's message in the model's first request."""
    question = llm_server.requests[0]["messages"][-1]
    return [p["image_url"]["url"] for p in question["content"] if p["type"] == "image_url"]


def test_the_vercel_ai_sdk_chat_client_sends_a_file_and_gets_a_tools_image_back(
    served: str, llm_server: ScriptedLlmServer
) -> None:
    script_a_chart(llm_server)
    out = run_node("web_vercel_files.mjs", served, "vercel-files", b64(PNG))
    assert (out["errors"], out["status"]) == ([], "ready")
    assert user_images_seen(llm_server) == [f"data:image/png;base64,{b64(PNG)}"]
    user, answer = out["messages"]
    assert [p["type"] for p in user["parts"]] == ["file", "text"]
    files = [p for p in answer["parts"] if p["type"] == "file"]
    assert files == [
        {"type": "file", "mediaType": "image/png", "url": f"data:image/png;base64,{b64(CHART)}"}
    ]
    assert answer["parts"][-1]["text"] == "Here is your chart."


def test_the_ag_ui_client_sends_an_image_part_and_gets_a_tools_image_back(
    served: str, llm_server: ScriptedLlmServer
) -> None:
    script_a_chart(llm_server)
    out = run_node("web_agui_files.mjs", served, "agui-files", b64(PNG))
    assert out["result"] == "Here is your chart."
    assert user_images_seen(llm_server) == [f"data:image/png;base64,{b64(PNG)}"]
    tool = next(m for m in out["messages"] if m["role"] == "tool")
    assert tool["content"] == [
        {"type": "text", "text": "the chart 'red'"},
        {"type": "image", "source": {"type": "data", "value": b64(CHART), "mimeType": "image/png"}},
    ]
