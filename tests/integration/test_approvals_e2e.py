"""Approvals with real collaborators: a turn resumed in another process, and MCP tools."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_smith import (
    Agent,
    ApprovalRequired,
    Decision,
    FullMemory,
    LlmClient,
    McpClient,
    Runtime,
    SqliteSession,
    ToolMessage,
    messages_from_json,
    messages_to_json,
    strip_orphans,
)
from tests.integration.approval_worker import build_agent
from tests.integration.servers import sdk_stdio
from tests.support.approvals import RecordingApprover, denied, tool_contents
from tests.support.llm_server import Calls, ScriptedLlmServer, Text

pytestmark = pytest.mark.usefixtures("no_thread_leak")

TIMEOUT = 60.0
WORKER = Path(__file__).with_name("approval_worker.py")
ROOT = Path(__file__).resolve().parents[2]


def _pause(server: ScriptedLlmServer, workdir: Path) -> ApprovalRequired:
    """Run the turn here until it pauses; save the history and the state as the worker expects."""
    with Runtime() as runtime, build_agent(server.url, workdir, runtime, FullMemory()) as agent:
        with pytest.raises(ApprovalRequired) as caught:
            agent.send("note that the meeting moved")
        (workdir / "history.json").write_text(messages_to_json(agent.history), "utf-8")
        (workdir / "state.json").write_text(caught.value.state.to_json(), "utf-8")
    return caught.value


def _resume_elsewhere(
    server: ScriptedLlmServer, workdir: Path, decisions: dict[str, object], *extra: str
) -> str:
    done = subprocess.run(
        [sys.executable, str(WORKER), server.url, str(workdir), json.dumps(decisions), *extra],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=TIMEOUT,
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("approve", [True, False])
def test_a_paused_turn_resumes_in_a_fresh_process_from_json(tmp_path: Path, approve: bool) -> None:
    with ScriptedLlmServer() as server:
        server.script(
            Calls(("write_note", {"name": "meeting", "text": "moved to 3pm"})),
            Text("Noted." if approve else "I did not write it."),
        )
        paused = _pause(server, tmp_path)
        assert [r.tool_name for r in paused.requests] == ["write_note"]
        assert len(server.requests) == 1 and not (tmp_path / "meeting.txt").exists()

        decision = True if approve else "the user said no"
        out = _resume_elsewhere(server, tmp_path, {paused.requests[0].call_id: decision})

    assert out == ("Noted.\n" if approve else "I did not write it.\n")
    assert (tmp_path / "meeting.txt").exists() is approve
    expected = "wrote meeting.txt" if approve else denied("the user said no")
    assert tool_contents(server.requests[1]) == [expected]
    after = messages_from_json((tmp_path / "history-after.json").read_text("utf-8"))
    assert [m.role for m in after] == ["user", "assistant", "tool", "assistant"]
    assert strip_orphans(after) == after


def test_a_paused_turn_stored_in_a_session_resumes_in_another_worker_process(
    tmp_path: Path,
) -> None:
    with ScriptedLlmServer() as server:
        server.script(Calls(("write_note", {"name": "meeting", "text": "3pm"})), Text("Noted."))
        with (
            Runtime() as runtime,
            SqliteSession(tmp_path / "sessions.db", "c1") as session,
            build_agent(server.url, tmp_path, runtime, FullMemory(), session) as agent,
            pytest.raises(ApprovalRequired) as caught,
        ):
            agent.send("note that the meeting moved")
        call_id = caught.value.requests[0].call_id

        out = _resume_elsewhere(server, tmp_path, {call_id: True}, "--session")

    assert out == "Noted.\n" and (tmp_path / "meeting.txt").read_text("utf-8") == "3pm"
    with SqliteSession(tmp_path / "sessions.db", "c1") as session:
        state = session.load()
    assert [m.role for m in state.messages] == ["user", "assistant", "tool", "assistant"]
    assert state.paused_turn is None


def test_a_state_resumed_against_the_wrong_history_fails_in_the_worker(tmp_path: Path) -> None:
    with ScriptedLlmServer() as server:
        server.script(Calls(("write_note", {"name": "n", "text": "t"})))
        paused = _pause(server, tmp_path)
        (tmp_path / "history.json").write_text("[]", "utf-8")  # the wrong conversation
        done = subprocess.run(
            [sys.executable, str(WORKER), server.url, str(tmp_path), '{"call_0": true}'],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            cwd=ROOT,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )
    assert done.returncode != 0
    assert "PausedTurnMismatch" in done.stderr and "does not end with" in done.stderr
    assert paused.requests and len(server.requests) == 1


# -- MCP tools -----------------------------------------------------------------


@pytest.fixture(scope="module")
def echo_needs_approval() -> Iterator[McpClient]:
    """The SDK server over stdio, its ``echo`` tool marked (one start for the module)."""
    with McpClient.connect(sdk_stdio(require_approval=("echo",))) as client:
        yield client


def test_mcp_tools_named_in_require_approval_ask_and_the_rest_run(
    echo_needs_approval: McpClient, runtime: Runtime
) -> None:
    with ScriptedLlmServer() as server:
        server.script(
            Calls(("mcp_sdk__echo", {"text": "secret"}), ("mcp_sdk__add", {"a": 2, "b": 3})),
            Text("Added."),
        )
        approver = RecordingApprover(Decision.deny("no echoing"))
        llm = LlmClient(server.url, "test", runtime=runtime, max_retries=0)
        with Agent(llm, runtime=runtime, approver=approver) as agent:
            agent.add_mcp_client(echo_needs_approval)
            assert agent.send("go").content == "Added."
    (request,) = approver.asked
    assert (request.tool_name, request.description) == (
        "mcp_sdk__echo",
        "Return the text unchanged.",
    )
    assert tool_contents(server.requests[1]) == [denied("no echoing"), "5"]


def test_an_mcp_call_pauses_and_runs_on_the_server_when_resumed(
    echo_needs_approval: McpClient, runtime: Runtime
) -> None:
    with ScriptedLlmServer() as server:
        server.script(Calls(("mcp_sdk__echo", {"text": "hello"})), Text("Echoed."))
        llm = LlmClient(server.url, "test", runtime=runtime, max_retries=0)
        with Agent(llm, runtime=runtime) as agent:
            agent.add_mcp_client(echo_needs_approval)
            with pytest.raises(ApprovalRequired) as caught:
                agent.send("go")
            assert len(server.requests) == 1
            final = agent.resume(caught.value.state, {"call_0": True})
            results = [m for m in agent.history if isinstance(m, ToolMessage)]
    assert final.content == "Echoed."
    assert [m.content for m in results] == ["hello"]  # the server's answer
