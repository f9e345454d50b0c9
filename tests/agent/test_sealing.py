"""Sealed paused turns: a state that went through a client cannot be forged or replayed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agent_smith import (
    Agent,
    AgentConfig,
    ApprovalRequired,
    ConfigError,
    LlmClient,
    PausedTurn,
    PausedTurnMismatch,
    Runtime,
    SqliteSession,
    Tool,
    messages_from_json,
    messages_to_json,
)
from tests.support.approvals import Ledger, denied, restored, tool_contents
from tests.support.llm_server import Calls, ScriptedLlmServer, Text

KEY = b"application key, 32 bytes long.."
SEALED = AgentConfig(approval_key=KEY)


def through_client(state: PausedTurn) -> PausedTurn:
    """What comes back from a client that kept the state as JSON text."""
    return PausedTurn.from_json(state.to_json())


def forged(state: PausedTurn, change: Any) -> PausedTurn:
    data = json.loads(state.to_json())
    change(data)
    return PausedTurn.from_json(json.dumps(data))


@pytest.fixture
def session(tmp_path: Path) -> Iterator[SqliteSession]:
    with SqliteSession(tmp_path / "sessions.db", "c1") as opened:
        yield opened


def paused(agent: Agent, text: str = "go") -> PausedTurn:
    with pytest.raises(ApprovalRequired) as caught:
        agent.send(text)
    return caught.value.state


@pytest.fixture
def sealed_pause(
    llm_server: ScriptedLlmServer, llm: LlmClient, tools: list[Tool], session: SqliteSession
) -> tuple[Agent, PausedTurn]:
    """A sealed agent on ``session`` paused before deleting "a" (then it answers "Deleted.")."""
    llm_server.script(Calls(("delete_file", {"path": "a"})), Text("Deleted."))
    agent = Agent(llm, tools=tools, config=SEALED, session=session)
    return agent, paused(agent)


def test_a_sealed_pause_resumes_after_a_round_trip_through_a_client(
    sealed_pause: tuple[Agent, PausedTurn], ledger: Ledger
) -> None:
    agent, state = sealed_pause
    data = json.loads(state.to_json())
    assert data["session"] == "c1" and len(data["seal"]) == 64
    assert agent.resume(through_client(state), {"call_0": True}).content == "Deleted."
    assert ledger.ran == ["delete a"]


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["requests"][0]["call"]["arguments"].update(path="/etc/passwd"),
        lambda d: d.update(decisions={"call_1": {"approved": True}}),
        lambda d: d.update(iterations=1, tree_iterations=1, loop_repeats=0),
        lambda d: d.update(revision=d["revision"] + 1),
        lambda d: d.update(seal="0" * 64),
        lambda d: [d.pop(key) for key in ("seal", "session", "revision")],
    ],
    ids=["arguments", "decisions", "counters", "revision", "seal", "unsealed"],
)
def test_a_changed_or_unsealed_state_is_refused_and_changes_nothing(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    tools: list[Tool],
    ledger: Ledger,
    change: Any,
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a"}), ("look", {"path": "b"})))
    agent = Agent(llm, tools=tools, config=SEALED)
    state = paused(agent)
    history = agent.history
    with pytest.raises(PausedTurnMismatch):
        agent.resume(forged(state, change), {"call_0": True})
    assert ledger.ran == [] and agent.history == history
    assert len(llm_server.requests) == 1


def test_a_state_sealed_with_another_key_or_for_another_session_is_refused(
    llm_server: ScriptedLlmServer, llm: LlmClient, tools: list[Tool], tmp_path: Path
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a"})), Calls(("delete_file", {"path": "a"})))
    with (
        SqliteSession(tmp_path / "s.db", "mine") as mine,
        SqliteSession(tmp_path / "s.db", "theirs") as theirs,
    ):
        other_key = AgentConfig(approval_key=b"another key of 32 bytes........")
        state = paused(Agent(llm, tools=tools, config=other_key, session=mine))
        with pytest.raises(PausedTurnMismatch, match="does not verify"):
            Agent(llm, tools=tools, config=SEALED, session=mine).resume(state, {"call_0": True})
        their_state = paused(Agent(llm, tools=tools, config=SEALED, session=theirs))
        with pytest.raises(PausedTurnMismatch, match="sealed for session 'theirs'"):
            Agent(llm, tools=tools, config=SEALED, session=mine).resume(
                replace(their_state), {"call_0": True}
            )


def test_a_pause_resumed_once_cannot_be_replayed(
    sealed_pause: tuple[Agent, PausedTurn], ledger: Ledger
) -> None:
    agent, state = sealed_pause
    agent.resume(state, {"call_0": True})
    with pytest.raises(PausedTurnMismatch, match="resumed, abandoned or paused again"):
        agent.resume(state, {"call_0": True})
    assert ledger.ran == ["delete a"]


def test_without_a_session_a_resumed_pause_is_refused_by_the_history(
    llm_server: ScriptedLlmServer, llm: LlmClient, tools: list[Tool], ledger: Ledger
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a"})), Text("Deleted."))
    agent = Agent(llm, tools=tools, config=SEALED)
    state = paused(agent)
    saved = messages_to_json(agent.history)
    agent.resume(state, {"call_0": True})
    with pytest.raises(PausedTurnMismatch, match="does not end with the paused turn"):
        agent.resume(state, {"call_0": True})
    # A server that keeps no session gets the history back from its client
    # with the state: the seal still holds the decisions and calls fixed.
    replayed = Agent(llm, tools=tools, config=SEALED, memory=restored(messages_from_json(saved)))
    with pytest.raises(PausedTurnMismatch):
        replayed.resume(forged(state, lambda d: d.update(iterations=0)), {"call_0": True})
    assert ledger.ran == ["delete a"]


def test_a_pause_superseded_by_a_later_pause_is_refused(
    llm_server: ScriptedLlmServer, llm: LlmClient, tools: list[Tool], session: SqliteSession
) -> None:
    llm_server.script(
        Calls(("delete_file", {"path": "a"}), ("delete_file", {"path": "b"})), Text("ok")
    )
    agent = Agent(llm, tools=tools, config=SEALED, session=session)
    first = paused(agent)
    with pytest.raises(ApprovalRequired) as again:
        agent.resume(first, {"call_1": True})
    with pytest.raises(PausedTurnMismatch):
        agent.resume(first, {"call_0": True})  # the stored pause is the second one now
    agent.resume(again.value.state, {"call_0": False})


def test_parallel_calls_decided_one_by_one_land_on_their_own_calls(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    tools: list[Tool],
    ledger: Ledger,
    runtime: Runtime,
) -> None:
    llm_server.script(
        Calls(
            ("delete_file", {"path": "a"}),
            ("delete_file", {"path": "b"}),
            ("pay", {"amount": 500}),
            ("look", {"path": "c"}),
        ),
        Text("Done."),
    )
    agent = Agent(llm, tools=tools, config=SEALED, runtime=runtime)
    state = paused(agent)
    assert state.waiting == ("call_0", "call_1", "call_2")
    for call_id, decision in (("call_1", True), ("call_2", "over budget")):
        with pytest.raises(ApprovalRequired) as again:
            agent.resume(through_client(state), {call_id: decision})
        state = again.value.state
    assert state.waiting == ("call_0",) and ledger.ran == []
    assert agent.resume(through_client(state), {"call_0": False}).content == "Done."
    assert sorted(ledger.ran) == ["delete b", "look c"]
    assert tool_contents(llm_server.requests[1]) == [
        denied("not approved"),
        "deleted b",
        denied("over budget"),
        "saw c",
    ]
    results = {m.tool_call_id: m.content for m in agent.history if m.role == "tool"}
    assert results == dict(
        zip(
            ["call_0", "call_1", "call_2", "call_3"],
            tool_contents(llm_server.requests[1]),
            strict=True,
        )
    )


def test_the_key_is_checked_and_never_shown() -> None:
    assert KEY.decode() not in repr(SEALED)
    with pytest.raises(ConfigError, match="approval_key"):
        AgentConfig(approval_key=b"short")
    with pytest.raises(ConfigError, match="approval_key"):
        AgentConfig(approval_key="a text key of more than 16 chars")  # type: ignore[arg-type]


def test_without_a_key_an_unsealed_state_resumes_as_before(
    llm_server: ScriptedLlmServer, llm: LlmClient, tools: list[Tool], ledger: Ledger
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a"})), Text("Deleted."))
    agent = Agent(llm, tools=tools)
    state = paused(agent)
    assert "seal" not in json.loads(state.to_json())
    memory = restored(agent.history)
    fresh = Agent(llm, tools=tools, memory=memory)
    assert fresh.resume(through_client(state), {"call_0": True}).content == "Deleted."
