"""The demo CLI's approver: ``y/N`` on the terminal before a call that needs approval runs.

The agent calls the approver on the turn's thread (or a sub-agent's), but
only the main thread may prompt: it is the one reading the terminal, and the
one Ctrl-C reaches. So :class:`TerminalApprovals` hands each request to the
REPL as a :class:`Question` (through the turn's event queue) and waits for
the main thread's answer, or for the turn to be cancelled or to end. Other
prompts of a turn (an MCP server's URL request,
:mod:`~agent_smith.cli.url_elicitation`) take the same way: any
:class:`TerminalQuestion`. The REPL calls :meth:`Question.ask`, which
settles an approval by the session's rules:

* ``--yes``: approved, with a status line saying so;
* no terminal (stdin is not a TTY) and no ``--yes``: denied, without
  reading stdin — piped input is the conversation, never an answer;
* otherwise the user is asked ``[y/N]``; anything but ``y``/``yes`` denies,
  and Ctrl-C at the prompt denies the call and cancels the reply.
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable

from ..agent.approvals import ApprovalRequest, Decision
from ..base.cancellation import CancellationToken
from ..tools.dispatch import error_payload

#: Why a call is denied when there is no terminal to ask.
NO_TERMINAL = "no terminal to ask (run agent-smith with --yes to allow such calls)"
#: Why a call is denied when the user answered no.
SAID_NO = "the user said no"

Post = Callable[[object], None]
Status = Callable[[str], None]
Read = Callable[[str], str]


class TerminalQuestion(ABC):
    """Something a worker thread needs the user to answer; asked on the main thread."""

    def __init__(self) -> None:
        self.answered = threading.Event()

    @abstractmethod
    def ask(self, *, status: Status, read: Read) -> None:
        """On the main thread: show it, read the answer (``read`` prompts), settle it.

        Ctrl-C at a prompt settles it as a refusal, then propagates (it cancels the reply).
        """


class Question(TerminalQuestion):
    """One approval request waiting for the main thread's answer."""

    def __init__(self, request: ApprovalRequest, approvals: TerminalApprovals) -> None:
        super().__init__()
        self.request = request
        self._approvals = approvals
        self._decision: Decision | None = None

    @property
    def decision(self) -> Decision | None:
        return self._decision

    def answer(self, decision: Decision) -> None:
        """Settle the question (the approver, waiting on the turn's thread, wakes up)."""
        self._decision = decision
        self.answered.set()

    def ask(self, *, status: Status, read: Read) -> None:
        """On the main thread: answer by the session's rules (see the module doc)."""
        if self.request.cancel.cancelled:
            return  # the reply was cancelled while this waited in the queue
        approvals = self._approvals
        shown = f"[approve] {describe(self.request)}"
        if approvals.assume_yes:
            status(f"{shown} -> approved (--yes)")
            self.answer(Decision.approve())
            return
        if not approvals.interactive:
            status(f"{shown} -> denied: {NO_TERMINAL}")
            self.answer(Decision.deny(NO_TERMINAL))
            return
        try:
            reply = read(f"{shown}? [y/N] ")
        except EOFError:
            reply = ""
        except KeyboardInterrupt:
            self.answer(Decision.deny("interrupted"))
            raise
        ok = reply.strip().lower() in ("y", "yes")
        self.answer(Decision.approve() if ok else Decision.deny(SAID_NO))


class TerminalApprovals:
    """The approver of the REPL's agent (see the module doc).

    ``assume_yes`` is ``--yes``; ``interactive`` whether stdin is a terminal.
    The REPL :meth:`bind`\\ s the current turn's event queue while a turn runs.
    """

    def __init__(self, *, assume_yes: bool, interactive: bool) -> None:
        self.assume_yes = assume_yes
        self.interactive = interactive
        self._post: Post | None = None
        self._lock = threading.Lock()
        self._waiting: set[TerminalQuestion] = set()

    def bind(self, post: Post | None) -> None:
        """Where questions go during a turn (``None`` between turns).

        Unbinding wakes every question still waiting: nobody will ask it now.
        """
        with self._lock:
            self._post = post
            orphans = list(self._waiting) if post is None else []
        for question in orphans:
            question.answered.set()

    def wait_for_answer(
        self, question: TerminalQuestion, *, cancel: CancellationToken | None = None
    ) -> bool:
        """Hand ``question`` to the main thread and block until it is settled.

        Also returns when ``cancel`` fires or the turn ends (the question is
        then unanswered); False at once outside a turn (nobody to ask).
        """
        with self._lock:
            post = self._post
            if post is None:
                return False
            self._waiting.add(question)
        unregister = cancel.on_cancel(question.answered.set) if cancel is not None else None
        try:
            post(question)
            # Waiting for a person has no natural bound; the main thread
            # always answers, and a cancelled or finished turn wakes us.
            question.answered.wait()
        finally:
            if unregister is not None:
                unregister()
            with self._lock:
                self._waiting.discard(question)
        return True

    def __call__(self, request: ApprovalRequest) -> Decision:
        question = Question(request, self)
        if not self.wait_for_answer(question, cancel=request.cancel):
            return Decision.deny("no one to ask outside a REPL turn")
        return question.decision or Decision.deny("the reply was cancelled")


def describe(request: ApprovalRequest) -> str:
    """One line naming the call: tool, arguments, and the sub-agent asking (if any)."""
    call = request.call
    args = call.invalid_arguments or json.dumps(call.arguments, ensure_ascii=False)
    who = f" (sub-agent {request.agent})" if request.depth else ""
    return f"{call.name} {args}{who}"


def is_denial(content: str) -> bool:
    """Whether a tool result's content is a denial (``{"error": true, "denied": true, ...}``)."""
    payload = error_payload(content)
    return payload is not None and payload.get("denied") is True
