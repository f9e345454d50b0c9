"""Guardrails: plain synchronous checks on a turn's input, its final answer and its tool calls.

A guardrail is a function that looks at one thing and returns a
:class:`GuardrailVerdict` (``None`` allows):

* **input** guardrails get the turn's :class:`~agent_smith.UserMessage`
  before the first model call, or beside it (``input_beside_model``: they
  run on a worker while the model answers, and a trip cancels the call).
  Allowed verdicts: allow, trip.
* **output** guardrails get the final :class:`~agent_smith.AssistantMessage`
  (its ``output`` set with a typed output) before it is recorded. Allowed:
  allow, trip, feedback (the answer and the feedback go into the history and
  the model tries again, at most ``output_retries`` times; then it trips).
* **tool-call** guardrails get each :class:`~agent_smith.ToolCall` before
  it is recorded, approved or dispatched. Allowed: allow, block (the call is
  not run; the model reads ``denied: <message>`` as its result), rewrite
  (the call's arguments are replaced, in the history too), trip.

A trip raises :class:`~agent_smith.errors.GuardrailTripped`; the history
keeps the user's message and never the tripped answer. A guardrail that
raises counts as a trip (a block for a tool call): they fail closed. Each
verdict is a :class:`GuardrailChecked` stream event and an
``agent_smith.guardrail`` event on the turn's span. An agent without
guardrails runs none of this.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import Any

from ..errors import ConfigError, GuardrailTripped
from ..messages import AssistantMessage, ToolCall, UserMessage
from ..observer import get_observer
from .events import GuardrailAction, GuardrailChecked, Stage

log = logging.getLogger(__name__)


_ALLOWED: dict[str, frozenset[str]] = {
    "input": frozenset({"allow", "trip"}),
    "output": frozenset({"allow", "trip", "feedback"}),
    "tool_call": frozenset({"allow", "trip", "block", "rewrite"}),
}


@dataclass(frozen=True)
class GuardrailVerdict:
    """What a guardrail decided: ``action``, the ``message`` that says why, new ``arguments``.

    Make one with :meth:`allow`, :meth:`trip`, :meth:`feedback`, :meth:`block`
    or :meth:`rewrite`.
    """

    action: GuardrailAction = "allow"
    message: str = ""
    arguments: Mapping[str, Any] | None = None

    @classmethod
    def allow(cls) -> GuardrailVerdict:
        """Let it through (the same as returning None)."""
        return cls()

    @classmethod
    def trip(cls, reason: str) -> GuardrailVerdict:
        """Stop the turn: :class:`~agent_smith.errors.GuardrailTripped` with ``reason``."""
        return cls("trip", reason)

    @classmethod
    def feedback(cls, message: str) -> GuardrailVerdict:
        """(Output) Tell the model ``message`` and let it answer again."""
        return cls("feedback", message)

    @classmethod
    def block(cls, message: str) -> GuardrailVerdict:
        """(Tool call) Do not run the call; the model reads ``message`` as its error result."""
        return cls("block", message)

    @classmethod
    def rewrite(cls, arguments: Mapping[str, Any]) -> GuardrailVerdict:
        """(Tool call) Run the call with ``arguments`` instead."""
        return cls("rewrite", "arguments rewritten", dict(arguments))


InputGuardrail = Callable[[UserMessage], "GuardrailVerdict | None"]
OutputGuardrail = Callable[[AssistantMessage], "GuardrailVerdict | None"]
ToolCallGuardrail = Callable[[ToolCall], "GuardrailVerdict | None"]


@dataclass(frozen=True)
class Guardrails:
    """An agent's guardrails (see the module doc): ``Agent(guardrails=Guardrails(...))``."""

    input: Sequence[InputGuardrail] = ()
    output: Sequence[OutputGuardrail] = ()
    tool_calls: Sequence[ToolCallGuardrail] = ()
    input_beside_model: bool = False
    output_retries: int = 2

    def __post_init__(self) -> None:
        if isinstance(self.output_retries, bool) or self.output_retries < 0:
            raise ConfigError("Guardrails.output_retries must not be negative")
        for check in (*self.input, *self.output, *self.tool_calls):
            if not callable(check):
                raise ConfigError(f"a guardrail must be a function, got {check!r}")


