"""Pausing a turn for approval and resuming it, also from JSON, against the scripted server."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agent_smith import (
    Agent,
    AgentConfig,
    AgentHooks,
    AgentStopped,
    ApprovalRequest,
    ApprovalRequested,
    ApprovalRequired,
    AssistantMessage,
    ConfigError,
    Decision,
    FinalAnswer,
    LlmClient,
    ParseError,
    PausedTurn,
    RollingWindowMemory,
    Runtime,
    SqliteSession,
    TokenUsage,
    Tool,
    ToolCall,
    messages_from_json,
    messages_to_json,
    strip_orphans,
)
from agent_smith.agent.approval_gate import ABANDONED
from tests.support.approvals import (
    Ledger,
    denied,
    restored,
    tool_contents,
)
from tests.support.llm_server import Calls, ScriptedLlmServer, Text

# -- pause and resume ----------------------------------------------------------


def test_send_without_an_approver_pauses_and_resume_finishes_the_turn(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    tools: list[Tool],
    ledger: Ledger,
) -> None:
    llm_server.script(
        Calls(("delete_file", {"path": "a"}), ("look", {"path": "b"}), usage=(10, 5)),
        Text("All done.", usage=(20, 5)),
    )
    errors: list[Any] = []
    agent = Agent(llm, tools=tools, runtime=runtime, hooks=AgentHooks(on_error=errors.append))
    with pytest.raises(ApprovalRequired) as caught:
        agent.send("go")

    paused = caught.value
    assert [r.call_id for r in paused.requests] == ["call_0"]
    assert paused.state.call_ids == ("call_0", "call_1")
    assert "delete_file (call_0)" in str(paused)
    assert errors == []  # a pause is not an error
    assert ledger.ran == []  # not even the unmarked call ran
    history = agent.history
    assert isinstance(history[-1], AssistantMessage) and len(history[-1].tool_calls) == 2
    assert len(llm_server.requests) == 1  # nothing more went to the server

    final = agent.resume(paused.state, {"call_0": True})

    assert final.content == "All done."
    assert final.usage == TokenUsage(30, 10, 40)  # both rounds, across the pause
    assert sorted(ledger.ran) == ["delete a", "look b"]
    assert tool_contents(llm_server.requests[1]) == ["deleted a", "saw b"]
    assert strip_orphans(agent.history) == agent.history


def test_a_deferred_stream_event_pauses_and_resume_stream_goes_on(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    tools: list[Tool],
    ledger: Ledger,
) -> None:
    llm_server.script(
        Calls(("delete_file", {"path": "a"}), ("pay", {"amount": 500})), Text("Half done.")
    )
    agent = Agent(llm, tools=tools, runtime=runtime)
    with pytest.raises(ApprovalRequired) as caught:
        for event in agent.stream("go"):
            if isinstance(event, ApprovalRequested):
                if event.request.tool_name == "pay":
                    event.deny("too much")
                else:
                    event.defer()
    state = caught.value.state
    assert state.waiting == ("call_0",)
    assert state.decisions == {"call_1": Decision(False, "too much")}  # kept for the resume

    events = list(agent.resume_stream(state, {"call_0": "not now"}))

    assert [type(e).__name__ for e in events][:2] == ["ToolResultReady", "ToolResultReady"]
    assert isinstance(events[-1], FinalAnswer) and events[-1].message.content == "Half done."
    assert ledger.ran == []
    assert tool_contents(llm_server.requests[1]) == [denied("not now"), denied("too much")]


def test_resume_with_some_decisions_pauses_again_for_the_rest(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    tools: list[Tool],
    ledger: Ledger,
) -> None:
    llm_server.script(
        Calls(("delete_file", {"path": "a"}), ("delete_file", {"path": "b"})), Text("ok")
    )
    agent = Agent(llm, tools=tools, runtime=runtime)
    with pytest.raises(ApprovalRequired) as first:
        agent.send("go")
    with pytest.raises(ApprovalRequired) as second:
        agent.resume(first.value.state, {"call_1": True})
    assert second.value.state.waiting == ("call_0",)
    assert ledger.ran == [] and len(llm_server.requests) == 1
    agent.resume(second.value.state, {"call_0": False})
    assert ledger.ran == ["delete b"]


def test_a_resumed_turn_keeps_its_counters_and_guards(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, tools: list[Tool]
) -> None:
    same = Calls(("delete_file", {"path": "a"}))
    llm_server.script(same, same, same, Text("never reached"))
    agent = Agent(llm, tools=tools, runtime=runtime, config=AgentConfig(loop_guard_repeats=3))
    with pytest.raises(ApprovalRequired) as caught:
        agent.send("go")
    state = caught.value.state
    assert (state.iterations, state.tree_iterations, state.loop_repeats) == (1, 1, 1)
    with pytest.raises(ApprovalRequired) as caught:
        agent.resume(state, {"call_0": True})
    state = caught.value.state
    assert (state.iterations, state.loop_repeats) == (2, 2)
    with pytest.raises(AgentStopped) as stopped:
        agent.resume(state, {"call_0": True})
    assert stopped.value.condition == "loop_detected"  # counted across both pauses
    assert strip_orphans(agent.history) == agent.history


def test_a_state_that_does_not_match_the_history_is_refused_and_changes_nothing(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    tools: list[Tool],
    ledger: Ledger,
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a"})), Text("ok"))
    agent = Agent(llm, tools=tools, runtime=runtime, name="files")
    with pytest.raises(ApprovalRequired) as caught:
        agent.send("go")
    state = caught.value.state
    before = agent.history

    other = Agent(llm, tools=tools, runtime=runtime, name="other", memory=restored(before))
    with pytest.raises(ConfigError, match="'files'"):
        other.resume(state, {"call_0": True})
    with pytest.raises(ConfigError, match="no call 'call_9'"):
        agent.resume(state, {"call_9": True})
    with pytest.raises(ConfigError, match="PausedTurn"):
        agent.resume(state.to_json(), {"call_0": True})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="expected True, False"):
        agent.resume(state, {"call_0": 1})  # type: ignore[dict-item]
    tampered = AssistantMessage("", (ToolCall("call_0", "delete_file", {"path": "/"}),))
    memory = restored([*before[:-1], tampered])
    forged = Agent(llm, tools=tools, runtime=runtime, name="files", memory=memory)
    with pytest.raises(ConfigError, match="not the call that waits"):
        forged.resume(state, {"call_0": True})
    empty = Agent(llm, tools=tools, runtime=runtime, name="files")
    with pytest.raises(ConfigError, match="does not end with"):
        empty.resume(state, {"call_0": True})
    assert agent.history == before and empty.history == [] and ledger.ran == []

    agent.resume(state, {"call_0": True})
    with pytest.raises(ConfigError, match="resumes once"):
        agent.resume(state, {"call_0": True})
    assert ledger.ran == ["delete a"]


def test_a_paused_history_survives_json_and_resumes_on_a_new_agent(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    tools: list[Tool],
    ledger: Ledger,
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a"})), Text("Deleted."))
    first = Agent(llm, "Be careful.", tools, runtime=runtime)
    with pytest.raises(ApprovalRequired) as caught:
        first.send("go")
    saved_state, saved_history = caught.value.state.to_json(), messages_to_json(first.history)

    memory = restored(messages_from_json(saved_history))
    agent = Agent(llm, "Be careful.", tools, runtime=runtime, memory=memory)
    final = agent.resume(PausedTurn.from_json(saved_state), {"call_0": True})
    assert final.content == "Deleted." and ledger.ran == ["delete a"]
    assert PausedTurn.from_json(saved_state) == caught.value.state


def test_a_new_send_instead_of_resume_denies_the_paused_calls(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    tools: list[Tool],
    ledger: Ledger,
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a"})), Text("Something else."))
    agent = Agent(llm, tools=tools, runtime=runtime, memory=RollingWindowMemory(max_messages=50))
    with pytest.raises(ApprovalRequired) as caught:
        agent.send("delete a")
    assert agent.send("never mind; hello").content == "Something else."

    sent = llm_server.requests[1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "user"]
    assert sent[2]["content"] == denied(ABANDONED)
    assert ledger.ran == [] and strip_orphans(agent.history) == agent.history
    with pytest.raises(ConfigError):
        agent.resume(caught.value.state, {"call_0": True})


# -- the state as JSON ---------------------------------------------------------


def _state() -> PausedTurn:
    call = ToolCall("call_7", "delete_file", {"path": "ä/b", "n": [1, 2.5, None]})
    return PausedTurn(
        agent="files",
        call_ids=("call_6", "call_7"),
        requests=(ApprovalRequest(call, "Delete a file.", "files", 0),),
        decisions={"call_6": Decision(False, "no")},
        iterations=3,
        tree_iterations=5,
        usage=TokenUsage(30, 10, 40),
        loop_repeats=2,
        failed_rounds=1,
        steered=True,
    )


def test_a_state_round_trips_through_json_with_a_stable_versioned_shape() -> None:
    state = _state()
    text = state.to_json()
    assert PausedTurn.from_json(text) == state
    assert PausedTurn.from_json(text.encode()) == state
    data = json.loads(text)
    assert data["version"] == 1
    assert sorted(data) == sorted(
        [
            "version", "agent", "call_ids", "requests", "decisions", "iterations",
            "tree_iterations", "usage", "loop_repeats", "failed_rounds", "steered",
        ]
    )  # fmt: skip
    assert data["requests"][0]["call"]["arguments"] == {"path": "ä/b", "n": [1, 2.5, None]}
    assert state.waiting == ("call_7",)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: "not json", "not valid JSON"),
        (lambda d: [], "must be a JSON object"),
        (lambda d: {**d, "version": 2}, "version 2"),
        (lambda d: {**d, "agent": 1}, "'agent' must be str"),
        (lambda d: {**d, "iterations": True}, "'iterations' must be int"),
        (lambda d: {**d, "call_ids": "call_7"}, "'call_ids' must be list"),
        (lambda d: {**d, "requests": {}}, "'requests' must be list"),
        (
            lambda d: {**d, "requests": [{"call": {"id": 7}}]},
            "requests\\[0\\].call is not a valid tool call",
        ),
        (
            lambda d: {**d, "decisions": {"c": {"approved": "yes"}}},
            "not a valid decision: 'approved' must be bool",
        ),
        (
            lambda d: {**d, "usage": {"prompt": -0.5}},
            "usage is not a valid usage: 'prompt' must be int",
        ),
    ],
)
def test_a_damaged_state_is_refused_with_a_parse_error(change: Any, message: str) -> None:
    data = json.loads(_state().to_json())
    changed = change(data)
    text = changed if isinstance(changed, str) else json.dumps(changed)
    with pytest.raises(ParseError, match=message):
        PausedTurn.from_json(text)


def test_a_paused_turn_kept_in_a_session_resumes_on_a_new_agent(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    tools: list[Tool],
    ledger: Ledger,
    tmp_path: Path,
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a"})), Text("Deleted."))
    database = tmp_path / "sessions.db"
    with (
        SqliteSession(database, "c1") as session,
        Agent(llm, tools=tools, session=session) as first,
    ):
        assert first.paused_turn is None
        with pytest.raises(ApprovalRequired) as caught:
            first.send("delete a")
        assert session.load().paused_turn == caught.value.state.to_json()  # stored by the agent
        assert first.paused_turn == caught.value.state

    with (
        SqliteSession(database, "c1") as session,
        Agent(llm, tools=tools, session=session) as agent,
    ):
        state = agent.paused_turn
        assert state is not None and state.waiting == ("call_0",)
        final = agent.resume(state, {"call_0": True})
        assert final.content == "Deleted." and ledger.ran == ["delete a"]
        assert [m.role for m in session.messages()] == ["user", "assistant", "tool", "assistant"]
        assert session.load().paused_turn is None and agent.paused_turn is None


def test_a_refused_resume_keeps_the_stored_pause(
    llm_server: ScriptedLlmServer, llm: LlmClient, tools: list[Tool], tmp_path: Path
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a"})))
    with (
        SqliteSession(tmp_path / "sessions.db", "c1") as session,
        Agent(llm, tools=tools, session=session) as agent,
    ):
        with pytest.raises(ApprovalRequired) as caught:
            agent.send("delete a")
        stored = session.load().paused_turn
        foreign = replace(caught.value.state, call_ids=("call_9",))
        with pytest.raises(ConfigError):
            agent.resume(foreign, {"call_9": True})
        assert session.load().paused_turn == stored  # the real pause can still resume


def test_a_new_message_instead_of_a_resume_drops_the_stored_pause(
    llm_server: ScriptedLlmServer, llm: LlmClient, tools: list[Tool], tmp_path: Path
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a"})), Text("Fine, I will not."))
    with (
        SqliteSession(tmp_path / "sessions.db", "c1") as session,
        Agent(llm, tools=tools, session=session) as agent,
    ):
        with pytest.raises(ApprovalRequired):
            agent.send("delete a")
        assert agent.send("never mind").content == "Fine, I will not."
        assert session.load().paused_turn is None and agent.paused_turn is None
        roles = [m.role for m in session.messages()]
        assert roles == ["user", "assistant", "tool", "user", "assistant"]
