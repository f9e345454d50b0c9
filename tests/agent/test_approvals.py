"""Approving tool calls with an approver or stream events, against the scripted server.

Pausing and resuming a turn is tested in test_paused.py.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agent_smith import (
    Agent,
    AgentConfig,
    AgentStopped,
    ApprovalRequest,
    ApprovalRequested,
    CancelledError,
    ConfigError,
    Decision,
    LlmClient,
    Runtime,
    SubAgentSpec,
    Tool,
    ToolCallRequested,
    ToolMessage,
    ToolOptions,
    ToolResultReady,
    make_tool,
    strip_orphans,
    tool,
)
from agent_smith.agent.approval_gate import NO_APPROVER_BELOW_ROOT
from tests.support.approvals import (
    Ledger,
    RecordingApprover,
    denied,
    tool_contents,
)
from tests.support.background import CANCEL_BOUND, Background
from tests.support.llm_server import Calls, ScriptedLlmServer, Text

WAIT = 10.0


# -- an approver ---------------------------------------------------------------


def test_an_approved_call_runs_and_the_approver_saw_the_whole_request(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    tools: list[Tool],
    ledger: Ledger,
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a.txt"})), Text("Deleted."))
    seen: list[tuple[ApprovalRequest, str]] = []

    def approver(request: ApprovalRequest) -> bool:
        seen.append((request, threading.current_thread().name))
        return True

    agent = Agent(llm, tools=tools, runtime=runtime, name="files", approver=approver)
    assert agent.send("delete a.txt").content == "Deleted."

    assert ledger.ran == ["delete a.txt"]
    ((request, thread),) = seen
    assert thread == threading.current_thread().name  # the loop's thread
    assert (request.call_id, request.tool_name, request.arguments) == (
        "call_0",
        "delete_file",
        {"path": "a.txt"},
    )
    assert (request.description, request.agent, request.depth) == ("Delete a file.", "files", 0)
    assert tool_contents(llm_server.requests[1]) == ["deleted a.txt"]


@pytest.mark.parametrize(
    ("answer", "reason"),
    [(False, "not approved"), (Decision.deny("too risky"), "too risky"), ("no way", "no way")],
)
def test_a_denied_call_never_runs_and_the_model_reads_why(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    tools: list[Tool],
    ledger: Ledger,
    answer: Any,
    reason: str,
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a.txt"})), Text("I was not allowed."))
    agent = Agent(llm, tools=tools, runtime=runtime, approver=lambda request: answer)

    assert agent.send("delete a.txt").content == "I was not allowed."

    assert ledger.ran == []
    assert tool_contents(llm_server.requests[1]) == [denied(reason)]
    result = agent.history[2]
    assert isinstance(result, ToolMessage) and result.is_error


def test_a_mixed_round_runs_the_approved_and_unmarked_calls_together(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, ledger: Ledger
) -> None:
    both_running = threading.Barrier(2, timeout=WAIT)

    @tool(requires_approval=True)
    def write(path: str) -> str:
        """Write a file."""
        both_running.wait()  # only passes if the unmarked call runs at the same time
        ledger.add(f"write {path}")
        return "written"

    @tool
    def read(path: str) -> str:
        """Read a file."""
        both_running.wait()
        ledger.add(f"read {path}")
        return "read"

    llm_server.script(
        Calls(("write", {"path": "ok"}), ("write", {"path": "secret"}), ("read", {"path": "x"})),
        Text("Done."),
    )
    asked: list[str] = []

    def approver(request: ApprovalRequest) -> Decision:
        asked.append(request.arguments["path"])
        return Decision.approve() if request.arguments["path"] == "ok" else Decision.deny("secret")

    agent = Agent(llm, tools=[write, read], runtime=runtime, approver=approver)
    assert agent.send("go").content == "Done."

    assert asked == ["ok", "secret"]  # the unmarked call was not asked about
    assert sorted(ledger.ran) == ["read x", "write ok"]
    assert tool_contents(llm_server.requests[1]) == ["written", denied("secret"), "read"]


def test_a_predicate_asks_only_when_the_arguments_call_for_it(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    tools: list[Tool],
    ledger: Ledger,
) -> None:
    llm_server.script(Calls(("pay", {"amount": 5}), ("pay", {"amount": 500})), Text("Paid."))
    approver = RecordingApprover(False)
    agent = Agent(llm, tools=tools, runtime=runtime, approver=approver)
    agent.send("pay")
    assert [r.arguments for r in approver.asked] == [{"amount": 500}]
    assert ledger.ran == ["pay 5"]


def test_a_predicate_that_raises_asks_and_bad_arguments_are_not_asked_about(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, tools: list[Tool]
) -> None:
    def broken(args: dict[str, Any]) -> bool:
        raise KeyError("oops")

    risky = make_tool(lambda: "ran", name="risky", requires_approval=broken)
    llm_server.script(Calls(("risky", {}), ("pay", {"amount": "lots"})), Text("ok"))
    approver = RecordingApprover(True)
    agent = Agent(llm, tools=[*tools, risky], runtime=runtime, approver=approver)
    agent.send("go")
    assert [r.tool_name for r in approver.asked] == [
        "risky"
    ]  # pay's arguments do not fit its schema: the model gets that error
    ran, refused = tool_contents(llm_server.requests[1])
    assert ran == "ran" and "invalid arguments" in refused


def test_tool_options_mark_a_tool_and_a_bad_marker_is_refused(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime, ledger: Ledger
) -> None:
    def plain(path: str) -> str:
        ledger.add(path)
        return "ok"

    agent = Agent(llm, runtime=runtime, approver=lambda r: False)
    agent.add_tool(make_tool(plain), ToolOptions(requires_approval=True))
    llm_server.script(Calls(("plain", {"path": "p"})), Text("ok"))
    agent.send("go")
    assert ledger.ran == []
    with pytest.raises(ConfigError, match="requires_approval"):
        ToolOptions(requires_approval="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize("answer", ["raise", None, 3])
def test_an_approver_that_fails_or_gives_no_answer_denies(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    tools: list[Tool],
    ledger: Ledger,
    answer: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def approver(request: ApprovalRequest) -> Any:
        if answer == "raise":
            raise RuntimeError("approver bug")
        return answer

    llm_server.script(Calls(("delete_file", {"path": "a"})), Text("ok"))
    Agent(llm, tools=tools, runtime=runtime, approver=approver).send("go")
    assert ledger.ran == []
    assert "denied" in tool_contents(llm_server.requests[1])[0]
    assert "approver" in caplog.text


def test_an_approver_is_used_by_stream_too_without_events(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    tools: list[Tool],
    ledger: Ledger,
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a"})), Text("ok"))
    agent = Agent(llm, tools=tools, runtime=runtime, approver=lambda r: True)
    events = list(agent.stream("go"))
    assert not any(isinstance(e, ApprovalRequested) for e in events)
    assert ledger.ran == ["delete a"]


# -- stream events -------------------------------------------------------------


@pytest.mark.parametrize("approve", [True, False])
def test_stream_asks_with_an_event_and_waits_for_the_answer(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    tools: list[Tool],
    ledger: Ledger,
    approve: bool,
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a"}), ("look", {"path": "b"})), Text("ok"))
    agent = Agent(llm, tools=tools, runtime=runtime)
    kinds: list[str] = []
    for event in agent.stream("go"):
        if isinstance(event, (ToolCallRequested, ApprovalRequested, ToolResultReady)):
            kinds.append(type(event).__name__)
        if isinstance(event, ApprovalRequested):
            assert event.request.tool_name == "delete_file" and event.call.id == "call_0"
            assert ledger.ran == []  # nothing runs before the answer, not even "look"
            event.approve() if approve else event.deny("not today")
    assert kinds == [
        "ToolCallRequested", "ToolCallRequested", "ApprovalRequested",
        "ToolResultReady", "ToolResultReady",
    ]  # fmt: skip
    assert sorted(ledger.ran) == (["delete a", "look b"] if approve else ["look b"])
    expected = "deleted a" if approve else denied("not today")
    assert tool_contents(llm_server.requests[1]) == [expected, "saw b"]


def test_an_unanswered_stream_event_counts_as_denied_and_late_answers_are_refused(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    tools: list[Tool],
    ledger: Ledger,
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a"})), Text("ok"))
    agent = Agent(llm, tools=tools, runtime=runtime)
    events = list(agent.stream("go"))  # never answers
    (asked,) = [e for e in events if isinstance(e, ApprovalRequested)]
    assert ledger.ran == []
    assert tool_contents(llm_server.requests[1]) == [denied("no answer to the approval request")]
    with pytest.raises(ConfigError, match="already settled"):
        asked.approve()


# -- cancellation and deadlines while waiting ----------------------------------


def test_cancel_while_the_approver_waits_stops_the_turn_and_runs_nothing(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    tools: list[Tool],
    ledger: Ledger,
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a"}), ("look", {"path": "b"})))
    asking = threading.Event()
    answered = threading.Event()  # a person who never answers

    def approver(request: ApprovalRequest) -> bool:
        request.cancel.on_cancel(answered.set)  # wake up when the turn is cancelled
        asking.set()
        answered.wait(WAIT)
        return True

    agent = Agent(llm, tools=tools, runtime=runtime, approver=approver)
    job = Background(lambda: agent.send("go"))
    try:
        assert asking.wait(WAIT)
        agent.cancel()
        assert job.join(CANCEL_BOUND), "send() still waiting after cancel()"
    finally:
        answered.set()
        job.join(WAIT)
    assert isinstance(job.error, CancelledError), job.error
    assert ledger.ran == []
    results = [m for m in agent.history if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in results] == ["call_0", "call_1"]
    assert all("cancelled" in m.content for m in results)


def test_a_deadline_while_the_approver_waits_stops_the_turn(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    tools: list[Tool],
    ledger: Ledger,
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a"})))

    def approver(request: ApprovalRequest) -> bool:
        woke = threading.Event()
        request.cancel.on_cancel(woke.set)
        woke.wait(WAIT)
        return True

    agent = Agent(
        llm, tools=tools, runtime=runtime, approver=approver, config=AgentConfig(deadline=0.2)
    )
    with pytest.raises(AgentStopped) as stopped:
        agent.send("go")
    assert stopped.value.condition == "deadline"
    assert ledger.ran == [] and strip_orphans(agent.history) == agent.history


def test_breaking_out_of_a_stream_at_an_approval_leaves_the_history_whole(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    tools: list[Tool],
    ledger: Ledger,
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a"})))
    agent = Agent(llm, tools=tools, runtime=runtime)
    for event in agent.stream("go"):
        if isinstance(event, ApprovalRequested):
            break
    assert ledger.ran == []
    assert isinstance(agent.history[-1], ToolMessage)
    assert strip_orphans(agent.history) == agent.history


# -- sub-agents ----------------------------------------------------------------


def test_a_sub_agent_marked_for_approval_is_asked_about_and_denied_never_starts(
    llm_server: ScriptedLlmServer, llm: LlmClient, runtime: Runtime
) -> None:
    spec = SubAgentSpec("helper", "Helps.", system_prompt="helper", requires_approval=True)
    llm_server.script(Calls(("helper", {"task": "do it"})), Text("Did not delegate."))
    approver = RecordingApprover(Decision.deny("no delegation"))
    agent = Agent(llm, runtime=runtime, approver=approver)
    agent.add_subagent(spec)

    assert agent.send("go").content == "Did not delegate."

    ((request,),) = [approver.asked]
    assert (request.tool_name, request.arguments, request.depth) == ("helper", {"task": "do it"}, 0)
    assert len(llm_server.requests) == 2  # the child never called the model
    assert tool_contents(llm_server.requests[1]) == [denied("no delegation")]


def _delegate_a_delete(
    server: ScriptedLlmServer, tools: list[Tool], *, child_says: str
) -> SubAgentSpec:
    """A "helper" sub-agent with delete_file; the root delegates, the child calls it once."""
    server.script(
        Calls(("helper", {"task": "delete a"})),
        Calls(("delete_file", {"path": "a"})),  # the child's first round
        Text(child_says),
        Text("Done."),
    )
    return SubAgentSpec(
        "helper", "Helps.", system_prompt="helper", tool_factories=(lambda: tools[0],)
    )


def test_a_sub_agents_own_marked_call_asks_the_roots_approver(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    tools: list[Tool],
    ledger: Ledger,
) -> None:
    spec = _delegate_a_delete(llm_server, tools, child_says="child: deleted")
    threads: list[str] = []

    def approver(request: ApprovalRequest) -> bool:
        threads.append(threading.current_thread().name)
        return request.agent == "helper" and request.depth == 1

    agent = Agent(llm, runtime=runtime, approver=approver)
    agent.add_subagent(spec)
    assert agent.send("go").content == "Done."

    assert ledger.ran == ["delete a"]
    assert threads != [threading.current_thread().name]  # asked on the child's own thread
    assert tool_contents(llm_server.requests[3]) == ["child: deleted"]


def test_the_roots_approver_taking_long_does_not_time_the_sub_agents_call_out(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    tools: list[Tool],
    ledger: Ledger,
) -> None:
    timeout = 0.5  # the parent's call of the sub-agent; the person takes three times longer
    spec = _delegate_a_delete(llm_server, tools, child_says="child: deleted")

    def slow_person(request: ApprovalRequest) -> bool:
        threading.Event().wait(3 * timeout)
        return True

    config = AgentConfig(default_tool_timeout=timeout)
    agent = Agent(llm, runtime=runtime, approver=slow_person, config=config)
    agent.add_subagent(spec)
    assert agent.send("go").content == "Done."
    assert ledger.ran == ["delete a"]
    assert tool_contents(llm_server.requests[3]) == ["child: deleted"]


def test_without_an_approver_a_sub_agents_marked_call_is_denied_not_paused(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    tools: list[Tool],
    ledger: Ledger,
) -> None:
    spec = _delegate_a_delete(llm_server, tools, child_says="child: not allowed")
    agent = Agent(llm, runtime=runtime)
    agent.add_subagent(spec)
    assert agent.send("go").content == "Done."  # the root did not pause
    assert ledger.ran == []
    assert tool_contents(llm_server.requests[2]) == [denied(NO_APPROVER_BELOW_ROOT)]


def test_cancel_while_a_stream_consumer_holds_the_question_runs_nothing(
    llm_server: ScriptedLlmServer,
    llm: LlmClient,
    runtime: Runtime,
    tools: list[Tool],
    ledger: Ledger,
) -> None:
    llm_server.script(Calls(("delete_file", {"path": "a"})))
    agent = Agent(llm, tools=tools, runtime=runtime)
    canceller = threading.Thread(target=agent.cancel, name="test-cancel")
    with pytest.raises(CancelledError):
        for event in agent.stream("go"):
            if isinstance(event, ApprovalRequested):
                canceller.start()  # from another thread, while the consumer decides
                assert event.request.cancel.wait(WAIT)  # the turn's token, cancelled
                event.approve()  # too late: the turn is over
    canceller.join(WAIT)
    assert ledger.ran == []
    assert strip_orphans(agent.history) == agent.history