class TurnGuardrails:
    """One turn's guardrail checks; the loop yields from them (see the module doc)."""

    __slots__ = ("_agent", "_feedbacks", "_guardrails", "_pending")

    def __init__(self, guardrails: Guardrails, agent: str) -> None:
        self._guardrails = guardrails
        self._agent = agent
        self._feedbacks = 0
        self._pending: Future[list[GuardrailChecked]] | None = None

    @property
    def beside_model(self) -> bool:
        """Whether the input guardrails run beside the first model call."""
        return self._guardrails.input_beside_model and bool(self._guardrails.input)

    def check_input(self, message: UserMessage) -> Generator[GuardrailChecked, None, None]:
        """Run the input guardrails; yield their verdicts; raise GuardrailTripped on a trip."""
        yield from _settled(self._input_verdicts(message), self._agent)

    def start_input(
        self,
        message: UserMessage,
        submit: Callable[[Callable[[], list[GuardrailChecked]]], Future[list[GuardrailChecked]]],
        on_trip: Callable[[GuardrailTripped], None],
    ) -> None:
        """Run the input guardrails on a worker (``submit``); ``on_trip`` cancels the model call."""

        def run() -> list[GuardrailChecked]:
            verdicts = self._input_verdicts(message)
            tripped = _tripped(verdicts, self._agent)
            if tripped is not None:
                on_trip(tripped)
            return verdicts

        self._pending = submit(run)

    def finish_input(self) -> Generator[GuardrailChecked, None, None]:
        """Wait for input guardrails started beside the model; as :meth:`check_input`."""
        pending, self._pending = self._pending, None
        if pending is not None:
            yield from _settled(pending.result(), self._agent)

    def check_output(self, answer: AssistantMessage) -> list[GuardrailChecked]:
        """The output guardrails' verdicts on ``answer``; raise GuardrailTripped on a trip.

        A feedback verdict past ``output_retries`` trips.
        """
        verdicts = [
            _verdict("output", check, answer, None, self._agent)[0]
            for check in self._guardrails.output
        ]
        tripped = _tripped(verdicts, self._agent)
        if tripped is not None:
            raise tripped
        feedback = feedback_of(verdicts)
        if feedback is not None:
            self._feedbacks += 1
            if self._feedbacks > self._guardrails.output_retries:
                raise _trip(self._agent, verdicts[-1], f"still refused after feedback: {feedback}")
        return verdicts

    def check_calls(
        self, calls: Sequence[ToolCall]
    ) -> tuple[tuple[ToolCall, ...], dict[str, str], list[GuardrailChecked]]:
        """The calls (rewritten), the blocked ones (id -> message) and the verdicts.

        Raises GuardrailTripped on a trip.
        """
        out: list[ToolCall] = []
        blocked: dict[str, str] = {}
        verdicts: list[GuardrailChecked] = []
        for call in calls:
            for check in self._guardrails.tool_calls:
                checked, verdict = _verdict("tool_call", check, call, call.id, self._agent)
                verdicts.append(checked)
                if checked.action == "trip":
                    raise _trip(self._agent, checked, checked.message)
                if checked.action == "block":
                    blocked[call.id] = (
                        f"blocked by guardrail {checked.guardrail}: {checked.message}"
                    )
                    break
                if checked.action == "rewrite" and verdict is not None:
                    call = replace(
                        call, arguments=dict(verdict.arguments or {}), invalid_arguments=None
                    )
            out.append(call)
        return tuple(out), blocked, verdicts

    def screen(
        self, message: AssistantMessage, *, final: bool
    ) -> Generator[
        GuardrailChecked, None, tuple[AssistantMessage, Mapping[str, str], UserMessage | None]
    ]:
        """A reply before it is recorded: its calls checked, or (``final``) its answer.

        Returns the reply (calls rewritten), the blocked calls (id -> why) and
        the feedback to record after it (None: the answer stands).
        """
        if message.tool_calls:
            if not self._guardrails.tool_calls:
                return message, {}, None
            calls, blocked, verdicts = self.check_calls(message.tool_calls)
            yield from verdicts
            if calls != message.tool_calls:  # rewritten
                message = replace(message, tool_calls=calls)
            return message, blocked, None
        if not final or not self._guardrails.output:
            return message, {}, None
        verdicts = self.check_output(message)
        yield from verdicts
        feedback = feedback_of(verdicts)
        return message, {}, UserMessage(feedback) if feedback is not None else None

    def _input_verdicts(self, message: UserMessage) -> list[GuardrailChecked]:
        return [
            _verdict("input", check, message, None, self._agent)[0]
            for check in self._guardrails.input
        ]


def feedback_of(verdicts: Sequence[GuardrailChecked]) -> str | None:
    """The feedback the output verdicts give the model (joined), or None."""
    said = [v.message for v in verdicts if v.action == "feedback"]
    return "\n".join(said) if said else None


def _settled(
    verdicts: list[GuardrailChecked], agent: str
) -> Generator[GuardrailChecked, None, None]:
    yield from verdicts
    tripped = _tripped(verdicts, agent)
    if tripped is not None:
        raise tripped


def _tripped(verdicts: Sequence[GuardrailChecked], agent: str) -> GuardrailTripped | None:
    for checked in verdicts:
        if checked.action == "trip":
            return _trip(agent, checked, checked.message)
    return None


def _trip(agent: str, checked: GuardrailChecked, reason: str) -> GuardrailTripped:
    who = f"agent {agent!r}: " if agent else ""
    return GuardrailTripped(
        f"{who}{checked.stage} guardrail {checked.guardrail!r} tripped: {reason}",
        guardrail=checked.guardrail,
        stage=checked.stage,
        reason=reason,
    )


def _verdict(
    stage: Stage,
    check: Callable[[Any], GuardrailVerdict | None],
    subject: object,
    call_id: str | None,
    agent: str,
) -> tuple[GuardrailChecked, GuardrailVerdict | None]:
    name = getattr(check, "__name__", type(check).__name__)
    try:
        verdict = check(subject)
    except Exception as err:  # a broken guardrail fails closed
        log.warning("agent %s: %s guardrail %r raised", agent, stage, name, exc_info=True)
        action: GuardrailAction = "block" if stage == "tool_call" else "trip"
        verdict = GuardrailVerdict(action, f"the guardrail failed: {type(err).__name__}")
    if verdict is None:
        verdict = GuardrailVerdict()
    if not isinstance(verdict, GuardrailVerdict) or verdict.action not in _ALLOWED[stage]:
        raise ConfigError(f"{stage} guardrail {name!r} returned {verdict!r}")
    checked = GuardrailChecked(stage, name, verdict.action, verdict.message, call_id)
    get_observer().on_guardrail(stage, name, verdict.action, call_id)
    if verdict.action != "allow":
        log.info(
            "agent %s: %s guardrail %r: %s %s", agent, stage, name, verdict.action, verdict.message
        )
    return checked, verdict
