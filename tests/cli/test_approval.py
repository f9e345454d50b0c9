"""The demo CLI's approver: y/N on the main thread, --yes, no terminal, cancellation."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agent_smith import ApprovalRequest, CancellationSource, Decision, ToolCall
from agent_smith.cli.approval import (
    NO_TERMINAL,
    SAID_NO,
    Question,
    TerminalApprovals,
    describe,
    is_denial,
)
from tests.support.approvals import denied
from tests.support.background import Background
from tests.support.scripted_input import scripted_read

pytestmark = pytest.mark.usefixtures("no_thread_leak")

WAIT = 10.0


def _request(*, depth: int = 0, cancel: CancellationSource | None = None) -> ApprovalRequest:
    call = ToolCall("call_0", "write_local_file", {"path": "a.txt", "content": "hi"})
    token = (cancel or CancellationSource()).token
    return ApprovalRequest(call, "Write a file.", "helper" if depth else "agent", depth, token)


def _ask(approvals: TerminalApprovals, *replies: str | BaseException) -> tuple[Question, Any]:
    """Ask one question as the REPL would; what was prompted and shown."""
    read, prompts = scripted_read(*replies)
    lines: list[str] = []
    question = Question(_request(), approvals)
    question.ask(status=lines.append, read=read)
    return question, (prompts, lines)


@pytest.mark.parametrize(
    ("reply", "decision"),
    [
        ("y", Decision.approve()),
        (" YES \n", Decision.approve()),
        ("n", Decision.deny(SAID_NO)),
        ("", Decision.deny(SAID_NO)),
        ("sure", Decision.deny(SAID_NO)),
        (EOFError(), Decision.deny(SAID_NO)),
    ],
)
def test_at_a_terminal_only_y_or_yes_approves(
    reply: str | BaseException, decision: Decision
) -> None:
    question, (prompts, lines) = _ask(TerminalApprovals(assume_yes=False, interactive=True), reply)
    assert question.decision == decision
    assert prompts == ['[approve] write_local_file {"path": "a.txt", "content": "hi"}? [y/N] ']
    assert lines == []


def test_ctrl_c_at_the_prompt_denies_and_goes_on_to_cancel_the_reply() -> None:
    approvals = TerminalApprovals(assume_yes=False, interactive=True)
    with pytest.raises(KeyboardInterrupt):
        _ask(approvals, KeyboardInterrupt())


def test_yes_approves_without_asking_and_says_so() -> None:
    question, (prompts, lines) = _ask(TerminalApprovals(assume_yes=True, interactive=False))
    assert question.decision == Decision.approve()
    assert prompts == []
    assert lines == [
        '[approve] write_local_file {"path": "a.txt", "content": "hi"} -> approved (--yes)'
    ]


def test_without_a_terminal_it_denies_without_reading_input() -> None:
    question, (prompts, lines) = _ask(TerminalApprovals(assume_yes=False, interactive=False))
    assert question.decision == Decision.deny(NO_TERMINAL)
    assert prompts == []
    assert lines[0].endswith(f"-> denied: {NO_TERMINAL}")


def test_the_approver_waits_on_its_thread_for_the_main_threads_answer() -> None:
    approvals = TerminalApprovals(assume_yes=False, interactive=True)
    posted: list[Question] = []
    arrived = threading.Event()

    def post(item: object) -> None:
        assert isinstance(item, Question)
        posted.append(item)
        arrived.set()

    approvals.bind(post)
    job = Background(lambda: approvals(_request()), name="test-turn")
    try:
        assert arrived.wait(WAIT)
        assert not job.done.is_set()  # still waiting for the answer
        posted[0].ask(status=lambda line: None, read=lambda prompt: "y")
        assert job.join(WAIT)
    finally:
        if posted:
            posted[0].answer(Decision.deny("test over"))
        job.join(WAIT)
    assert job.result == Decision.approve()


def test_a_cancelled_turn_wakes_the_approver_and_its_question_is_never_asked() -> None:
    approvals = TerminalApprovals(assume_yes=False, interactive=True)
    posted: list[object] = []
    arrived = threading.Event()

    def post(item: object) -> None:
        posted.append(item)
        arrived.set()

    approvals.bind(post)
    cancel = CancellationSource()
    request = _request(cancel=cancel)
    job = Background(lambda: approvals(request), name="test-turn")
    try:
        assert arrived.wait(WAIT)  # the approver is waiting for the main thread
        cancel.cancel()
        assert job.join(WAIT), "the approver kept waiting after the turn was cancelled"
    finally:
        for question in posted:
            assert isinstance(question, Question)
            question.answer(Decision.deny("test over"))
        job.join(WAIT)
    assert job.result == Decision.deny("the reply was cancelled")
    stale = Question(request, approvals)
    stale.ask(status=pytest.fail, read=pytest.fail)  # nothing shown, nothing read
    assert stale.decision is None


def test_outside_a_turn_nobody_is_asked() -> None:
    approvals = TerminalApprovals(assume_yes=True, interactive=True)
    assert approvals(_request()).approved is False


def test_a_sub_agents_request_names_it_and_denials_are_recognised() -> None:
    assert describe(_request(depth=1)).endswith("(sub-agent helper)")
    assert is_denial(denied("no"))
    assert not is_denial('{"error": true, "message": "boom"}')
    assert not is_denial("plain text") and not is_denial("{not json")
