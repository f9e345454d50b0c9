"""Shell calls through the agent's one approval flow, against the scripted server.

A read-only command runs free; a destructive one waits for the approver,
the stream event or a paused turn, and never runs unapproved.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_smith import (
    Agent,
    ApprovalRequest,
    ApprovalRequested,
    ApprovalRequired,
    LlmClient,
    Runtime,
    ShellPolicy,
    ShellToolkit,
)
from tests.support.approvals import RecordingApprover, denied, tool_contents
from tests.support.llm_server import Calls, ScriptedLlmServer, Text

LS = ("run_command", {"command": "ls"})
RM = ("run_command", {"command": "rm -r build"})


@pytest.fixture
def shell(root: Path) -> ShellToolkit:
    (root / "build").mkdir()
    return ShellToolkit(ShellPolicy(root=root, timeout=30.0))


def test_the_approver_is_asked_only_about_the_destructive_call(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, shell: ShellToolkit, root: Path
) -> None:
    llm_server.script(Calls(LS, RM), Text("done"))
    approver = RecordingApprover(answer=False)
    agent = Agent(llm, tools=shell.tools(), runtime=runtime, approver=approver)
    agent.send("tidy up")

    (request,) = approver.asked
    assert isinstance(request, ApprovalRequest)
    assert request.arguments == {"command": "rm -r build"}
    assert (root / "build").is_dir()  # denied: never ran
    listing, refusal = tool_contents(llm_server.requests[1])
    assert listing == "build\n\n[exit code 0]"
    assert refusal == denied("not approved")


def test_an_approved_destructive_call_runs(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, shell: ShellToolkit, root: Path
) -> None:
    llm_server.script(Calls(RM), Text("done"))
    agent = Agent(llm, tools=shell.tools(), runtime=runtime, approver=lambda request: True)
    agent.send("remove the build folder")
    assert not (root / "build").exists()


def test_a_stream_asks_with_an_event_and_an_unanswered_event_denies(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, shell: ShellToolkit, root: Path
) -> None:
    llm_server.script(Calls(LS, RM), Text("done"))
    agent = Agent(llm, tools=shell.tools(), runtime=runtime)
    asked = [e for e in agent.stream("tidy up") if isinstance(e, ApprovalRequested)]
    assert [e.request.arguments["command"] for e in asked] == ["rm -r build"]
    assert (root / "build").is_dir()
    assert tool_contents(llm_server.requests[1])[1] == denied("no answer to the approval request")


def test_send_without_an_approver_pauses_and_runs_nothing(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, shell: ShellToolkit, root: Path
) -> None:
    llm_server.script(Calls(RM), Text("done"))
    agent = Agent(llm, tools=shell.tools(), runtime=runtime)
    with pytest.raises(ApprovalRequired):
        agent.send("remove the build folder")
    assert (root / "build").is_dir()
    assert len(llm_server.requests) == 1
